#!/usr/bin/env node
/**
 * Builds packages/cdktn for publishing: esbuild bundles src/index.ts with the kit's model (lib/model,
 * which the sources import from this repository) into dist/index.js, leaving cdktn and constructs to the
 * user's installation (peer dependencies); tsc writes the declarations into dist/types.
 *
 *   npx ts-node --transpile-only bin/build-cdktn.ts [outDir]     # make cdktn-build
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { buildSync } from 'esbuild';

const ROOT = path.join(__dirname, '..');
export const CDKTN_DIR = path.join(ROOT, 'packages', 'cdktn');

/** Bundles the package into outDir/index.js; returns its path. */
export function bundleCdktnPackage(outDir = path.join(CDKTN_DIR, 'dist')): string {
  const outfile = path.join(outDir, 'index.js');
  buildSync({
    entryPoints: [path.join(CDKTN_DIR, 'src', 'index.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: ['cdktn', 'constructs'],
    logLevel: 'warning',
    absWorkingDir: ROOT,
  });
  return outfile;
}

function main(): void {
  const outDir = path.resolve(process.argv[2] ?? path.join(CDKTN_DIR, 'dist'));
  fs.rmSync(outDir, { recursive: true, force: true });
  const bundle = bundleCdktnPackage(outDir);
  execFileSync('npx', ['tsc', '-p', path.join(CDKTN_DIR, 'tsconfig.json'), '--outDir', path.join(outDir, 'types')], { cwd: ROOT, stdio: 'inherit' });
  process.stdout.write(`${path.relative(ROOT, bundle)} ${fs.statSync(bundle).size} bytes, declarations in ${path.relative(ROOT, path.join(outDir, 'types'))}\n`);
}

if (require.main === module) main();
