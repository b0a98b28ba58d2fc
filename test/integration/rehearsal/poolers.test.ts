/**
 * The PgBouncer processes behind each endpoint on a live rehearsal (loopback block poolersSuite): two per
 * pool target on one address:port (so_reuseport), cancel requests across them (peering), named
 * prepared statements in transaction pooling, no session state passed between clients (SQL-level
 * prepared statements included), startup options carried or refused, never dropped, a named
 * statement the server rejected prepared again on the same connection, and a
 * process killed with SIGKILL under load: the others take its new connections and the supervisor
 * starts it again after the units' RestartSec=.
 */
import { Client } from 'pg';
import { CONNECTION_RESERVE, RESERVED_CONNECTIONS } from '../../../lib/model';
import { clientConfig, isAlive, type Endpoint, type PoolSizes, type Rehearsal, type RehearsalStatus, query, waitFor } from '../../../lib/rehearsal';
import { FLEET_RESTART_SECONDS } from '../../../lib/model/pgbouncer-host-units';
import { DEALLOCATE_SQL_PREPARED, MAX_PREPARED_STATEMENTS, SERVER_RESET_QUERY } from '../../../lib/model/pgbouncer-ini';
import { startRehearsal, stopRehearsal } from './live';
import { cancelKey, connected, FreshConnectionProber, LoopingClients, pipelined, preparedStatementIsolation, sendCancel } from './pooler-clients';

let started: Awaited<ReturnType<typeof startRehearsal>> | undefined;
let rehearsal: Rehearsal;

beforeAll(async () => {
  started = await startRehearsal('poolersSuite', { poolerProcesses: 2 });
  rehearsal = started.rehearsal;
  await query(rehearsal.endpoints.readWrite, 'CREATE TABLE pooler_load (id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())');
}, 90000);

