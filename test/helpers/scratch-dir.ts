import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A fresh directory for each test of the calling describe block (readable by the rehearsal's server user),
 * removed after it; the returned function gives the current test's.
 */
export function scratchDirPerTest(prefix: string): () => string {
  let dir: string | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    chmodSync(dir, 0o755);
  });
  afterEach(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });
  return () => {
    if (dir === undefined) throw new Error(`scratchDirPerTest(${prefix}): asked for outside a test`);
    return dir;
  };
}
