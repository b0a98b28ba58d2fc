import { createHash } from 'crypto';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { KIT_HANDLERS } from '../private/handler-function';
import { bundleCli } from './cli-bundle';
import { bundleHandlers, ROOT } from './handler-bundles';

/**
 * The npm package's contents, built into dist/cdk (package.json `files`) and `.jsii`: the construct
 * library compiled by jsii (lib/index.ts and what it imports: the model, the constructs' helpers, the
 * consumers' environment contract; JavaScript and .d.ts, tsconfig.build.json), its jsii assembly, from
 * which jsii-pacmak makes the Python package (python-package.ts), every handler pre-bundled under
 * dist/cdk/assets/lambda, where lib/private/handler-function.ts looks for them, and the command line's
 * summaries bundled into dist/cdk/cli/index.js (bin/aurora-proxy-kit.js runs it). Nothing of the
 * rehearsal, the bench, the Terraform generator, the reference app or the tests is compiled: they are
 * not imported by lib/index.ts, and tsconfig.build.json lists that file alone.
 */
export const PACKAGE_BUILD_DIR = path.join(ROOT, 'dist', 'cdk');
export const PACKAGE_ASSETS_DIR = path.join(PACKAGE_BUILD_DIR, 'assets', 'lambda');
export const PACKAGE_CLI_FILE = path.join(PACKAGE_BUILD_DIR, 'cli', 'index.js');
export const JSII_ASSEMBLY = path.join(ROOT, '.jsii');
/** The inputs' digest the last build was made from; a build with the same inputs is skipped. */
const FINGERPRINT_FILE = path.join(PACKAGE_BUILD_DIR, '.fingerprint');

/** The sources lib/index.ts imports, itself included, transitively: what jsii compiles. */
function libraryClosure(entry = 'lib/index.ts', seen = new Set<string>()): Set<string> {
  if (seen.has(entry)) return seen;
  seen.add(entry);
  const source = fs.readFileSync(path.join(ROOT, entry), 'utf8');
  for (const [, spec] of source.matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
    const target = path.join(path.dirname(entry), spec);
    libraryClosure(fs.existsSync(path.join(ROOT, `${target}.ts`)) ? `${target}.ts` : path.join(target, 'index.ts'), seen);
  }
  return seen;
}

/** What the build reads: the library's sources, the handlers' (bundled whole), the command line's, the manifest, the lock file and the compiler settings. */
function buildInputs(): string[] {
  const handlers = fs.readdirSync(path.join(ROOT, 'lambda', 'src')).filter((f) => f.endsWith('.ts')).map((f) => path.join('lambda', 'src', f));
  return [...new Set([...libraryClosure(), ...libraryClosure('lib/cli/main.ts'), ...handlers, 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'])].sort();
}

export function buildFingerprint(): string {
  const hash = createHash('sha256');
  for (const file of buildInputs()) hash.update(`${file}\0`).update(fs.readFileSync(path.join(ROOT, file))).update('\0');
  return hash.digest('hex');
}

/** Whether dist/cdk and .jsii were built from the current sources. */
export function packageIsBuilt(): boolean {
  return fs.existsSync(JSII_ASSEMBLY) && fs.existsSync(FINGERPRINT_FILE) && fs.readFileSync(FINGERPRINT_FILE, 'utf8') === buildFingerprint();
}

/** jsii with Node 20's end-of-life banner silenced (jsii 6 still runs on it). */
export function jsiiEnv(): NodeJS.ProcessEnv {
  return { ...process.env, JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION: process.versions.node.split('.')[0] };
}

/**
 * Runs `build` holding dist/.build.lock: jest runs the npm and the Python package tests side by side, and
 * each may build (npm's prepack, pacmak's own `npm pack`). The second waits, then finds the build current.
 * Never held across jsii-pacmak, whose `npm pack` comes back here.
 */
function withBuildLock<T>(build: () => T): T {
  const lock = path.join(ROOT, 'dist', '.build.lock');
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // A lock older than any build is left by a killed one.
      if (Date.now() - fs.statSync(lock).mtimeMs > 10 * 60_000) fs.rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`${lock} held for 10 minutes: remove it if no build is running`);
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
    }
  }
  try {
    return build();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/** Builds dist/cdk and .jsii unless they are built from the current sources; returns whether it built. */
export function buildPackage(options: { force?: boolean } = {}): boolean {
  return withBuildLock(() => buildUnlocked(options.force ?? false));
}

function buildUnlocked(force: boolean): boolean {
  if (!force && packageIsBuilt()) return false;
  const fingerprint = buildFingerprint();
  fs.rmSync(PACKAGE_BUILD_DIR, { recursive: true, force: true });
  execFileSync(process.execPath, [require.resolve('jsii/bin/jsii'), '--silence-warnings', 'metadata/missing-dev-dependency'], { cwd: ROOT, stdio: 'inherit', env: jsiiEnv() });
  bundleHandlers(PACKAGE_ASSETS_DIR);
  bundleCli(PACKAGE_CLI_FILE);
  // The compiled library must find what was just bundled, where it looks.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the build's own output, known only now
  const compiled = require(path.join(PACKAGE_BUILD_DIR, 'lib', 'private', 'handler-function.js')) as typeof import('../private/handler-function');
  const missing = KIT_HANDLERS.filter((h) => compiled.prebundledHandler(h) === undefined);
  if (missing.length > 0) throw new Error(`the compiled library does not find the pre-bundled handlers ${missing.join(', ')} under ${compiled.PREBUNDLED_HANDLERS_DIR}`);
  fs.writeFileSync(FINGERPRINT_FILE, fingerprint);
  return true;
}
