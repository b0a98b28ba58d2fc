/**
 * A lock across processes around the shared `unreachable 198.18.0.0/15` route: a setup adds it (when
 * missing) and makes its first namespace, and a teardown removes it when no kit namespace is left. Without
 * the lock a teardown could see no namespace, a setup then find the route still there and make one, and
 * the teardown remove the route under it.
 *
 * flock(2) on a file, held by a small `flock` child (util-linux) for as long as `fn` runs: the kernel drops
 * the lock when the child exits, and the child exits when its stdin closes, so a holder that dies (even by
 * SIGKILL) never leaves the lock behind and no process has to judge another's lock stale.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/** Where the lock lives: the machine's lock directory, since the route is the machine's. */
export const ROUTE_LOCK_FILE = '/run/lock/aurora-proxy-kit-network.lock';

/** Runs `fn` holding the lock; waits up to `timeoutMs` for another holder. */
export async function withRouteLock<T>(fn: () => Promise<T>, file = ROUTE_LOCK_FILE, timeoutMs = 60_000): Promise<T> {
  mkdirSync(dirname(file), { recursive: true });
  const holder = spawn('flock', ['--exclusive', '--wait', String(Math.ceil(timeoutMs / 1000)), file, 'sh', '-c', 'echo locked; exec cat >/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => holder.on('close', (code) => resolve(code)));
  const locked = await new Promise<boolean>((resolve, reject) => {
    let out = '';
    holder.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('locked\n')) resolve(true);
    });
    holder.on('error', reject);
    void exited.then(() => resolve(false));
  });
  if (!locked) {
    throw new Error(`the network lock ${file} was held by another rehearsal's network setup or teardown for more than ${timeoutMs} ms: wait for it, or find its holder with \`fuser ${file}\``);
  }
  try {
    return await fn();
  } finally {
    holder.stdin!.end();
    await exited;
  }
}
