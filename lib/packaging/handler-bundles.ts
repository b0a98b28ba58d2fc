import { createHash } from 'crypto';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { buildSync } from 'esbuild';
import { HANDLER_BUNDLING, KIT_HANDLERS, LAMBDA_SOURCE_DIR, type KitHandler } from '../private/handler-function';

/**
 * The kit's handlers bundled once, the way the constructs bundle them at synth (HANDLER_BUNDLING):
 * as directories (index.js + index.js.map) for the npm package, and as zips for the Terraform modules
 * and the release. The zips are reproducible (fixed timestamps, modes and order), so the same code
 * gives the same SHA-256 on any machine, and `filebase64sha256` and the Lambda code hash change only
 * when the code does.
 */
export const ROOT = path.join(__dirname, '..', '..');
export const LAMBDA_ZIP_DIR = path.join(ROOT, 'dist', 'lambda');
/** `sha256sum -c` format: `<hex>  <file>`. */
export const CHECKSUMS_FILE = 'SHA256SUMS';
/** Per zip: hex and base64 SHA-256 (the latter is what a module's source_code_hash takes), handler, runtime, architecture. */
export const ARTIFACTS_FILE = 'lambda-artifacts.json';

/** 1980-01-01, the earliest time a zip entry can hold. */
const FIXED_MTIME = 315532800;

/** Bundles one handler into `<outDir>/<handler>/index.js` (+ index.js.map); returns that directory. */
export function bundleHandler(handler: KitHandler, outDir: string): string {
  const dir = path.join(outDir, handler);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  buildSync({
    entryPoints: [path.join(LAMBDA_SOURCE_DIR, `${handler}.ts`)],
    outfile: path.join(dir, 'index.js'),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: HANDLER_BUNDLING.target,
    minify: HANDLER_BUNDLING.minify,
    sourcemap: HANDLER_BUNDLING.sourceMap,
    external: [...HANDLER_BUNDLING.externalModules],
    logLevel: 'warning',
    // No timestamps or absolute paths in the output.
    sourceRoot: '',
    absWorkingDir: ROOT,
  });
  for (const file of fs.readdirSync(dir)) {
    fs.chmodSync(path.join(dir, file), 0o644);
    fs.utimesSync(path.join(dir, file), FIXED_MTIME, FIXED_MTIME);
  }
  return dir;
}

/** Every handler bundled into `<outDir>/<handler>/`. */
export function bundleHandlers(outDir: string): string[] {
  return KIT_HANDLERS.map((handler) => bundleHandler(handler, outDir));
}

export interface LambdaArtifact {
  readonly file: string;
  readonly sha256: string;
  readonly base64sha256: string;
  readonly handler: 'index.handler';
  readonly runtime: 'nodejs24.x';
  readonly architectures: ['arm64'];
}

/**
 * Builds `<outDir>/<handler>.zip` for every handler (index.js + index.js.map, handler `index.handler`)
 * and the release's checksum files beside them; returns the zips' paths.
 */
export function buildLambdaZips(outDir = LAMBDA_ZIP_DIR): string[] {
  fs.mkdirSync(outDir, { recursive: true });
  // Built in a private directory and renamed into place: a reader (or a second build running at the same
  // time, as parallel test workers may start one) never sees a zip half written.
  const staging = fs.mkdtempSync(path.join(outDir, '.build-'));
  const artifacts: LambdaArtifact[] = [];
  try {
    for (const handler of KIT_HANDLERS) {
      const work = bundleHandler(handler, staging);
      const staged = path.join(staging, `${handler}.zip`);
      // -X: no extra attributes (uid, gid, times); -D: no directory entries.
      // zip stores local times: UTC, so the zip is the same in every time zone.
      execFileSync('zip', ['-q', '-X', '-D', staged, 'index.js', 'index.js.map'], { cwd: work, env: { ...process.env, TZ: 'UTC' } });
      const digest = createHash('sha256').update(fs.readFileSync(staged)).digest();
      fs.renameSync(staged, path.join(outDir, `${handler}.zip`));
      artifacts.push({
        file: `${handler}.zip`,
        sha256: digest.toString('hex'),
        base64sha256: digest.toString('base64'),
        handler: 'index.handler',
        runtime: 'nodejs24.x',
        architectures: ['arm64'],
      });
    }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  fs.writeFileSync(path.join(outDir, CHECKSUMS_FILE), artifacts.map((a) => `${a.sha256}  ${a.file}\n`).join(''));
  fs.writeFileSync(path.join(outDir, ARTIFACTS_FILE), `${JSON.stringify(Object.fromEntries(artifacts.map(({ file, ...rest }) => [file, rest])), null, 2)}\n`);
  return artifacts.map((a) => path.join(outDir, a.file));
}
