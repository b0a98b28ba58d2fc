/**
 * A lock across processes around the shared `unreachable 198.18.0.0/15` route: a setup adds it (when
 * missing) and makes its first namespace, and a teardown removes it when no kit namespace is left. Without
 * the lock a teardown could see no namespace, a setup then find the route still there and make one, and
 * the teardown remove the route under it. A directory holding its owner's pid: mkdir is atomic, and a
 * lock whose owner died is taken over.
 */
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isAlive } from '../processes';

/** Where the lock lives: the machine's lock directory, since the route is the machine's. */
export const ROUTE_LOCK_DIR = '/run/lock/aurora-proxy-kit-network';
/** A lock dir without an owner for this long is a crash between mkdir and writing the pid. */
const OWNERLESS_STALE_MS = 5_000;

function owner(dir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dir, 'pid'), 'utf8'));
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** True when the lock at `dir` is left by a process that is gone, and may be taken over. */
function stale(dir: string): boolean {
  const pid = owner(dir);
  if (pid !== undefined) return !isAlive(pid);
  try {
    return Date.now() - statSync(dir).mtimeMs > OWNERLESS_STALE_MS;
  } catch {
    return false;
  }
}

/** Runs `fn` holding the lock; waits up to `timeoutMs` for another holder. */
export async function withRouteLock<T>(fn: () => Promise<T>, dir = ROUTE_LOCK_DIR, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  mkdirSync(dirname(dir), { recursive: true });
  for (;;) {
    try {
      mkdirSync(dir, { mode: 0o700 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (stale(dir)) {
        rmSync(dir, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`the network lock ${dir} is held by pid ${owner(dir) ?? '?'} for more than ${timeoutMs} ms: wait for that rehearsal's network setup or teardown, or remove the directory if no rehearsal runs`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  writeFileSync(join(dir, 'pid'), String(process.pid));
  try {
    return await fn();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
