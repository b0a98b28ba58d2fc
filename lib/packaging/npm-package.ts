import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { KIT_HANDLERS } from '../private/handler-function';
import { bundleCli } from './cli-bundle';
import { bundleHandlers, ROOT } from './handler-bundles';

/**
 * The npm package's contents, built into dist/cdk (package.json `files`): the construct library
 * compiled by tsconfig.build.json (lib/index.ts and what it imports: the model, the constructs' helpers,
 * the consumers' environment contract; JavaScript and .d.ts), and every handler pre-bundled under
 * dist/cdk/assets/lambda, where lib/private/handler-function.ts looks for them, and the command line's
 * summaries bundled into dist/cdk/cli/index.js (bin/aurora-proxy-kit.js runs it). Nothing of the
 * rehearsal, the bench, the Terraform generator, the reference app or the tests is compiled: they are
 * not imported by lib/index.ts.
 */
export const PACKAGE_BUILD_DIR = path.join(ROOT, 'dist', 'cdk');
export const PACKAGE_ASSETS_DIR = path.join(PACKAGE_BUILD_DIR, 'assets', 'lambda');
export const PACKAGE_CLI_FILE = path.join(PACKAGE_BUILD_DIR, 'cli', 'index.js');

export function buildPackage(): void {
  fs.rmSync(PACKAGE_BUILD_DIR, { recursive: true, force: true });
  const tsc = require.resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' });
  bundleHandlers(PACKAGE_ASSETS_DIR);
  bundleCli(PACKAGE_CLI_FILE);
  // The compiled library must find what was just bundled, where it looks.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the build's own output, known only now
  const compiled = require(path.join(PACKAGE_BUILD_DIR, 'lib', 'private', 'handler-function.js')) as typeof import('../private/handler-function');
  const missing = KIT_HANDLERS.filter((h) => compiled.prebundledHandler(h) === undefined);
  if (missing.length > 0) throw new Error(`the compiled library does not find the pre-bundled handlers ${missing.join(', ')} under ${compiled.PREBUNDLED_HANDLERS_DIR}`);
}
