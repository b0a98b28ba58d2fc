import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { withRouteLock } from '../../lib/rehearsal/network/route-lock';

describe('the lock around the shared unreachable route', () => {
  let tmp: string;
  let lock: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'route-lock-'));
    lock = path.join(tmp, 'lock');
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  test('holders run one at a time, and the lock is gone afterwards', async () => {
    // GIVEN three holders that each take a while
    const events: string[] = [];
    const hold = (name: string) =>
      withRouteLock(async () => {
        events.push(`${name} in`);
        expect(fs.readFileSync(path.join(lock, 'pid'), 'utf8')).toBe(String(process.pid));
        await new Promise((r) => setTimeout(r, 60));
        events.push(`${name} out`);
        return name;
      }, lock);
    // WHEN they start together THEN no two overlap, each gets its own result, and nothing is left
    expect(await Promise.all([hold('a'), hold('b'), hold('c')])).toEqual(['a', 'b', 'c']);
    for (let i = 0; i < events.length; i += 2) expect(events[i + 1]).toBe(events[i].replace(' in', ' out'));
    expect(fs.existsSync(lock)).toBe(false);
  });

  test('a holder that throws releases the lock', async () => {
    // GIVEN a holder that fails WHEN it runs THEN its error passes through and the lock is released
    await expect(withRouteLock(() => Promise.reject(new Error('boom')), lock)).rejects.toThrow('boom');
    expect(fs.existsSync(lock)).toBe(false);
  });

  test('a lock left by a process that is gone is taken over', async () => {
    // GIVEN a lock whose owner has exited
    const dead = spawnSync('/bin/sh', ['-c', 'echo $$']).stdout.toString().trim();
    fs.mkdirSync(lock);
    fs.writeFileSync(path.join(lock, 'pid'), dead);
    // WHEN another process asks for it THEN it runs at once
    expect(await withRouteLock(async () => 'ran', lock, 1_000)).toBe('ran');
  });

  test('a live holder that does not let go: a clear error after the timeout, naming the holder', async () => {
    // GIVEN a lock held by a live process (this one's parent)
    fs.mkdirSync(lock);
    fs.writeFileSync(path.join(lock, 'pid'), String(process.ppid));
    // WHEN another asks with a short timeout THEN it is refused with the holder's pid, and the lock stays
    await expect(withRouteLock(async () => 'ran', lock, 200)).rejects.toThrow(`the network lock ${lock} is held by pid ${process.ppid}`);
    expect(fs.existsSync(lock)).toBe(true);
  });
});
