import { spawn, type ChildProcess } from 'child_process';
import { FLEET_RESTART_POLICY, restartLoopArgs, START_LIMIT_HIT_EXIT, type RestartPolicy } from '../../lib/rehearsal/restart-loop';
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
  test('the units state the start limit the stand-in applies', () => {
    // GIVEN the engine's units WHEN read THEN both services carry the policy's start limit
    for (const unit of [PROCESS_UNIT, SERVE_UNIT]) {
      expect(unit).toContain(`StartLimitIntervalSec=${FLEET_START_LIMIT.intervalSeconds}\nStartLimitBurst=${FLEET_START_LIMIT.burst}`);
      expect(unit.indexOf('StartLimitBurst')).toBeLessThan(unit.indexOf('[Service]'));
    }
    expect(FLEET_RESTART_POLICY).toEqual({ restartSeconds: 1, intervalSeconds: 10, burst: 5 });
    // and a PgBouncer unit at its limit powers the host off (EC2's checks then see it), the agent's does not
    expect(PROCESS_UNIT).toContain('\nStartLimitAction=poweroff\n');
    expect(SERVE_UNIT).not.toContain('StartLimitAction');
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
