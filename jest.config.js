/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.tsx?$': 'ts-jest',
  },
  // Synthesizing stacks and bundling Lambdas is slow on 2 cores.
  testTimeout: 120000,
  maxWorkers: 2,
};
