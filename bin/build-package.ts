#!/usr/bin/env node
/**
 * Builds what the npm package ships into dist/cdk (lib/packaging/npm-package.ts does the work). npm runs
 * it before packing (`prepack`); `make package` packs the tarball and the release's Lambda zips.
 *
 *   npx ts-node --transpile-only bin/build-package.ts
 */
import * as path from 'path';
import { buildPackage, PACKAGE_BUILD_DIR } from '../lib/packaging/npm-package';
import { ROOT } from '../lib/packaging/handler-bundles';

buildPackage();
process.stdout.write(`built ${path.relative(ROOT, PACKAGE_BUILD_DIR)}\n`);
