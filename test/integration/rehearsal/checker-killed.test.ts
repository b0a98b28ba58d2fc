/**
 * The health checker is supervised (loopback block checkerKilledSuite): killed with SIGKILL it comes
 * back within a bound, PgBouncer processes killed meanwhile come back by the same supervision, and a
 * writer failover right after still re-points the read/write endpoint while
 * the read-only endpoint accepts no write; with its supervisor killed too, `status` flags the stale
 * report; `down` still leaves no process, the checkers included.
 */
import { readFileSync } from 'node:fs';
import { formatStatus, groupMembers, isAlive, query, readPoolers, sleep, WorkDirLayout, type Endpoint, type HealthCheckerStatus, type Rehearsal } from '../../../lib/rehearsal';
import { startRehearsal, stopRehearsal } from './live';

let started: Awaited<ReturnType<typeof startRehearsal>> | undefined;
let rehearsal: Rehearsal;
/** Every checker pid seen, so the end can prove none survives down. */
const checkerPids = new Set<number>();

/** How long a SIGKILLed checker may stay down: the restart waits RestartSec= (1 s), then node starts it. */
const RESTART_BOUND_MS = 10000;

beforeAll(async () => {
  started = await startRehearsal('checkerKilledSuite');
  rehearsal = started.rehearsal;
}, 90000);

afterAll(async () => {
  await stopRehearsal(started);
  expect([...checkerPids].filter((pid) => isAlive(pid))).toEqual([]);
}, 60000);

/** The distinct servers 20 concurrent connections through `endpoint` land on, sorted. */
async function servedBy(endpoint: Endpoint): Promise<string[]> {
  const rows = await Promise.all(Array.from({ length: 20 }, () => query<{ address: string }>(endpoint, 'SELECT host(inet_server_addr()) AS address, pg_sleep(0.05)')));
  return [...new Set(rows.map((r) => r[0]!.address))].sort();
}

/** SIGKILLs the running checker; resolves with what was seen until a new checker reported fresh. */
async function killChecker(): Promise<{ killed: number; sawStale: HealthCheckerStatus | undefined; back: HealthCheckerStatus; backAfterMs: number }> {
  const before = rehearsal.healthChecker();
  expect(before.state).toBe('fresh');
  const killed = before.checkerPid!;
  checkerPids.add(killed);
  const t0 = Date.now();
  process.kill(killed, 'SIGKILL');
  let sawStale: HealthCheckerStatus | undefined;
  for (;;) {
    const now = rehearsal.healthChecker();
    if (now.state === 'stale' && sawStale === undefined) sawStale = now;
    if (now.state === 'fresh' && now.checkerPid !== killed) {
      checkerPids.add(now.checkerPid!);
      return { killed, sawStale, back: now, backAfterMs: Date.now() - t0 };
    }
    if (Date.now() - t0 > RESTART_BOUND_MS) throw new Error(`the health checker was not back ${RESTART_BOUND_MS} ms after SIGKILL: ${JSON.stringify(now)}`);
    await sleep(20);
  }
}

test('GIVEN a running rehearsal WHEN its health checker is killed with SIGKILL THEN status flags the report stale and the supervisor restarts the checker within the bound', async () => {
  // GIVEN
  const restartsBefore = rehearsal.healthChecker().restarts;

  // WHEN
  const { killed, sawStale, back, backAfterMs } = await killChecker();

  // THEN
  process.stdout.write(`health checker pid ${killed} killed; pid ${back.checkerPid} reporting ${backAfterMs} ms later\n`);
  expect(sawStale?.problems).toContain(`checker pid ${killed} that wrote it is not running`);
  expect(back).toMatchObject({ state: 'fresh', supervisorRunning: true, restarts: restartsBefore + 1 });
  expect(backAfterMs).toBeLessThan(RESTART_BOUND_MS);
  const log = readFileSync(new WorkDirLayout(started!.workDir).healthSupervisorLog, 'utf8');
  expect(log).toMatch(new RegExp(`health checker pid ${killed} exited \\(signal SIGKILL\\) after \\d+ ms; restart \\d+ in \\d+ ms`));
});

