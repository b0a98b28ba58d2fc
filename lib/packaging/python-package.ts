import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { ROOT } from './handler-bundles';
import { buildFingerprint, buildPackage, jsiiEnv } from './npm-package';

/**
 * The Python package of the construct library: jsii-pacmak turns the jsii assembly and the npm tarball
 * (`npm pack`, whose prepack build is skipped when dist/cdk is current) into dist/python/*.whl and an
 * sdist. The wheel carries that tarball whole, the pre-bundled handlers included; the jsii runtime
 * unpacks it and runs the JavaScript, so the constructs find their handlers in Python as in Node.js.
 * pacmak makes a venv of its own and pip-installs setuptools, build and twine into it.
 */
export const PYTHON_DIST_DIR = path.join(ROOT, 'dist', 'python');
export const PYTHON_DIST_NAME = 'aurora_proxy_kit';
/** The npm build's fingerprint (npm-package.ts) the wheel was made from. */
const FINGERPRINT_FILE = path.join(PYTHON_DIST_DIR, '.fingerprint');

/** The wheel in dist/python, if one is there. */
export function findWheel(): string | undefined {
  if (!fs.existsSync(PYTHON_DIST_DIR)) return undefined;
  const wheels = fs.readdirSync(PYTHON_DIST_DIR).filter((f) => f.startsWith(`${PYTHON_DIST_NAME}-`) && f.endsWith('.whl'));
  return wheels.length === 1 ? path.join(PYTHON_DIST_DIR, wheels[0]) : undefined;
}

/**
 * Builds dist/cdk and .jsii when stale, then the wheel, unless dist/python holds the wheel of the same
 * sources (pacmak's own fingerprint does not spare its 40 s of packing and pip). Returns the wheel's path.
 */
export function buildPythonPackage(options: { force?: boolean } = {}): string {
  buildPackage(options);
  const fingerprint = buildFingerprint();
  const current = findWheel();
  if (!options.force && current !== undefined && fs.existsSync(FINGERPRINT_FILE) && fs.readFileSync(FINGERPRINT_FILE, 'utf8') === fingerprint) return current;
  fs.rmSync(PYTHON_DIST_DIR, { recursive: true, force: true });
  execFileSync(
    process.execPath,
    // --no-npmignore: package.json `files` says what the tarball holds; pacmak would write an .npmignore.
    [require.resolve('jsii-pacmak/bin/jsii-pacmak'), '--targets', 'python', '--outdir', path.dirname(PYTHON_DIST_DIR), '--no-npmignore'],
    { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'], env: jsiiEnv() },
  );
  const wheel = findWheel();
  if (wheel === undefined) throw new Error(`jsii-pacmak left no single ${PYTHON_DIST_NAME}-*.whl in ${PYTHON_DIST_DIR}`);
  fs.writeFileSync(FINGERPRINT_FILE, fingerprint);
  return wheel;
}
