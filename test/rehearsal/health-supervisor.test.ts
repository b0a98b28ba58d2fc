/**
 * The health checker's supervision without servers: the restart backoff and its crash-loop bound, the
 * verdict `status` gives on a report (fresh, stale by age, stale by a dead pid), and a real supervisor
 * process whose real checker crashes at every start (its work dir has no state), which must give up
 * after the bound, log why, and leave no process behind.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  assessHealthChecker,
  DEFAULT_RESTART_POLICY,
  groupMembers,
  healthStaleAfterMs,
  isAlive,
  launchHealthSupervisor,
  readSupervisorReport,
  restartDelay,
  sleep,
  WorkDirLayout,
  type HealthEvidence,
  type HealthReport,
} from '../../lib/rehearsal';

describe('restart policy', () => {
  test('GIVEN quick exits in a row WHEN the next delay is asked THEN it doubles up to the cap, then the supervisor gives up', () => {
    const policy = { initialDelayMs: 100, maxDelayMs: 1000, stableAfterMs: 30000, maxQuickExits: 6 };
    expect([0, 1, 2, 3, 4, 5, 6].map((n) => restartDelay(policy, n))).toEqual([100, 100, 200, 400, 800, 1000, 1000]);
    expect(restartDelay(policy, 7)).toBeUndefined();
    expect(restartDelay(DEFAULT_RESTART_POLICY, DEFAULT_RESTART_POLICY.maxQuickExits + 1)).toBeUndefined();
  });
});

describe('is the health checker still watching', () => {
  const now = Date.parse('2030-01-01T00:00:10.000Z');
  const report = (ageMs: number, pid = 4242): HealthReport => ({ checkedAt: new Date(now - ageMs).toISOString(), pid, writer: '127.0.10.2', liveReplicas: [], readWriteHosts: [], readOnlyHosts: [], reloads: 0 });
  const evidence = (over: Partial<HealthEvidence>): HealthEvidence => ({
    report: report(100),
    supervisor: { pid: 4000, checkerPid: 4242, restarts: 1 },
    supervisorRunning: true,
    checkerRunning: (pid) => pid === 4242,
    intervalMs: 250,
    now,
    ...over,
  });

  test('GIVEN a recent report from a running checker WHEN assessed THEN it is fresh with no problem', () => {
    expect(assessHealthChecker(evidence({}))).toEqual({ state: 'fresh', reportAgeMs: 100, staleAfterMs: healthStaleAfterMs(250), checkerPid: 4242, supervisorPid: 4000, supervisorRunning: true, restarts: 1 });
  });

  test('GIVEN a report older than a few intervals WHEN assessed THEN it is stale, with its age and the limit', () => {
    const status = assessHealthChecker(evidence({ report: report(healthStaleAfterMs(250) + 1) }));
    expect(status.state).toBe('stale');
    expect(status.problems).toEqual([`last report ${((healthStaleAfterMs(250) + 1) / 1000).toFixed(1)} s old (stale after ${(healthStaleAfterMs(250) / 1000).toFixed(1)} s)`]);
  });

  test('GIVEN a recent report whose checker pid is dead WHEN assessed THEN it is stale at once', () => {
    const status = assessHealthChecker(evidence({ checkerRunning: () => false }));
    expect(status).toMatchObject({ state: 'stale', problems: ['checker pid 4242 that wrote it is not running'] });
  });

  test('GIVEN no report, or a supervisor that is gone or gave up WHEN assessed THEN status says so', () => {
    expect(assessHealthChecker(evidence({ report: undefined }))).toMatchObject({ state: 'missing', problems: ['no health report yet'] });
    expect(assessHealthChecker(evidence({ supervisorRunning: false }))).toMatchObject({ state: 'fresh', problems: ['the supervisor is not running: nothing restarts the checker if it exits'] });
    const gaveUp = assessHealthChecker(evidence({ supervisorRunning: false, checkerRunning: () => false, supervisor: { pid: 4000, checkerPid: undefined, restarts: 8, gaveUp: '9 quick exits in a row' } }));
    expect(gaveUp).toMatchObject({ state: 'stale', restarts: 8 });
    expect(gaveUp.problems).toContain('the supervisor gave up restarting it: 9 quick exits in a row');
  });
});

describe('a crash-looping health checker', () => {
  let workDir: string;
  let supervisorPid: number | undefined;
  beforeEach(() => {
    workDir = mkdtempSync(join(tmpdir(), 'rehearsal-supervisor-'));
    mkdirSync(new WorkDirLayout(workDir).logsDir);
  });
  afterEach(() => {
    if (supervisorPid !== undefined && groupMembers(supervisorPid).length > 0) process.kill(-supervisorPid, 'SIGKILL');
    rmSync(workDir, { recursive: true, force: true });
  });

  test('GIVEN a checker that exits at every start WHEN supervised with a bound of 2 THEN it is restarted twice, the supervisor gives up, logs why and leaves nothing running', async () => {
    // GIVEN a work dir without a rehearsal state: the real checker exits with an error at once
    const layout = new WorkDirLayout(workDir);

    // WHEN
    const supervisor = launchHealthSupervisor(layout, 250, 2);
    supervisorPid = supervisor.pid;
    const deadline = Date.now() + 45000;
    while (isAlive(supervisor.pid) && Date.now() < deadline) await sleep(100);

    // THEN
    expect(isAlive(supervisor.pid)).toBe(false);
    expect(groupMembers(supervisor.pid)).toEqual([]);
    const record = readSupervisorReport(layout.healthSupervisorFile);
    expect(record).toMatchObject({ restarts: 2, lastExit: { code: 1, signal: null } });
    expect(record?.checkerPid).toBeUndefined();
    expect(record?.gaveUp).toMatch(/^3 quick exits in a row \(each within 30000 ms of its start\), the last with code 1$/);
    const log = readFileSync(layout.healthSupervisorLog, 'utf8');
    expect(log.match(/health checker started, pid \d+/g)).toHaveLength(3);
    expect(log).toMatch(/restart 1 in 200 ms[\s\S]*restart 2 in 400 ms[\s\S]*giving up: 3 quick exits in a row/);
    expect(readFileSync(layout.healthCheckerLog, 'utf8')).toContain(`no rehearsal state in ${workDir}`);
  }, 60000);
});