afterAll(async () => {
  // Poolers the supervisor restarted are tracked too: down() stops them by pid.
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

const LISTENERS = ['readWrite', 'readOnly'] as const;

/** A client of `endpoint` with startup `options` (as PGOPTIONS or psql's options=): connected, or the login's error. */
async function connectWithOptions(endpoint: Endpoint, options: string): Promise<Client | Error> {
  const client = new Client({ ...clientConfig(endpoint, 10000), options });
  client.on('error', () => undefined);
  return client.connect().then(
    () => client,
    (err: Error) => err,
  );
}

describe('what one client leaves behind in its session', () => {
  test.each(LISTENERS)('GIVEN clients that PREPARE and run a named statement on every server connection of the %s endpoint WHEN 100 fresh clients look THEN none sees or can EXECUTE the PREPARE, and PgBouncer\'s own statements are still there', async (listener) => {
    // GIVEN as many clients as the endpoint has server connections (each replica has a pool of its own)
    const endpoint = rehearsal.endpoints[listener];
    const preparers = listener === 'readWrite' ? rehearsal.poolSizes.readWrite : rehearsal.poolSizes.readOnly * rehearsal.endpoints.replicas.length;

    // WHEN
    const f = await preparedStatementIsolation(() => connected(endpoint), { preparers, fresh: 100, batch: 10 });

    // THEN
    process.stdout.write(`${listener}: PREPARE on ${f.preparedOn} server connections (${f.collisions} found it there already); of ${f.fresh} fresh clients ${f.onPrepared} landed on one, ${f.saw} saw an SQL-level statement ${JSON.stringify(f.sawSamples)}, ${f.executed} could EXECUTE it (${JSON.stringify(f.executeErrors)}); PgBouncer's statement still prepared for ${f.keptNamed} of the ${f.onNamed} on its server connections\n`);
    // The fresh clients landed on prepared server connections, so a leak would have shown.
    expect(f.onPrepared).toBeGreaterThan(f.fresh / 2);
    expect(f.collisions).toBe(0);
    expect(f.saw).toBe(0);
    expect(f.executed).toBe(0);
    expect(f.executeErrors).toEqual({ '26000': f.fresh });
    // The reset keeps PgBouncer's protocol-level statements (PGBOUNCER_<n>): no re-Parse after every transaction.
    expect(f.onNamed).toBeGreaterThan(0);
    expect(f.keptNamed).toBe(f.onNamed);
    expect(f.namedAgain).toBe(preparers);
  }, 120000);

  test.each(LISTENERS)('GIVEN startup options PgBouncer cannot carry (a default isolation level, a search_path) WHEN a client connects to the %s endpoint with them THEN the login is refused naming the parameter, never served with the defaults', async (listener) => {
    for (const [options, parameter] of [
      ['-c default_transaction_isolation=serializable', 'default_transaction_isolation'],
      ['-c search_path=app,public', 'search_path'],
      ['--statement_timeout=5s', 'statement_timeout'],
    ] as const) {
      // WHEN
      const outcome = await connectWithOptions(rehearsal.endpoints[listener], options);
      if (!(outcome instanceof Error)) await outcome.end();

      // THEN
      expect(outcome).toBeInstanceOf(Error);
      expect((outcome as Error).message).toBe(`unsupported startup parameter in options: ${parameter}`);
    }
  });

  test.each(LISTENERS)('GIVEN a startup option PgBouncer tracks (TimeZone) WHEN a client connects to the %s endpoint with it THEN every transaction of the client has it, and other clients keep the default', async (listener) => {
    // WHEN
    const endpoint = rehearsal.endpoints[listener];
    const zoned = await connectWithOptions(endpoint, '-c TimeZone=Asia/Tokyo');
    if (zoned instanceof Error) throw zoned;
    const plain = await connected(endpoint);
    try {
      const seen: string[] = [];
      for (let i = 0; i < 10; i++) {
        seen.push((await zoned.query<{ z: string }>("SELECT current_setting('TimeZone') AS z")).rows[0]!.z);
        seen.push((await plain.query<{ z: string }>("SELECT current_setting('TimeZone') AS z")).rows[0]!.z);
      }

      // THEN
      expect(seen.filter((_, i) => i % 2 === 0)).toEqual(Array(10).fill('Asia/Tokyo'));
      expect(seen.filter((_, i) => i % 2 === 1).every((z) => z !== 'Asia/Tokyo')).toBe(true);
    } finally {
      await Promise.all([zoned.end(), plain.end()]);
    }
  });

  test.each(['readWrite', 'readOnly', 'writer'] as const)('GIVEN a named statement the server rejects WHEN the client prepares the same name with valid SQL on the same connection (%s) THEN it works and the connection stays open', async (target) => {
    // GIVEN
    const client = await connected(rehearsal.endpoints[target]);
    try {
      const bad = await client.query({ name: 'retried_statement', text: 'SELEC 1' }).then(() => 'prepared', (err: { code?: string }) => err.code);
      expect(bad).toBe('42601');

      // WHEN
      const rows = [];
      for (let i = 0; i < 3; i++) rows.push(...(await client.query<{ n: number }>({ name: 'retried_statement', text: 'SELECT $1::int AS n', values: [i] })).rows);

      // THEN
      expect(rows).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
      expect((await client.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await client.end().catch(() => undefined);
    }
  });

  test.each(['readWrite', 'readOnly', 'writer'] as const)('GIVEN a pipeline whose first Parse the server rejects (%s) WHEN the client prepares each of its names again THEN each works: the rejected one, one the server skipped, and one PgBouncer answered itself', async (target) => {
    const wire = await pipelined(rehearsal.endpoints[target]);
    try {
      // GIVEN one transaction (one server connection) on which 'SELECT 2 AS n' is prepared already, so
      // PgBouncer answers a Parse of it itself; 'SELECT 3 AS n' it forwards
      expect(await wire.send([{ query: 'BEGIN' }])).toEqual(['commandComplete', 'readyForQuery T']);
      expect(await wire.send([{ parse: 'warm', text: 'SELECT 2 AS n' }])).toEqual(['parseComplete', 'readyForQuery T']);
      const failed = await wire.send([
        { parse: 'p_bad', text: 'SELEC 1' },
        { parse: 'p_known', text: 'SELECT 2 AS n' },
        { parse: 'p_new', text: 'SELECT 3 AS n' },
      ]);
      expect(failed).toEqual(['error 42601', 'readyForQuery E']);
      expect(await wire.send([{ query: 'ROLLBACK' }])).toEqual(['commandComplete', 'readyForQuery I']);

      // WHEN
      const again = await wire.send([
        { parse: 'p_known', text: 'SELECT 2 AS n' },
        { run: 'p_known' },
        { parse: 'p_new', text: 'SELECT 3 AS n' },
        { run: 'p_new' },
        { parse: 'p_bad', text: 'SELECT 1 AS n' },
        { run: 'p_bad' },
      ]);

      // THEN as PostgreSQL itself answers (the writer, directly)
      const ran = (n: number): string[] => ['parseComplete', 'bindComplete', `dataRow ["${n}"]`, 'commandComplete'];
      expect(again).toEqual([...ran(2), ...ran(3), ...ran(1), 'readyForQuery I']);
    } finally {
      wire.close();
    }
  });
});

describe('the reset after every transaction', () => {
  /** µs of each run of `a` and of `b`, run alternately `runs` times after a warm-up (a shared machine: compare medians). */
  async function alternately(client: Client, a: string, b: string, runs: number): Promise<[number[], number[]]> {
    const times: [number[], number[]] = [[], []];
    for (let i = 0; i < runs + 50; i++) {
      for (const [k, sql] of [a, b].entries()) {
        const t0 = process.hrtime.bigint();
        await client.query(sql);
        if (i >= 50) times[k]!.push(Number(process.hrtime.bigint() - t0) / 1000);
      }
    }
    return times;
  }
  const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;

  test('GIVEN a server connection holding PgBouncer\'s statements, and a public.format that would hijack an unqualified call WHEN the reset runs THEN a PREPARE is gone, PgBouncer\'s stay, and what deallocating adds per transaction is measured', async () => {
    // GIVEN a direct connection standing in for a pooled one (names as PgBouncer gives them), and a
    // function a client could create to be chosen over the built-in format(text, VARIADIC "any")
    const admin = { ...rehearsal.adminEndpoint(rehearsal.endpoints.writer.name), database: rehearsal.endpoints.writer.database };
    await query(admin, "CREATE FUNCTION public.format(text, text) RETURNS text LANGUAGE sql AS $$SELECT 'SELECT 1'$$");
    const client = await connected(rehearsal.endpoints.writer);
    const withoutDeallocation = SERVER_RESET_QUERY.replace(`; ${DEALLOCATE_SQL_PREPARED}`, '');
    expect(withoutDeallocation).not.toBe(SERVER_RESET_QUERY);
    const figures: string[] = [];
    try {
      for (const held of [0, MAX_PREPARED_STATEMENTS]) {
        for (let i = (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_prepared_statements')).rows[0]!.n; i < held; i++) {
          await client.query({ name: `PGBOUNCER_${i + 1}`, text: `SELECT ${i} AS n, $1::text AS t`, values: ['x'] });
        }
        // WHEN both resets run, alternately
        const [before, after] = await alternately(client, withoutDeallocation, SERVER_RESET_QUERY, 1000);
        figures.push(`${held} statements held: ${Math.round(median(before))} µs without the deallocation, ${Math.round(median(after))} µs with it (+${Math.round(median(after) - median(before))} µs per transaction)`);

        // THEN
        await client.query("PREPARE leak_probe AS SELECT 1; PREPARE \"Quoted \"\"name\" AS SELECT 2");
        await client.query(SERVER_RESET_QUERY);
        const left = (await client.query<{ from_sql: boolean; n: number }>('SELECT from_sql, count(*)::int AS n FROM pg_prepared_statements GROUP BY from_sql')).rows;
        expect(left).toEqual(held === 0 ? [] : [{ from_sql: false, n: held }]);
      }
    } finally {
      await client.end();
      await query(admin, 'DROP FUNCTION public.format(text, text)');
    }
    process.stdout.write(`server_reset_query on the writer over TLS, medians of 1,000 runs each: ${figures.join('; ')}\n`);
  }, 60000);
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
    // systemd's RestartSec= on a host (FLEET_RESTART_SECONDS), then a poll and a spawn.
    expect(restartedAfterMs).toBeGreaterThanOrEqual(FLEET_RESTART_SECONDS * 1000);
    expect(restartedAfterMs).toBeLessThan(FLEET_RESTART_SECONDS * 1000 + 4000);
    // Clients attached to the killed process lose their connection once; fresh ones go to the survivor.
    expect(figures.errors).toBeLessThanOrEqual(20);
    expect(lastClientError - killedAt).toBeLessThan(5000);
    expect(lastProbeFailure - killedAt).toBeLessThan(5000);
    // Still serving after recovery: the last second had no error and moved on.
    expect(figures.transactions).toBeGreaterThan(atRecovery.transactions);
    expect(figures.errors).toBe(atRecovery.errors);
    expect(rehearsal.healthChecker().poolerRestarts).toBeGreaterThanOrEqual(1);
    const rows = (await pools('readWrite')).filter((r) => r.database === 'kit');
    expect(rows.map((r) => r.pooler).sort()).toEqual(['pgbouncer-rw-1', 'pgbouncer-rw-2']);
  });
});
