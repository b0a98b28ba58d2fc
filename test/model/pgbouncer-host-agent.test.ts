/**
 * The PgBouncer engine's host agent (`apk-host serve`, lib/model/pgbouncer-host-serve.ts) on a rehearsal
 * pooler host configured by the engine's bootstrap: the load balancer's health endpoint follows the
 * servers' reachability, the exporter's PutMetricData requests (the stand-in writes their form bodies)
 * say what the admin consoles say, the host survives a PgBouncer process killed under load, and one
 * client's session settings never reach another through transaction pooling.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { get } from 'node:http';
import { join } from 'node:path';
import { Client } from 'pg';
import { FLEET_PATHS, FLEET_PORTS, fleetPath } from '../../lib/model/pgbouncer-fleet';
import { HEALTH_CACHE_SECONDS, POOLER_HEALTH_PATHS } from '../../lib/model/pgbouncer-host-serve';
import { POOLER_METRICS, POOLER_METRICS_NAMESPACE, poolerMetricTarget } from '../../lib/model/pgbouncer-metrics';
import { logTail, pgbouncerPid, serverOsUser, WorkDirLayout, type PoolerHost } from '../../lib/rehearsal';
import { liveUnavailable } from '../rehearsal/isolation';
import { startRehearsal, stopRehearsal } from '../rehearsal/live';

const live = liveUnavailable === undefined ? describe : describe.skip;
const PERIOD_SECONDS = 2;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

type Row = Record<string, string>;
/** A datapoint as the exporter sent it: the request's file time, name, dimensions, unit, value. */
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

  const connect = async (port: number = FLEET_PORTS.readWrite): Promise<Client> => {
    const r = started!.rehearsal;
    const c = new Client({ host: host.host, port, user: consumer.username, password: consumer.password, database: r.endpoints.writer.database, ssl: { ca: readFileSync(r.endpoints.writer.caFile, 'utf8') }, connectionTimeoutMillis: 3000, query_timeout: 5000 });
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
  const admin = (name: string, command: string): Row[] => {
    const user = serverOsUser();
    const socketDir = fleetPath(host.root, `${FLEET_PATHS.runDir}/${name}`);
    const psql = ['psql', '-X', '--csv', '-h', socketDir, '-p', String(FLEET_PORTS[name.startsWith('rw') ? 'readWrite' : 'readOnly']), '-U', 'pgbouncer', '-d', 'pgbouncer', '-c', command];
    const run = user === undefined ? spawnSync(psql[0]!, psql.slice(1), { encoding: 'utf8' }) : spawnSync('setpriv', [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--init-groups', ...psql], { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`${name} ${command}: ${run.stderr}`);
    const [header, ...lines] = run.stdout.trim().split('\n');
    const columns = header!.split(',');
    return lines.map((line) => Object.fromEntries(line.split(',').map((v, i) => [columns[i]!, v])));
  };
  const processNames = (): string[] => readFileSync(fleetPath(host.root, `${FLEET_PATHS.dir}/processes`), 'utf8').trim().split(/\s+/);

  /** What the exporter would publish, computed here from the admin consoles: (listener/target/metric) -> summed columns. */
  const consoleFigures = (command: 'SHOW POOLS' | 'SHOW STATS'): Map<string, number> => {
    const figures = new Map<string, number>();
    for (const name of processNames()) {
      const hosts = new Map(admin(name, 'SHOW DATABASES').filter((d) => d.host !== '').map((d) => [d.name!, d.host!]));
      for (const row of admin(name, command)) {
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

  /** Every datapoint of the requests written after `since` (ms), each request checked for the namespace. */
  const datapoints = (since: number): Datapoint[] => {
    if (!existsSync(host.cloudWatchDir)) return [];
    const points: Datapoint[] = [];
    for (const file of readdirSync(host.cloudWatchDir).filter((f) => f.endsWith('.txt'))) {
      const at = Number(file.slice(0, -4)) * 1000;
      if (at <= since) continue;
      const form = new URLSearchParams(readFileSync(join(host.cloudWatchDir, file), 'utf8'));
      expect([form.get('Action'), form.get('Namespace')]).toEqual(['PutMetricData', POOLER_METRICS_NAMESPACE]);
      for (let i = 1; form.has(`MetricData.member.${i}.MetricName`); i++) {
        const p = (k: string): string => form.get(`MetricData.member.${i}.${k}`) ?? '';
        const dims = Object.fromEntries([1, 2, 3].map((j) => [p(`Dimensions.member.${j}.Name`), p(`Dimensions.member.${j}.Value`)]));
        points.push({ at, metric: p('MetricName'), fleet: dims.Fleet!, listener: dims.Listener!, target: dims.Target!, unit: p('Unit'), value: Number(p('Value')) });
      }
    }
    return points.sort((a, b) => a.at - b.at);
  };
  const newestRequestAfter = async (since: number): Promise<Datapoint[]> => {
    for (let i = 0; i < 50; i++) {
      const points = datapoints(since);
      if (points.length > 0) return points.filter((p) => p.at === points[points.length - 1]!.at);
      await sleep(200);
    }
    throw new Error(`no PutMetricData request after ${new Date(since).toISOString()}; the agent said: ${logTail(host.agent.logFile)}`);
  };

  beforeAll(async () => {
    started = await startRehearsal('hostAgentSuite', { network: 'namespaces', peers: false, maxConnections: 40 });
    host = await started.rehearsal.startPoolerHost({ consumers: [{ ...consumer, access: 'READ_WRITE' }], server: { username: 'agent_ro_server', password: 'agent-server-password-0123456789' }, metricsPeriodSeconds: PERIOD_SECONDS, fleetName: 'agent-suite/Pooler' });
    started.pids.push(...host.processes.map((p) => p.pid), host.agent.pid);
  }, 150_000);

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
        const before = consoleFigures('SHOW POOLS');
        const request = await newestRequestAfter(Date.now());
        const after = consoleFigures('SHOW POOLS');
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
    const totals0 = consoleFigures('SHOW STATS');
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
    const totals1 = consoleFigures('SHOW STATS');
    const sums = new Map<string, number>();
    for (const p of datapoints(t0).filter((x) => x.metric === 'Transactions' || x.metric === 'Queries')) sums.set(`${p.listener}/${p.target}/${p.metric}`, (sums.get(`${p.listener}/${p.target}/${p.metric}`) ?? 0) + p.value);
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
    expect(admin(victim, 'SHOW VERSION').length).toBe(1);
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
      // A verdict that sees the query, so the idle ones below start from it.
      await health(POOLER_HEALTH_PATHS.readWrite);
      await sleep((HEALTH_CACHE_SECONDS + 0.5) * 1000);
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
      expect(idle).toBe(CHECKS);
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
});