test('GIVEN a checker died while a replica\'s read-only poolers were down WHEN the supervisor resumes THEN it brings the checker and the poolers back and reads reach every replica', async () => {
  // GIVEN: the supervisor paused, the checker killed, and replica2's read-only PgBouncer processes killed
  const layout = new WorkDirLayout(started!.workDir);
  const [replica1, replica2] = rehearsal.endpoints.replicas.map((r) => r.host);
  const supervisorPid = rehearsal.pidOf('health-supervisor')!;
  const checker = rehearsal.healthChecker().checkerPid!;
  checkerPids.add(checker);
  process.kill(supervisorPid, 'SIGSTOP');
  try {
    process.kill(checker, 'SIGKILL');
    for (const p of readPoolers(layout).filter((r) => r.pooler.endpoint === 'readOnly' && r.pooler.host === replica2)) process.kill(p.pid, 'SIGKILL');
    await sleep(200);
    expect(await servedBy(rehearsal.endpoints.readOnly)).toEqual([replica1]);
  } finally {
    process.kill(supervisorPid, 'SIGCONT');
  }

  // WHEN the supervisor restarts the checker and the PgBouncer processes
  const deadline = Date.now() + RESTART_BOUND_MS;
  while (!(rehearsal.healthChecker().state === 'fresh' && rehearsal.healthChecker().checkerPid !== checker) && Date.now() < deadline) await sleep(20);
  checkerPids.add(rehearsal.healthChecker().checkerPid!);
  const served = Date.now() + RESTART_BOUND_MS;
  let reached = await servedBy(rehearsal.endpoints.readOnly);
  while (reached.length < 2 && Date.now() < served) reached = await servedBy(rehearsal.endpoints.readOnly);

  // THEN
  expect(rehearsal.health()?.readOnlyHosts).toEqual([replica1, replica2]);
  expect(reached).toEqual([replica1, replica2].sort());
});

test('GIVEN the checker was just killed WHEN the writer fails over THEN the read/write endpoint is re-pointed and no write is accepted on the read-only endpoint', async () => {
  // GIVEN: killed again, and the failover starts before the new checker is up
  const checker = rehearsal.healthChecker().checkerPid!;
  checkerPids.add(checker);
  process.kill(checker, 'SIGKILL');

  // WHEN
  const report = await rehearsal.failover();

  // THEN the read/write endpoint reaches the promoted writer
  const [servedBy] = await query<{ address: string; in_recovery: boolean }>(rehearsal.endpoints.readWrite, 'SELECT host(inet_server_addr()) AS address, pg_is_in_recovery() AS in_recovery');
  expect(servedBy).toEqual({ address: report.newWriterAddress, in_recovery: false });
  expect(rehearsal.healthChecker()).toMatchObject({ state: 'fresh' });
  checkerPids.add(rehearsal.healthChecker().checkerPid!);
  // and every write through the read-only endpoint, on fresh connections spread over its pool, is refused
  const attempt = (endpoint: Endpoint, i: number): Promise<string> =>
    query(endpoint, `CREATE TABLE ro_write_probe_${i} (id int)`).then(
      () => 'accepted',
      (err: { code?: string }) => err.code ?? 'no code',
    );
  const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => attempt(rehearsal.endpoints.readOnly, i)));
  expect(outcomes.filter((o) => o !== '25006')).toEqual([]);
  process.stdout.write(`failover ${report.oldWriter} -> ${report.newWriter} with the checker killed: re-pointed after ${report.repointedAfterMs} ms; 30/30 writes on the read-only endpoint refused\n`);
}, 60000);

test('GIVEN the supervisor and the checker are both killed WHEN status is read THEN the report is flagged stale in the status object and text', async () => {
  // GIVEN
  const supervisorPid = rehearsal.pidOf('health-supervisor')!;
  checkerPids.add(rehearsal.healthChecker().checkerPid!);
  process.kill(-supervisorPid, 'SIGKILL');
  for (let i = 0; i < 100 && groupMembers(supervisorPid).length > 0; i++) await sleep(50);
  expect(groupMembers(supervisorPid)).toEqual([]);

  // WHEN a few intervals have passed
  const staleAfterMs = rehearsal.healthChecker().staleAfterMs;
  await sleep(staleAfterMs + 200);
  const status = await rehearsal.status();

  // THEN
  expect(status.healthChecker).toMatchObject({ state: 'stale', supervisorRunning: false });
  expect(status.healthChecker.problems).toEqual([
    expect.stringMatching(/^last report \d+\.\d s old \(stale after \d+\.\d s\)$/),
    expect.stringMatching(/^checker pid \d+ that wrote it is not running$/),
    'the supervisor is not running: nothing restarts the checker if it exits',
  ]);
  const text = formatStatus(status);
  expect(text).toMatch(/supervisor \d+ NOT RUNNING/);
  expect(text).toMatch(/^ {2}STALE health report: the endpoints are not being re-pointed \(last report .* old/m);
});
