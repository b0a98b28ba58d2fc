#!/usr/bin/env node
/**
 * Builds the Lambda zips the Terraform modules deploy: esbuild bundles lambda/src/read-handler.ts,
 * write-handler.ts and role-bootstrap.ts (the database-role bootstrap) for Node.js 24 on arm64 (the settings lib/database-consumer-function.ts gives
 * NodejsFunction: minified, source map, everything bundled but pg's optional native binding), and each
 * bundle becomes dist/lambda/<name>.zip holding index.js (+ index.js.map), handler `index.handler`.
 *
 * The zips are reproducible (fixed timestamps and order), so `filebase64sha256` and the Lambda code
 * hash change only when the code does.
 *
 *   npx ts-node --transpile-only bin/build-lambda.ts [outDir]
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { buildSync } from 'esbuild';

const ROOT = path.join(__dirname, '..');
export const LAMBDA_HANDLERS = ['read-handler', 'write-handler', 'role-bootstrap'] as const;

/** Builds every handler's zip into outDir and returns their paths. */
export function buildLambdaZips(outDir = path.join(ROOT, 'dist', 'lambda')): string[] {
  const zips: string[] = [];
  fs.mkdirSync(outDir, { recursive: true });
  for (const name of LAMBDA_HANDLERS) {
    const work = path.join(outDir, name);
    fs.rmSync(work, { recursive: true, force: true });
    fs.mkdirSync(work, { recursive: true });
    buildSync({
      entryPoints: [path.join(ROOT, 'lambda', 'src', `${name}.ts`)],
      outfile: path.join(work, 'index.js'),
      bundle: true,
      platform: 'node',
      target: 'node24',
      format: 'cjs',
      minify: true,
      sourcemap: true,
      external: ['pg-native'],
      logLevel: 'warning',
      // No timestamps or absolute paths in the output.
      sourceRoot: '',
      absWorkingDir: ROOT,
    });
    const zip = path.join(outDir, `${name}.zip`);
    fs.rmSync(zip, { force: true });
    for (const file of ['index.js', 'index.js.map']) fs.utimesSync(path.join(work, file), 315532800, 315532800);
    // -X: no extra attributes; fixed mtimes above: the same code gives the same zip.
    execFileSync('zip', ['-q', '-X', '-D', zip, 'index.js', 'index.js.map'], { cwd: work });
    fs.rmSync(work, { recursive: true, force: true });
    zips.push(zip);
  }
  return zips;
}

function main(): void {
  for (const zip of buildLambdaZips(path.resolve(process.argv[2] ?? path.join(ROOT, 'dist', 'lambda')))) {
    process.stdout.write(`${path.relative(ROOT, zip)} ${fs.statSync(zip).size} bytes\n`);
  }
}

if (require.main === module) main();
