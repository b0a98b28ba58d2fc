/**
 * Two projects, split by directory once here: `unit` is every suite that runs on a bare machine after
 * `npm install` (no root, no PostgreSQL, no PgBouncer build, no namespaces, no Terraform, no package builds);
 * `integration` is test/integration/, the suites that start real servers or tools. `npx jest` runs both;
 * `npx jest --selectProjects unit` (make check) the first.
 */
const common = {
  testEnvironment: 'node',
  testMatch: ['**/*.test.ts'],
  // SWC strips the types, several times faster than TypeScript's own per-file transpile; `make typecheck`
  // (tsc --noEmit) checks them.
  transform: {
    '^.+\\.tsx?$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' }, sourceMaps: 'inline' }],
  },
};

/** @type {import('jest').Config} */
module.exports = {
  maxWorkers: 2,
  // Synthesizing stacks and bundling Lambdas is slow on 2 cores. A global option: a project's own is not read.
  testTimeout: 120000,
  projects: [
    { ...common, displayName: 'unit', roots: ['<rootDir>/test'], setupFiles: ['<rootDir>/test/support/unit-setup.ts'], testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/integration/'] },
    { ...common, displayName: 'integration', roots: ['<rootDir>/test/integration'] },
  ],
};
