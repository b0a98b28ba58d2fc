#!/usr/bin/env node
/**
 * Builds what the npm package ships into dist/cdk and .jsii (lib/packaging/npm-package.ts does the work:
 * jsii, then the pre-bundled handlers), unless they are built from the current sources. npm runs it
 * before packing (`prepack`); `make package` packs the tarball, the Python wheel and the Lambda zips.
 *
 *   npx ts-node --transpile-only bin/build-package.ts [--force]
 */
import * as path from 'path';
import { buildPackage, PACKAGE_BUILD_DIR } from '../lib/packaging/npm-package';
import { ROOT } from '../lib/packaging/handler-bundles';

const built = buildPackage({ force: process.argv.includes('--force') });
process.stdout.write(`${built ? 'built' : 'up to date:'} ${path.relative(ROOT, PACKAGE_BUILD_DIR)}\n`);
