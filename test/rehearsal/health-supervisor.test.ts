/**
 * The supervision without servers: the one restart policy (the PgBouncer engine host units' RestartSec= and
 * start limit) and its rate limit, the verdict `status` gives on a report (fresh, stale by age, stale by a dead
 * pid, a PgBouncer process given up), and a real supervisor process whose real checker crashes at every start
 * (its work dir has no state), which must give up at the start limit, log why, and keep the checker down.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FLEET_RESTART_SECONDS, FLEET_START_LIMIT } from '../../lib/model/pgbouncer-host-units';
import {
  assessHealthChecker,
  CHECKER_UNIT,
  groupMembers,
  healthStaleAfterMs,
  isAlive,
  launchHealthSupervisor,
  readSupervisorReport,
  sleep,
  StartLimit,
  UNIT_RESTART_POLICY,
  WorkDirLayout,
  type HealthEvidence,
  type HealthReport,
} from '../../lib/rehearsal';

describe('restart policy', () => {
  test('GIVEN the PgBouncer engine host units WHEN the supervisor\'s policy is read THEN it is their RestartSec= and start limit', () => {
    expect(UNIT_RESTART_POLICY).toEqual({ restartDelayMs: FLEET_RESTART_SECONDS * 1000, startLimitIntervalMs: FLEET_START_LIMIT.intervalSeconds * 1000, startLimitBurst: FLEET_START_LIMIT.burst });
  });

  test('GIVEN a unit started burst times within the interval WHEN it starts once more THEN the limit refuses it, and a start after the window is allowed again', () => {
    // GIVEN
    const limit = new StartLimit({ restartDelayMs: 1000, startLimitIntervalMs: 10000, startLimitBurst: 3 });
    const t0 = 1_000_000;

    // WHEN
    const within = [t0, t0 + 1000, t0 + 2000, t0 + 9999].map((t) => limit.allow(t));
    const afterWindow = limit.allow(t0 + 10000);

    // THEN
    expect(within).toEqual([true, true, true, false]);
    expect(afterWindow).toBe(true);
    expect(limit.describe()).toBe('start limit hit: 3 starts within 10 s');
  });
});

describe('is the health checker still watching', () => {
  const now = Date.parse('2030-01-01T00:00:10.000Z');
  const report = (ageMs: number, pid = 4242): HealthReport => ({ checkedAt: new Date(now - ageMs).toISOString(), pid, writer: '127.0.10.2', liveReplicas: [], readWriteHosts: [], readOnlyHosts: [], reloads: 0 });
  const evidence = (over: Partial<HealthEvidence>): HealthEvidence => ({
    report: report(100),
    supervisor: { pid: 4000, checkerPid: 4242, restarts: 1, poolerRestarts: 2 },
    supervisorRunning: true,
    checkerRunning: (pid) => pid === 4242,
    intervalMs: 250,
    now,
    ...over,
  });

  test('GIVEN a recent report from a running checker WHEN assessed THEN it is fresh with no problem', () => {
    expect(assessHealthChecker(evidence({}))).toEqual({ state: 'fresh', reportAgeMs: 100, staleAfterMs: healthStaleAfterMs(250), checkerPid: 4242, supervisorPid: 4000, supervisorRunning: true, restarts: 1, poolerRestarts: 2 });
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
    const gaveUp = assessHealthChecker(evidence({ checkerRunning: () => false, supervisor: { pid: 4000, checkerPid: undefined, restarts: 4, failed: { [CHECKER_UNIT]: 'start limit hit: 5 starts within 10 s' } } }));
    expect(gaveUp).toMatchObject({ state: 'stale', restarts: 4 });
    expect(gaveUp.problems).toEqual(['checker pid 4242 that wrote it is not running', 'the supervisor gave up restarting it: start limit hit: 5 starts within 10 s']);
  });

  test('GIVEN the supervisor gave up on a PgBouncer process WHEN assessed THEN the checker is fresh and status names the process and why', () => {
    const status = assessHealthChecker(evidence({ supervisor: { pid: 4000, checkerPid: 4242, restarts: 0, poolerRestarts: 5, failed: { 'pgbouncer-rw-1': 'start limit hit: 5 starts within 10 s' } } }));
    expect(status).toMatchObject({ state: 'fresh', poolerRestarts: 5, problems: ['the supervisor gave up restarting pgbouncer-rw-1: start limit hit: 5 starts within 10 s'] });
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

  test('GIVEN a checker that exits at every start WHEN supervised with a start limit of 2 starts in 120 s THEN it is restarted once after RestartSec=, the supervisor gives up, logs why, and only the supervisor is left running', async () => {
    // GIVEN a work dir without a rehearsal state: the real checker exits with an error at once, once node
    // has loaded it (seconds under ts-node on loaded cores: a window wider than the units' 10 s keeps this exact)
    const layout = new WorkDirLayout(workDir);

    // WHEN
    const supervisor = launchHealthSupervisor(layout, 250, { startLimitBurst: 2, startLimitIntervalMs: 120000 });
    supervisorPid = supervisor.pid;
    const deadline = Date.now() + 45000;
    while (readSupervisorReport(layout.healthSupervisorFile)?.failed === undefined && Date.now() < deadline) await sleep(100);

    // THEN
    const record = readSupervisorReport(layout.healthSupervisorFile);
    expect(record).toMatchObject({ restarts: 1, poolerRestarts: 0 });
    expect(record?.failed).toEqual({ [CHECKER_UNIT]: expect.stringMatching(/^start limit hit: 2 starts within 120 s, the last: health checker pid \d+ exited \(code 1\) after \d+ ms$/) });
    expect(record?.checkerPid).toBeUndefined();
    // It keeps running for the PgBouncer processes; its group holds nothing else.
    expect(isAlive(supervisor.pid)).toBe(true);
    expect(groupMembers(supervisor.pid)).toEqual([supervisor.pid]);
    const log = readFileSync(layout.healthSupervisorLog, 'utf8');
    expect(log.match(/health checker started, pid \d+/g)).toHaveLength(2);
    expect(log).toMatch(new RegExp(`restart 1 in ${FLEET_RESTART_SECONDS * 1000} ms[\\s\\S]*restart 2 in ${FLEET_RESTART_SECONDS * 1000} ms[\\s\\S]*giving up: start limit hit`));
    expect(readFileSync(layout.healthCheckerLog, 'utf8')).toContain(`no rehearsal state in ${workDir}`);
  }, 60000);
});
