import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { withRouteLock } from '../../lib/rehearsal/network/route-lock';

/**
 * Another process holding the lock through withRouteLock, until killed: a Node.js child that never lets go.
 * Resolves once it holds the lock.
 */
function otherHolder(file: string): Promise<{ kill: () => Promise<void> }> {
  const script = `require(${JSON.stringify(require.resolve('../../lib/rehearsal/network/route-lock'))}).withRouteLock(() => { console.log('held'); return new Promise(() => undefined); }, ${JSON.stringify(file)});`;
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const gone = new Promise<void>((resolve) => child.on('close', () => resolve()));
  return new Promise((resolve) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('held'))
        resolve({
          kill: async () => {
            child.kill('SIGKILL');
            await gone;
          },
        });
    });
  });
}

describe('the lock around the shared unreachable route', () => {
  let tmp: string;
  let lock: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'route-lock-'));
    lock = path.join(tmp, 'network.lock');
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  test('holders run one at a time, each with its own result', async () => {
    // GIVEN three holders that each take a while
    const events: string[] = [];
    const hold = (name: string) =>
      withRouteLock(async () => {
        events.push(`${name} in`);
        await new Promise((r) => setTimeout(r, 80));
        events.push(`${name} out`);
        return name;
      }, lock);
    // WHEN they start together THEN no two overlap
    expect((await Promise.all([hold('a'), hold('b'), hold('c')])).sort()).toEqual(['a', 'b', 'c']);
    for (let i = 0; i < events.length; i += 2) expect(events[i + 1]).toBe(events[i]!.replace(' in', ' out'));
  });

  test('a holder that throws releases the lock', async () => {
    // GIVEN a holder that fails WHEN it runs THEN its error passes through, and the next holder gets the lock at once
    await expect(withRouteLock(() => Promise.reject(new Error('boom')), lock)).rejects.toThrow('boom');
    expect(await withRouteLock(async () => 'next', lock, 1_000)).toBe('next');
  });

  test('a holder killed with SIGKILL leaves no lock behind', async () => {
    // GIVEN another process holding the lock
    const other = await otherHolder(lock);
    // WHEN it is killed THEN the lock is soon free: its flock child saw its stdin close and exited
    await other.kill();
    expect(await withRouteLock(async () => 'ran', lock, 2_000)).toBe('ran');
  }, 20_000);

  test('a live holder that does not let go: a clear error after the timeout, and the lock stays its', async () => {
    // GIVEN a live holder
    const other = await otherHolder(lock);
    try {
      // WHEN another asks with a short timeout THEN it is refused with what to do
      await expect(withRouteLock(async () => 'ran', lock, 1_000)).rejects.toThrow(`the network lock ${lock} was held by another rehearsal's network setup or teardown for more than 1000 ms`);
    } finally {
      await other.kill();
    }
  }, 20_000);
});
