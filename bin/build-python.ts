#!/usr/bin/env node
/**
 * Builds the Python package of the construct library into dist/python (lib/packaging/python-package.ts
 * does the work: jsii-pacmak from the jsii assembly and the npm tarball); `make package` runs it.
 *
 *   npx ts-node --transpile-only bin/build-python.ts [--force]
 */
import * as path from 'path';
import { ROOT } from '../lib/packaging/handler-bundles';
import { buildPythonPackage } from '../lib/packaging/python-package';

process.stdout.write(`${path.relative(ROOT, buildPythonPackage({ force: process.argv.includes('--force') }))}\n`);
