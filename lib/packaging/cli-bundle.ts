import * as path from 'path';
import { buildSync } from 'esbuild';
import { ROOT } from './handler-bundles';

/**
 * The npm package's `aurora-proxy-kit` CLI: lib/cli bundled into one file that needs nothing but
 * Node.js. The dispatcher loads the rehearsal, the bench and the demo from the repository's sources
 * on use (not imports esbuild follows), so the package's CLI has the summaries only and says where
 * the others run.
 */
export function bundleCli(outFile: string): string {
  buildSync({
    entryPoints: [path.join(ROOT, 'lib', 'cli', 'main.ts')],
    outfile: outFile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
    absWorkingDir: ROOT,
  });
  return outFile;
}
