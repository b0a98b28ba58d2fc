/**
 * The PgBouncer engine's host agent (`apk-host serve`, host/apk_host.py) on a booted
 * Debian 13 pooler host configured by the engine's bootstrap (Rehearsal.startPoolerHost): the load
 * balancer's health endpoint follows the servers' reachability, what the exporter published to the AWS
 * emulator's CloudWatch says what the admin consoles say, the host survives a PgBouncer process killed under load, one
 * client's session state (settings, SQL-level prepared statements) never reaches another through
 * transaction pooling, startup options PgBouncer cannot carry are refused, and a named statement the
 * server rejected can be prepared again on the same connection.
 */
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { Client } from 'pg';
import { FLEET_PATHS, FLEET_PORTS, fleetPath } from '../../../lib/model/pgbouncer-fleet';
import { HOST_AGENT_FILE, HOST_LIB_DIR } from '../../../lib/model/pgbouncer-host-agent';
import { HEALTH_CACHE_SECONDS, POOLER_HEALTH_PATHS } from '../../../lib/model/pgbouncer-host-serve';
import { POOLER_METRICS, POOLER_METRICS_NAMESPACE, poolerMetricTarget } from '../../../lib/model/pgbouncer-metrics';
import { execInHost, pgbouncerPid, WorkDirLayout, type PoolerHost } from '../../../lib/rehearsal';
import { readMetrics } from '../../../lib/rehearsal/hosts/aws-emulator';
import { liveUnavailable } from '../rehearsal/isolation';
import { preparedStatementIsolation } from '../rehearsal/pooler-clients';
import { startRehearsal, stopRehearsal } from '../rehearsal/live';

const live = liveUnavailable === undefined ? describe : describe.skip;
const PERIOD_SECONDS = 2;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

type Row = Record<string, string | null>;
/** A datapoint as the exporter published it: its second (ms), name, dimensions, unit, value. */
interface Datapoint {
  readonly at: number;
  readonly metric: string;
  readonly fleet: string;
  readonly listener: string;
  readonly target: string;
  readonly unit: string;
  readonly value: number;
}

