/**
 * The PgBouncer processes behind each endpoint on a live rehearsal (loopback block poolersSuite): two per
 * pool target on one address:port (so_reuseport), cancel requests across them (peering), named
 * prepared statements in transaction pooling, no session state passed between clients, and a
 * process killed with SIGKILL under load: the others take its new connections and the health checker
 * starts it again.
 */
import { CONNECTION_RESERVE, RESERVED_CONNECTIONS } from '../../lib/model';
import { isAlive, type PoolSizes, type Rehearsal, type RehearsalStatus, query, waitFor } from '../../lib/rehearsal';
import { startRehearsal, stopRehearsal } from './live';
import { cancelKey, connected, FreshConnectionProber, LoopingClients, sendCancel } from './pooler-clients';

let started: Awaited<ReturnType<typeof startRehearsal>> | undefined;
let rehearsal: Rehearsal;

beforeAll(async () => {
  started = await startRehearsal('poolersSuite', { poolerProcesses: 2 });
  rehearsal = started.rehearsal;
  await query(rehearsal.endpoints.readWrite, 'CREATE TABLE pooler_load (id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())');
}, 90000);

afterAll(async () => {
  // Poolers the health checker restarted are tracked too: down() stops them by pid.
  if (started !== undefined) started.pids = (await started.rehearsal.status()).processes.map((p) => p.pid);
  await stopRehearsal(started);
}, 60000);

type Pools = Exclude<RehearsalStatus['pools']['readWrite'], string>;

async function pools(which: keyof PoolSizes): Promise<Pools> {
  const p = (await rehearsal.status()).pools[which];
  if (typeof p === 'string') throw new Error(p);
  return p;
}

