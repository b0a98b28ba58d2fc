import { spawn, type ChildProcess } from 'child_process';
import { FLEET_RESTART_POLICY, restartLoopArgs, START_LIMIT_HIT_EXIT, UNLIMITED_RESTART_POLICY, type RestartPolicy } from '../../lib/rehearsal/restart-loop';
import { FLEET_START_LIMIT, PROCESS_UNIT, SERVE_UNIT } from '../../lib/model/pgbouncer-host-units';

/** The loop under a policy, with its stderr collected; stopped by pid at the end of each test. */
function startLoop(program: string, args: string[], policy: RestartPolicy): { child: ChildProcess; stderr: () => string; exit: Promise<number | null> } {
  const child = spawn('/bin/bash', restartLoopArgs('unit', 'TERM', program, args, policy), { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stderr: () => err, exit };
}

const stop = (child: ChildProcess): void => {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
};

describe('the rehearsal\'s stand-in for systemd\'s Restart=always', () => {
  test('the units state the start limits the stand-in applies', () => {
    // GIVEN the engine's units WHEN read THEN a PgBouncer unit carries the limit and powers the host off at it,
    // and the agent's restarts without a limit (EC2's checks would never replace a host whose agent gave up)
    expect(PROCESS_UNIT).toContain(`StartLimitIntervalSec=${FLEET_START_LIMIT.intervalSeconds}\nStartLimitBurst=${FLEET_START_LIMIT.burst}\nStartLimitAction=poweroff\n`);
    expect(PROCESS_UNIT.indexOf('StartLimitBurst')).toBeLessThan(PROCESS_UNIT.indexOf('[Service]'));
    expect(SERVE_UNIT).toContain('\nStartLimitIntervalSec=0\n');
    expect(SERVE_UNIT).not.toMatch(/StartLimitBurst|StartLimitAction/);
    expect(SERVE_UNIT.indexOf('StartLimitIntervalSec')).toBeLessThan(SERVE_UNIT.indexOf('[Service]'));
    expect(FLEET_RESTART_POLICY).toEqual({ restartSeconds: 1, intervalSeconds: 10, burst: 5 });
    expect(UNLIMITED_RESTART_POLICY.intervalSeconds).toBe(0);
  });

  test('a program that keeps exiting is started `burst` times, then the loop gives up', async () => {
    // GIVEN a program that exits at once, under a limit of 3 starts in 30 s, restarting after 0.1 s
    const loop = startLoop('/bin/sh', ['-c', 'echo started >&2; exit 7'], { restartSeconds: 0.1, intervalSeconds: 30, burst: 3 });
    try {
      // WHEN the loop runs THEN it exits with the start-limit status after three starts
      expect(await loop.exit).toBe(START_LIMIT_HIT_EXIT);
      expect(loop.stderr().match(/^started$/gm)).toHaveLength(3);
      expect(loop.stderr()).toContain('exited with status 7');
      expect(loop.stderr()).toContain('unit: start request repeated too quickly (3 starts within 30 s), refusing to start');
    } finally {
      stop(loop.child);
    }
  }, 20_000);

  test('starts older than the interval no longer count: a program that exits now and then runs on', async () => {
    // GIVEN a program that lives 0.6 s, under a limit of 2 starts in 1 s
    const loop = startLoop('/bin/sh', ['-c', 'echo started >&2; sleep 0.6'], { restartSeconds: 0.5, intervalSeconds: 1, burst: 2 });
    try {
      // WHEN it has exited several times THEN the loop still runs it
      await new Promise((r) => setTimeout(r, 4_500));
      expect(loop.child.exitCode).toBeNull();
      expect((loop.stderr().match(/^started$/gm) ?? []).length).toBeGreaterThanOrEqual(3);
      expect(loop.stderr()).not.toContain('refusing to start');
    } finally {
      stop(loop.child);
    }
  }, 20_000);

  test('systemd\'s fixed window: the limit counts starts from the window\'s first, and a new window opens after it', async () => {
    // GIVEN a program that exits at once, 2 starts per 1 s window, restarting after 0.3 s
    const loop = startLoop('/bin/sh', ['-c', 'echo started >&2; exit 1'], { restartSeconds: 0.3, intervalSeconds: 1, burst: 2 });
    try {
      // WHEN it runs: starts at ~0 and ~0.3 s pass, ~0.6 s is the third in the window
      // THEN it gives up at the third start, as systemd would
      expect(await loop.exit).toBe(START_LIMIT_HIT_EXIT);
      expect(loop.stderr().match(/^started$/gm)).toHaveLength(2);
    } finally {
      stop(loop.child);
    }
  }, 20_000);

  test('with no limit (interval 0), a program that keeps exiting keeps being restarted', async () => {
    const loop = startLoop('/bin/sh', ['-c', 'echo started >&2; exit 1'], { ...UNLIMITED_RESTART_POLICY, restartSeconds: 0.05 });
    try {
      await waitFor(() => (loop.stderr().match(/^started$/gm) ?? []).length >= 12);
      expect(loop.child.exitCode).toBeNull();
      expect(loop.stderr()).not.toContain('refusing to start');
    } finally {
      stop(loop.child);
    }
  }, 20_000);

  test('a stop signal reaches the program, and the loop exits 0 once it has stopped', async () => {
    // GIVEN a long-running program that notes the TERM it receives
    const loop = startLoop('/bin/sh', ['-c', 'trap "echo got-term >&2; exit 0" TERM; echo started >&2; while :; do sleep 0.1; done'], FLEET_RESTART_POLICY);
    try {
      await waitFor(() => loop.stderr().includes('started'));
      // WHEN the loop is sent TERM THEN the program gets it and the loop exits 0 without a restart
      loop.child.kill('SIGTERM');
      expect(await loop.exit).toBe(0);
      expect(loop.stderr()).toContain('got-term');
      expect(loop.stderr().match(/^started$/gm)).toHaveLength(1);
    } finally {
      stop(loop.child);
    }
  }, 20_000);
});

async function waitFor(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}