live('the host agent on a rehearsal pooler host', () => {
  let started: Awaited<ReturnType<typeof startRehearsal>> | undefined;
  let host: PoolerHost;
  const consumer = { username: 'app_agent', password: 'agent-consumer-password-0123456789' };

  const connect = async (port: number = FLEET_PORTS.readWrite, options?: string): Promise<Client> => {
    const r = started!.rehearsal;
    const c = new Client({ host: host.host, port, user: consumer.username, password: consumer.password, database: r.endpoints.writer.database, ssl: { ca: readFileSync(r.endpoints.writer.caFile, 'utf8') }, connectionTimeoutMillis: 3000, query_timeout: 5000, ...(options === undefined ? {} : { options }) });
    c.on('error', () => undefined);
    await c.connect();
    return c;
  };

  /** GET of the health endpoint from outside the host, as the load balancer asks. */
  const health = (path: string): Promise<{ status: number; body: string }> =>
    new Promise((resolve) => {
      const req = get({ host: host.host, port: host.healthPort, path, timeout: 5000 }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', (err) => resolve({ status: 0, body: err.message }));
      req.on('timeout', () => req.destroy(new Error('timeout')));
    });
  const waitHealth = async (path: string, status: number, timeoutMs = 20_000): Promise<{ ms: number; body: string }> => {
    const from = Date.now();
    let last = { status: 0, body: '' };
    while (Date.now() - from < timeoutMs) {
      last = await health(path);
      if (last.status === status) return { ms: Date.now() - from, body: last.body };
      await sleep(100);
    }
    throw new Error(`${path} answered ${last.status} (${last.body.trim()}), not ${status}, for ${timeoutMs} ms`);
  };

  /** A SHOW command on a process's admin console, by psql as the processes' own Unix user (no password). */
  /** A SHOW command on a process's admin console, read inside the host by its agent's own console client, as PgBouncer's user (no password). */
  const admin = async (name: string, command: string): Promise<Row[]> => {
    // The host's agent, imported where the bootstrap installed it (beside the AWS calls it imports).
    const script = `import json, sys\nsys.path.insert(0, "${HOST_LIB_DIR}")\nimport ${HOST_AGENT_FILE.replace(/\.py$/, '')} as agent\nprint(json.dumps(agent.admin(sys.argv[1], sys.argv[2])))`;
    const run = await execInHost(host.booted, ['runuser', '-u', 'pgbouncer', '--', 'python3', '-c', script, name, command]);
    if (run.status !== 0) throw new Error(`${name} ${command}: ${run.stderr}`);
    return JSON.parse(run.stdout) as Row[];
  };
  const processNames = (): string[] => readFileSync(fleetPath(host.root, `${FLEET_PATHS.dir}/processes`), 'utf8').trim().split(/\s+/);

  /** What the exporter would publish, computed here from the admin consoles: (listener/target/metric) -> summed columns. */
  const consoleFigures = async (command: 'SHOW POOLS' | 'SHOW STATS'): Promise<Map<string, number>> => {
    const figures = new Map<string, number>();
    for (const name of processNames()) {
      const hosts = new Map((await admin(name, 'SHOW DATABASES')).filter((d) => d.host !== null && d.host !== '').map((d) => [d.name!, d.host!]));
      for (const row of await admin(name, command)) {
        const server = hosts.get(row.database!);
        if (server === undefined) continue;
        for (const m of POOLER_METRICS.filter((x) => x.source.command === command)) {
          const value = m.source.columns.reduce((sum, c) => sum + Number(row[c]) / (c.endsWith('_us') ? 1e6 : 1), 0);
          const key = `${name.startsWith('rw') ? 'READ_WRITE' : 'READ_ONLY'}/${poolerMetricTarget(server)}/${m.metricName}`;
          figures.set(key, m.source.combine === 'max' ? Math.max(figures.get(key) ?? 0, value) : (figures.get(key) ?? 0) + value);
        }
      }
    }
    return figures;
  };

  /** Every datapoint the host published after `since` (ms), from the emulator's CloudWatch. */
  const datapoints = async (since: number): Promise<Datapoint[]> => {
    const points = (await readMetrics(host.aws, started!.rehearsal.endpoints.writer.caFile, POOLER_METRICS_NAMESPACE))
      .map((p) => ({ at: p.timestamp * 1000, metric: p.metric, fleet: p.dimensions.Fleet!, listener: p.dimensions.Listener!, target: p.dimensions.Target!, unit: p.unit, value: p.value }))
      .filter((p) => p.at > since);
    return points.sort((a, b) => a.at - b.at);
  };
  const newestRequestAfter = async (since: number): Promise<Datapoint[]> => {
    for (let i = 0; i < 50; i++) {
      const points = await datapoints(since);
      if (points.length > 0) {
        // The metrics are read one by one: a request that landed during the read shows in some of them only.
        // Read again; the newest request seen the first time is complete in the second read.
        const newest = points[points.length - 1]!.at;
        return (await datapoints(since)).filter((p) => p.at === newest);
      }
      await sleep(200);
    }
    const journal = await execInHost(host.booted, ['journalctl', '--no-pager', '-n', '20', '-u', 'apk-host.service']);
    throw new Error(`no PutMetricData after ${new Date(since).toISOString()}; the agent said: ${journal.stdout}`);
  };

  beforeAll(async () => {
    started = await startRehearsal('hostAgentSuite', { network: 'namespaces', comparisonProxies: false, maxConnections: 40 });
    host = await started.rehearsal.startPoolerHost({ consumers: [{ ...consumer, access: 'READ_WRITE' }], server: { username: 'agent_ro_server', password: 'agent-server-password-0123456789' }, metricsPeriodSeconds: PERIOD_SECONDS, fleetName: 'agent-suite/Pooler' });
    started.pids.push(host.booted.container.pid, host.booted.imds.pid);
  }, 300_000);

  afterAll(async () => {
    await stopRehearsal(started);
  }, 60_000);

  test('GIVEN both listeners healthy WHEN a reader the read-only pools use stops, then starts again THEN the read-only path answers 503 naming it, then 200, and the read/write path stays 200', async () => {
    const r = started!.rehearsal;
    await waitHealth(POOLER_HEALTH_PATHS.readWrite, 200);
    await waitHealth(POOLER_HEALTH_PATHS.readOnly, 200);
    expect((await health('/other')).status).toBe(404);
    const reader = host.values.ReaderEndpoints!.split(' ')[1]!;
    await r.stopInstance('replica2');
    const down = await waitHealth(POOLER_HEALTH_PATHS.readOnly, 503);
    expect(down.body).toContain(`server ${reader}:${host.values.ServerPort} unreachable`);
    expect((await health(POOLER_HEALTH_PATHS.readWrite)).status).toBe(200);
    const startAt = Date.now();
    await r.startInstance('replica2');
    const up = await waitHealth(POOLER_HEALTH_PATHS.readOnly, 200);
    process.stdout.write(`health endpoint: ${POOLER_HEALTH_PATHS.readOnly} answered 503 ${down.ms} ms after the reader stopped ("${down.body.trim()}"), 200 ${Date.now() - startAt} ms after its start began (${up.ms} ms after it took logins); ${POOLER_HEALTH_PATHS.readWrite} stayed 200\n`);
  }, 90_000);

  test('GIVEN clients holding connections, then a little load WHEN the exporter publishes THEN its gauges are what SHOW POOLS says, and its counter deltas add up to what SHOW STATS counted', async () => {
    // Gauges: a steady state (two transactions open, idle clients on both listeners), compared with the
    // consoles read before and after a request; retried while the two readings differ (pools still moving).
    const clients = await Promise.all([connect(), connect(), connect(), connect(), connect(FLEET_PORTS.readOnly), connect(FLEET_PORTS.readOnly)]);
    try {
      for (const c of clients.slice(0, 2)) await c.query('BEGIN; SELECT 1');
      let compared = false;
      for (let attempt = 0; attempt < 10 && !compared; attempt++) {
        const before = await consoleFigures('SHOW POOLS');
        const request = await newestRequestAfter(Date.now());
        const after = await consoleFigures('SHOW POOLS');
        if (JSON.stringify([...before]) !== JSON.stringify([...after])) continue;
        const published = new Map(request.filter((p) => POOLER_METRICS.some((m) => m.metricName === p.metric && m.source.command === 'SHOW POOLS')).map((p) => [`${p.listener}/${p.target}/${p.metric}`, p.value]));
        expect(published).toEqual(before);
        expect(published.get(`READ_WRITE/${poolerMetricTarget(host.values.ClusterEndpoint!)}/ClientConnections`)).toBeGreaterThanOrEqual(4);
        expect(published.get(`READ_WRITE/${poolerMetricTarget(host.values.ClusterEndpoint!)}/ServerConnections`)).toBeGreaterThanOrEqual(2);
        for (const p of request) expect([p.metric, p.fleet, p.unit]).toEqual([p.metric, 'agent-suite/Pooler', POOLER_METRICS.find((m) => m.metricName === p.metric)!.unit]);
        compared = true;
      }
      expect(compared).toBe(true);
      for (const c of clients.slice(0, 2)) await c.query('COMMIT');
    } finally {
      await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
    }

    // Counters: quiet for a period, the consoles' totals, load on both listeners, quiet again until a
    // request after it; the deltas published since the first reading add up to the consoles' increase.
    await sleep(PERIOD_SECONDS * 1000 + 500);
    const t0 = Date.now();
    const totals0 = await consoleFigures('SHOW STATS');
    const load = await Promise.all([connect(), connect(), connect(FLEET_PORTS.readOnly), connect(FLEET_PORTS.readOnly)]);
    const until = Date.now() + 3 * PERIOD_SECONDS * 1000;
    await Promise.all(load.map(async (c, i) => {
      // Single statements, and transactions of three queries each: the two counters differ.
      while (Date.now() < until) {
        if (i % 2 === 0) await c.query('SELECT 1');
        else for (const q of ['BEGIN', 'SELECT 1', 'COMMIT']) await c.query(q);
      }
    }));
    await Promise.all(load.map((c) => c.end()));
    await newestRequestAfter(Date.now() + 300);
    const totals1 = await consoleFigures('SHOW STATS');
    const sums = new Map<string, number>();
    for (const p of (await datapoints(t0)).filter((x) => x.metric === 'Transactions' || x.metric === 'Queries')) sums.set(`${p.listener}/${p.target}/${p.metric}`, (sums.get(`${p.listener}/${p.target}/${p.metric}`) ?? 0) + p.value);
    const increase = new Map([...totals1].map(([k, v]) => [k, v - (totals0.get(k) ?? 0)]));
    expect(sums).toEqual(increase);
    const rwTransactions = increase.get(`READ_WRITE/${poolerMetricTarget(host.values.ClusterEndpoint!)}/Transactions`) ?? 0;
    expect(rwTransactions).toBeGreaterThan(50);
    expect(increase.get(`READ_WRITE/${poolerMetricTarget(host.values.ClusterEndpoint!)}/Queries`)).toBeGreaterThan(rwTransactions);
    process.stdout.write(`metrics: ${[...increase].map(([k, v]) => `${k}=${v}`).join(', ')} (SHOW STATS increase = sum of the published deltas)\n`);
  }, 90_000);

  test('GIVEN clients looping short transactions WHEN one PgBouncer process of the host is killed with SIGKILL THEN the others keep serving, its clients reconnect, and it is back within seconds', async () => {
    const victim = 'rw-1';
    const oldPid = pgbouncerPid(host, victim)!;
    expect(oldPid).toBeGreaterThan(0);
    let stop = false;
    let errors = 0;
    const done: number[] = [];
    const loops = Array.from({ length: 8 }, async () => {
      let c: Client | undefined;
      while (!stop) {
        try {
          c ??= await connect();
          await c.query('BEGIN; SELECT 1; COMMIT');
          done.push(Date.now());
        } catch {
          errors++;
          await c?.end().catch(() => undefined);
          c = undefined;
        }
      }
      await c?.end().catch(() => undefined);
    });
    await sleep(1500);
    const killedAt = Date.now();
    process.kill(oldPid, 'SIGKILL');
    let newPid: number | undefined;
    while ((newPid = pgbouncerPid(host, victim)) === undefined || newPid === oldPid) {
      expect(Date.now() - killedAt).toBeLessThan(10_000);
      await sleep(20);
    }
    const back = await waitHealth(POOLER_HEALTH_PATHS.readWrite, 200, 10_000);
    const backAt = Date.now();
    await sleep(1500);
    stop = true;
    await Promise.all(loops);
    const during = done.filter((t) => t > killedAt && t < backAt).length;
    const after = done.filter((t) => t >= backAt).length;
    process.stdout.write(`kill -9 ${victim} under load (8 clients): ${errors} client errors, ${during} transactions served during the ${backAt - killedAt} ms until it answered again (restarted as pid ${newPid}, health 200 ${back.ms} ms after the restart), ${after} in the 1.5 s after\n`);
    expect(errors).toBeLessThanOrEqual(8);
    expect(during).toBeGreaterThan(0);
    expect(after).toBeGreaterThan(0);
    expect((await admin(victim, 'SHOW VERSION')).length).toBe(1);
  }, 60_000);

  test('GIVEN log_connections on the writer, as the kit\'s cluster sets it WHEN the load balancer checks the read/write path of an idle fleet, then of one carrying queries THEN each idle verdict connects (a "connection received" line), the busy ones none', async () => {
    const r = started!.rehearsal;
    const e = r.adminEndpoint(r.endpoints.writer.name);
    const superuser = async (sql: string): Promise<void> => {
      const c = new Client({ host: e.host, port: e.port, user: e.user, password: e.password, database: e.database, ssl: { ca: readFileSync(e.caFile, 'utf8') } });
      c.on('error', () => undefined);
      await c.connect();
      try {
        await c.query(sql);
        await c.query('SELECT pg_reload_conf()');
      } finally {
        await c.end();
      }
    };
    // PostgreSQL logs each connection at accept ("connection received: host=<source>"); a health probe's goes no
    // further (no startup packet). Left out: the addresses the rehearsal's own admin logins come from.
    const log = new WorkDirLayout(r.workDir).node(r.endpoints.writer.name).logFile;
    const pidOf = (l: string) => /\[(\d+)\]/.exec(l)?.[1];
    const sourceOf = (l: string) => /host=(\S+)/.exec(l)?.[1];
    const probes = (): number => {
      const lines = readFileSync(log, 'utf8').split('\n');
      const received = lines.filter((l) => l.includes('connection received'));
      const authorized = new Set(lines.filter((l) => l.includes('connection authorized')).map(pidOf));
      const admins = new Set(lines.filter((l) => l.includes(`connection authorized: user=${e.user} `)).map(pidOf));
      const adminSources = new Set(received.filter((l) => admins.has(pidOf(l))).map(sourceOf));
      return received.filter((l) => !authorized.has(pidOf(l)) && !adminSources.has(sourceOf(l))).length;
    };
    const CHECKS = 4;
    const verdicts = async (): Promise<number> => {
      const before = probes();
      for (let i = 0; i < CHECKS; i++) {
        expect((await health(POOLER_HEALTH_PATHS.readWrite)).status).toBe(200);
        // Past the endpoint's cache, as the load balancer's nodes check every interval.
        await sleep((HEALTH_CACHE_SECONDS + 0.5) * 1000);
      }
      return probes() - before;
    };
    await waitHealth(POOLER_HEALTH_PATHS.readWrite, 200);
    await superuser('ALTER SYSTEM SET log_connections = on');
    await sleep(1000);
    const client = await connect();
    let stop = false;
    try {
      await client.query('SELECT 1');
      // Verdicts that see the query, so the idle ones below start from it: two, since what the pools count
      // after a transaction (its server reset) can land after the first of them on a loaded machine.
      for (let i = 0; i < 2; i++) {
        await health(POOLER_HEALTH_PATHS.readWrite);
        await sleep((HEALTH_CACHE_SECONDS + 0.5) * 1000);
      }
      // WHEN the fleet is idle
      const idle = await verdicts();
      // WHEN a client runs queries through the listener all along
      const load = (async () => {
        while (!stop) {
          await client.query('SELECT 1');
          await sleep(50);
        }
      })();
      const busy = await verdicts();
      stop = true;
      await load;
      process.stdout.write(`health probes: ${idle} "connection received" lines on the writer in ${CHECKS} idle verdicts, ${busy} in ${CHECKS} verdicts under queries\n`);
      // THEN
      // Every idle verdict connects; on a loaded machine one of them can still find the pools' own counted
      // work since the previous verdict (seen once in a clean-clone run: 3 of 4), and then rightly skips its connect.
      expect(idle).toBeGreaterThanOrEqual(CHECKS - 1);
      expect(idle).toBeLessThanOrEqual(CHECKS);
      expect(busy).toBe(0);
    } finally {
      stop = true;
      await client.end();
      await superuser('ALTER SYSTEM RESET log_connections');
    }
  }, 90_000);

  test('GIVEN server_reset_query_always WHEN clients change their session (SET outside a transaction, SET ROLE, a temporary table) THEN no other client sees it on the same server connection', async () => {
    const r = started!.rehearsal;
    const e = r.adminEndpoint(r.endpoints.writer.name);
    const writer = new Client({ host: e.host, port: e.port, user: e.user, password: e.password, database: e.database, ssl: { ca: readFileSync(e.caFile, 'utf8') } });
    writer.on('error', () => undefined);
    await writer.connect();
    try {
      await writer.query(`DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'agent_probe_role') THEN CREATE ROLE agent_probe_role; END IF; END $$`);
      await writer.query(`GRANT agent_probe_role TO ${consumer.username}`);
    } finally {
      await writer.end();
    }
    const changers = await Promise.all([connect(), connect()]);
    const checkers = await Promise.all(Array.from({ length: 6 }, () => connect()));
    const tainted = new Set<number>();
    const seen = { reused: 0, leaks: [] as string[] };
    try {
      for (let round = 0; round < 40; round++) {
        for (const c of changers) {
          // One simple query, one server connection: the SET, the role and the table outlive it in the session.
          const res = (await c.query("SET statement_timeout = '4321ms'; SET ROLE agent_probe_role; CREATE TEMP TABLE IF NOT EXISTS agent_leak (x int); SELECT pg_backend_pid() AS pid")) as unknown as Array<{ rows: Array<{ pid: number }> }>;
          tainted.add(res[3]!.rows[0]!.pid);
        }
        for (const c of checkers) {
          const row = (await c.query<{ pid: number; st: string; u: string; tmp: boolean }>("SELECT pg_backend_pid() AS pid, current_setting('statement_timeout') AS st, current_user AS u, to_regclass('pg_temp.agent_leak') IS NOT NULL AS tmp")).rows[0]!;
          if (!tainted.has(row.pid)) continue;
          seen.reused++;
          if (row.st === '4321ms' || row.u !== consumer.username || row.tmp) seen.leaks.push(JSON.stringify(row));
        }
      }
    } finally {
      await Promise.all([...changers, ...checkers].map((c) => c.end().catch(() => undefined)));
    }
    process.stdout.write(`session isolation: ${tainted.size} server connections changed by clients, ${seen.reused} later checks by other clients on them, ${seen.leaks.length} saw a change\n`);
    // The checks landed on changed server connections, so a leak would have shown.
    expect(seen.reused).toBeGreaterThan(10);
    expect(seen.leaks).toEqual([]);
  }, 60_000);

  test.each(['readWrite', 'readOnly'] as const)('GIVEN clients that PREPARE and run a named statement on every server connection of the host\'s %s listener WHEN 100 fresh clients look THEN none sees or can EXECUTE the PREPARE, and PgBouncer\'s own statements are still there', async (listener) => {
    // GIVEN as many clients as the listener's processes have server connections together
    const port = FLEET_PORTS[listener];
    let preparers = 0;
    for (const name of processNames().filter((n) => n.startsWith(listener === 'readWrite' ? 'rw-' : 'ro-'))) {
      preparers += (await admin(name, 'SHOW DATABASES')).filter((d) => d.host !== null && d.host !== '').reduce((n, d) => n + Number(d.pool_size), 0);
    }
    expect(preparers).toBeGreaterThan(0);

    // WHEN
    const f = await preparedStatementIsolation(() => connect(port), { preparers, fresh: 100, batch: 10 });

    // THEN
    process.stdout.write(`host ${listener}: PREPARE on ${f.preparedOn} server connections (${f.collisions} found it there already); of ${f.fresh} fresh clients ${f.onPrepared} landed on one, ${f.saw} saw an SQL-level statement, ${f.executed} could EXECUTE it (${JSON.stringify(f.executeErrors)}); PgBouncer's statement still prepared for ${f.keptNamed} of the ${f.onNamed} on its server connections\n`);
    expect(f.onPrepared).toBeGreaterThan(f.fresh / 2);
    expect([f.collisions, f.saw, f.executed]).toEqual([0, 0, 0]);
    expect(f.executeErrors).toEqual({ '26000': f.fresh });
    expect(f.onNamed).toBeGreaterThan(0);
    expect(f.keptNamed).toBe(f.onNamed);
    expect(f.namedAgain).toBe(preparers);
  }, 120_000);

  test.each(['readWrite', 'readOnly'] as const)('GIVEN startup options WHEN a client connects to the host\'s %s listener with them THEN one PgBouncer cannot carry is refused naming it, and TimeZone is carried', async (listener) => {
    const port = FLEET_PORTS[listener];
    const refused = await connect(port, '-c default_transaction_isolation=serializable').then(async (c) => (await c.end(), 'connected'), (err: Error) => err.message);
    expect(refused).toBe('unsupported startup parameter in options: default_transaction_isolation');
    const zoned = await connect(port, '-c TimeZone=Asia/Tokyo');
    try {
      for (let i = 0; i < 5; i++) expect((await zoned.query<{ z: string }>("SELECT current_setting('TimeZone') AS z")).rows[0]!.z).toBe('Asia/Tokyo');
    } finally {
      await zoned.end();
    }
  });

  test.each(['readWrite', 'readOnly'] as const)('GIVEN a named statement the server rejects WHEN the client prepares the same name with valid SQL on the same connection (host\'s %s listener) THEN it works and the connection stays open', async (listener) => {
    const c = await connect(FLEET_PORTS[listener]);
    try {
      expect(await c.query({ name: 'retried_statement', text: 'SELEC 1' }).then(() => 'prepared', (err: { code?: string }) => err.code)).toBe('42601');
      const rows = [];
      for (let i = 0; i < 3; i++) rows.push(...(await c.query<{ n: number }>({ name: 'retried_statement', text: 'SELECT $1::int AS n', values: [i] })).rows);
      expect(rows).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
    } finally {
      await c.end().catch(() => undefined);
    }
  });
});