describe('several PgBouncer processes per endpoint', () => {
  test('GIVEN the local instances WHEN asked THEN their max_connections is the setting, as Aurora\'s is, and the pools leave the same reserve within it', async () => {
    // WHEN
    const [settings] = await query<{ max_connections: string; superuser_reserved_connections: string }>(
      rehearsal.endpoints.readWrite,
      "SELECT current_setting('max_connections') AS max_connections, current_setting('superuser_reserved_connections') AS superuser_reserved_connections",
    );
    // THEN 40 (live.ts), not 40 plus the superuser slots: those are within it, as rdsadmin's are on Aurora
    expect(settings).toEqual({ max_connections: '40', superuser_reserved_connections: String(CONNECTION_RESERVE.find((p) => p.id === 'superuser-reserved')!.connections) });
    for (const size of [rehearsal.poolSizes.readWrite, rehearsal.poolSizes.readOnly]) expect(size).toBeLessThanOrEqual(40 - RESERVED_CONNECTIONS);
  });

  test('GIVEN 2 processes per target WHEN 30 clients connect to the read/write endpoint THEN the kernel spreads them over both, each within its share of the pool', async () => {
    // WHEN
    const clients = await Promise.all(Array.from({ length: 30 }, () => connected(rehearsal.endpoints.readWrite)));
    try {
      // THEN
      const rows = (await pools('readWrite')).filter((r) => r.database === 'kit');
      expect(rows.map((r) => r.pooler).sort()).toEqual(['pgbouncer-rw-1', 'pgbouncer-rw-2']);
      for (const r of rows) expect(r.cl_active + r.cl_waiting).toBeGreaterThan(0);
      expect(rows.reduce((n, r) => n + r.cl_active + r.cl_waiting, 0)).toBe(30);
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
  });

  test('GIVEN queries running through both processes WHEN each is cancelled from a fresh connection THEN every one is cancelled, whichever process took the cancel request', async () => {
    // GIVEN 10 sleeping queries; 10 cancel requests land on random processes (all on the right one by chance: 1 in 1024)
    const clients = await Promise.all(Array.from({ length: 10 }, () => connected(rehearsal.endpoints.readWrite)));
    try {
      const sleeping = clients.map((c) => c.query('SELECT pg_sleep(30)').then(() => 'finished', (err: { code?: string }) => err.code ?? 'error'));
      await new Promise((r) => setTimeout(r, 300));
      const t0 = Date.now();

      // WHEN
      await Promise.all(clients.map((c) => sendCancel(rehearsal.endpoints.readWrite, cancelKey(c))));

      // THEN 57014 query_canceled, well before the 30 s sleep
      expect(await Promise.all(sleeping)).toEqual(Array(10).fill('57014'));
      expect(Date.now() - t0).toBeLessThan(5000);
    } finally {
      await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
    }
  });

  test('GIVEN transaction pooling WHEN 8 clients run a named prepared statement many times THEN every execution works, on whatever server connection it lands', async () => {
    // WHEN
    const backends = await Promise.all(
      Array.from({ length: 8 }, async (_, c) => {
        const client = await connected(rehearsal.endpoints.readWrite);
        try {
          const pids = new Set<number>();
          for (let i = 0; i < 15; i++) {
            const { rows } = await client.query<{ n: number; pid: number }>({ name: 'pooler_named_statement', text: 'SELECT $1::int + 1 AS n, pg_backend_pid() AS pid', values: [c * 100 + i] });
            expect(rows[0]?.n).toBe(c * 100 + i + 1);
            pids.add(rows[0]!.pid);
          }
          return pids.size;
        } finally {
          await client.end();
        }
      }),
    );

    // THEN the statement followed clients across server connections (prepared again where missing)
    expect(Math.max(...backends)).toBeGreaterThan(1);
  });

  test('GIVEN 5 clients that SET statement_timeout and search_path outside a transaction WHEN 10 fresh clients look THEN they see the defaults', async () => {
    // GIVEN
    const setters = await Promise.all(Array.from({ length: 5 }, () => connected(rehearsal.endpoints.readWrite)));
    try {
      for (const c of setters) {
        await c.query("SET statement_timeout = '7ms'");
        await c.query('SET search_path = attacker_schema');
      }

      // WHEN
      const seen = await Promise.all(
        Array.from({ length: 10 }, async () => {
          const c = await connected(rehearsal.endpoints.readWrite);
          try {
            const timeout = (await c.query<{ statement_timeout: string }>('SHOW statement_timeout')).rows[0]?.statement_timeout;
            const path = (await c.query<{ search_path: string }>('SHOW search_path')).rows[0]?.search_path;
            return `${timeout} / ${path}`;
          } finally {
            await c.end();
          }
        }),
      );

      // THEN
      expect(seen).toEqual(Array(10).fill('0 / "$user", public'));
    } finally {
      await Promise.all(setters.map((c) => c.end()));
    }
  });
});

describe('a PgBouncer process killed under load', () => {
  test('GIVEN 20 clients looping short transactions WHEN one read/write process is killed with SIGKILL THEN new connections keep working, the process is restarted, and every client recovers', async () => {
    // GIVEN
    const endpoint = rehearsal.endpoints.readWrite;
    const load = new LoopingClients(endpoint, 20, 'INSERT INTO pooler_load DEFAULT VALUES');
    const prober = new FreshConnectionProber(endpoint, 20);
    await new Promise((r) => setTimeout(r, 1500));
    const victim = rehearsal.pidOf('pgbouncer-rw-1')!;
    const before = load.figures.transactions;
    expect(before).toBeGreaterThan(0);

    // WHEN
    const killedAt = Date.now();
    process.kill(victim, 'SIGKILL');
    const restartedPid = await waitFor('pgbouncer-rw-1 to run again', 10000, async () => {
      const pid = rehearsal.pidOf('pgbouncer-rw-1');
      return pid !== undefined && pid !== victim ? pid : undefined;
    }, 20);
    const restartedAfterMs = Date.now() - killedAt;
    await new Promise((r) => setTimeout(r, 3000));
    const atRecovery = load.figures;
    await new Promise((r) => setTimeout(r, 1000));
    const [figures, probes] = await Promise.all([load.stop(), prober.stop()]);

    // THEN
    const lastClientError = Math.max(killedAt, ...figures.errorTimes);
    const lastProbeFailure = Math.max(killedAt, ...probes.failureTimes);
    process.stdout.write(
      `pooler kill -9: restarted after ${restartedAfterMs} ms (pid ${victim} -> ${restartedPid}); looping clients: ${figures.errors} errors ` +
        `(last ${lastClientError - killedAt} ms after the kill; ${[...figures.errorSamples].join(' | ')}), ${figures.transactions} transactions; ` +
        `fresh connections: ${probes.failures} of ${probes.attempts} failed (last ${lastProbeFailure - killedAt} ms after the kill)\n`,
    );
    expect(isAlive(victim)).toBe(false);
    expect(restartedAfterMs).toBeLessThan(5000);
    // Clients attached to the killed process lose their connection once; fresh ones go to the survivor.
    expect(figures.errors).toBeLessThanOrEqual(20);
    expect(lastClientError - killedAt).toBeLessThan(5000);
    expect(lastProbeFailure - killedAt).toBeLessThan(5000);
    // Still serving after recovery: the last second had no error and moved on.
    expect(figures.transactions).toBeGreaterThan(atRecovery.transactions);
    expect(figures.errors).toBe(atRecovery.errors);
    expect(rehearsal.health()?.poolerRestarts).toBeGreaterThanOrEqual(1);
    const rows = (await pools('readWrite')).filter((r) => r.database === 'kit');
    expect(rows.map((r) => r.pooler).sort()).toEqual(['pgbouncer-rw-1', 'pgbouncer-rw-2']);
  });
});
