#!/usr/bin/env node
// `npx aurora-proxy-kit <command>`. In the kit's repository it runs the TypeScript sources through
// ts-node (a devDependency); the npm package ships the CLI compiled into dist/cdk/cli instead.
'use strict';
const fs = require('fs');
const path = require('path');

const root = path.join(__dirname, '..');
const source = path.join(root, 'lib', 'cli', 'main.ts');
if (fs.existsSync(source)) {
  // The kit's tsconfig, wherever the command is run from.
  require('ts-node').register({ project: path.join(root, 'tsconfig.json'), transpileOnly: true });
  require(source);
} else {
  require(path.join(root, 'dist', 'cdk', 'cli', 'index.js'));
}
