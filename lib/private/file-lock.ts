/**
 * A lock across processes: flock(2) on a file, held by a small `flock` child (util-linux) for as long as
 * `fn` runs. The kernel drops the lock when the child exits, and the child exits when its stdin closes, so a
 * holder that dies (even by SIGKILL) never leaves the lock behind and no process has to judge another's
 * lock stale.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Runs `fn` holding the lock on `file`; waits up to `timeoutMs` for another holder, then fails with
 * `busy(file, timeoutMs)` as the message.
 */
export async function withFileLock<T>(file: string, timeoutMs: number, busy: (file: string, timeoutMs: number) => string, fn: () => Promise<T>): Promise<T> {
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
  if (!locked) throw new Error(busy(file, timeoutMs));
  try {
    return await fn();
  } finally {
    holder.stdin!.end();
    await exited;
  }
}
