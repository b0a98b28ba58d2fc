/**
 * Drills on the PgBouncer engine's booted hosts (pooler-host.ts), shared by the test suite and the bench: each
 * runs clients under load, makes one failure happen as AWS would, and returns what the clients saw.
 * - writer failover through a host's listeners: how long writes stood still, acknowledged writes lost, reads
 *   through the read-only listener served by the new writer, and when the promoted reader's read-only pools
 *   moved to the former writer's instance endpoint (READ_ONLY_ROUTING);
 * - a host lost behind the load balancer stand-in: when the stand-in took it out, the client errors, and
 *   when a replacement booted from the same user data served.
 */
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { EndpointRole } from '../model/vocabulary';
import { FLEET_PATHS, FLEET_PORTS, fleetPath, fleetProcessName, planFleetProcesses, READ_ONLY_CHECK_DELAY_SECONDS, type PoolerFleetSpec } from '../model/pgbouncer-fleet';
import { POOLER_HEALTH_CHECK } from '../model/pgbouncer-host-serve';
import { healthyTargets } from './hosts/load-balancer';
import { rehearsalAwsNames } from './network/rehearsal-network';
import { killHost, killProcess } from './processes';
import { sleep } from './sql';
import { addPoolerLoadBalancerTarget, type PoolerHost, type PoolerLoadBalancer } from './pooler-host';
import type { Rehearsal } from './rehearsal';

export interface DrillLogin {
  readonly username: string;
  readonly password: string;
}


/** A consumer's TLS connection (verify-full against the rehearsal CA) to an address and port. */
async function connectTo(r: Rehearsal, host: string, port: number, login: DrillLogin): Promise<Client> {
  const c = new Client({ host, port, user: login.username, password: login.password, database: r.endpoints.writer.database, ssl: { ca: readFileSync(r.endpoints.writer.caFile, 'utf8') }, connectionTimeoutMillis: 3000, query_timeout: 5000 });
  c.on('error', () => undefined);
  try {
    await c.connect();
    return c;
  } catch (err) {
    await c.end().catch(() => undefined);
    throw err;
  }
}

/**
 * `clients` loops, each on a connection of its own, reconnecting after an error (100 ms later) and, when
 * `reconnectEvery` is set, after that many of its queries (as a pool's clients open connections now and then).
 * An error is counted at the time its attempt began: one begun before a failure may end after it.
 */
function load(clients: number, connect: () => Promise<Client>, step: (c: Client) => Promise<void>, reconnectEvery?: number): { errors: number[]; stop: () => Promise<void> } {
  const errors: number[] = [];
  let stopped = false;
  const worker = async (): Promise<void> => {
    let c: Client | undefined;
    let n = 0;
    while (!stopped) {
      const attemptAt = Date.now();
      try {
        c ??= await connect();
        await step(c);
        n++;
      } catch {
        errors.push(attemptAt);
        await c?.end().catch(() => undefined);
        c = undefined;
        await sleep(100);
      }
      if (reconnectEvery !== undefined && n % reconnectEvery === 0 && c !== undefined) {
        await c.end().catch(() => undefined);
        c = undefined;
      }
    }
    await c?.end().catch(() => undefined);
  };
  const workers = Array.from({ length: clients }, () => worker());
  return {
    errors,
    stop: async () => {
      stopped = true;
      await Promise.all(workers);
    },
  };
}

async function waitUntil(ok: () => boolean | Promise<boolean>, ms: number, every = 100): Promise<number | undefined> {
  const from = Date.now();
  while (!(await ok())) {
    if (Date.now() - from > ms) return undefined;
    await sleep(every);
  }
  return Date.now() - from;
}

export interface FailoverDrillFigures {
  readonly promoted: string;
  /** The longest writes stood still from the writer's kill on. */
  readonly writeDowntimeMs: number;
  readonly acknowledgedWrites: number;
  readonly writeErrors: number;
  /** Acknowledged writes missing after the failover. */
  readonly acknowledgedWritesLost: number;
  readonly reads: number;
  /** Reads through the read-only listener that the new writer served (pg_is_in_recovery() false). */
  readonly readsFromWriter: number;
  /** Of those, the ones begun later than READ_ONLY_CHECK_DELAY_SECONDS after the promotion (the documented bound). */
  readonly readsFromWriterAfterBound: number;
  readonly readErrors: number;
  /** When every read-only pool pointed where READ_ONLY_ROUTING puts it, after the promotion (undefined: not within 20 s). */
  readonly repointedAfterMs: number | undefined;
  /** Each read-only process's server host at the end. */
  readonly readOnlyPools: Readonly<Record<string, string>>;
}

/**
 * Kills the writer while 1 client writes through `host`'s read/write listener and `readers` clients read through
 * its read-only listener, and waits until writes resume on the promoted instance. `fleet` is the host's layout
 * (its read-only processes and the readers they pool for).
 */
export async function poolerFailoverDrill(r: Rehearsal, host: PoolerHost, login: DrillLogin, fleet: PoolerFleetSpec, options: { readonly readers?: number } = {}): Promise<FailoverDrillFigures> {
  const setup = await connectTo(r, host.host, FLEET_PORTS.readWrite, login);
  try {
    await setup.query('CREATE TABLE IF NOT EXISTS apk_failover_drill (id bigint PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())');
  } finally {
    await setup.end();
  }
  const acks: Array<{ readonly id: number; readonly at: number }> = [];
  let next = Date.now() * 1000;
  const writes = load(1, () => connectTo(r, host.host, FLEET_PORTS.readWrite, login), async (c) => {
    const id = next++;
    await c.query('INSERT INTO apk_failover_drill (id) VALUES ($1)', [id]);
    acks.push({ id, at: Date.now() });
  });
  let reads = 0;
  const fromWriter: number[] = [];
  const readLoad = load(options.readers ?? 4, () => connectTo(r, host.host, FLEET_PORTS.readOnly, login), async (c) => {
    const at = Date.now();
    const row = (await c.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r')).rows[0]!;
    reads++;
    if (!row.r) fromWriter.push(at);
  });
  const homes = host.values.ReaderEndpoints!.split(' ');
  const routed = planFleetProcesses(fleet)
    .filter((p) => p.listener === 'readOnly' || p.listener === 'readOnlySession')
    .map((p) => ({ name: fleetProcessName(p), home: homes[Number(p.target.slice('reader'.length)) - 1]! }));
  const poolHost = (name: string): string => /= host=(\S+)/.exec(readFileSync(fleetPath(host.root, `${FLEET_PATHS.routesDir}/${name}.ini`), 'utf8'))?.[1] ?? '';
  let report: Awaited<ReturnType<Rehearsal['failover']>>;
  let failoverAt: number;
  let promotedAt: number;
  let repointedAfterMs: number | undefined;
  try {
    await sleep(1000);
    failoverAt = Date.now();
    report = await r.failover();
    promotedAt = Date.now();
    const promoted = rehearsalAwsNames(r.settings).instanceEndpoint(report.newWriter);
    const want = (p: { home: string }): string => (p.home === promoted ? host.values.WriterInstanceEndpoint! : p.home);
    await waitUntil(() => acks.some((a) => a.at > promotedAt), 30_000, 200);
    const repointed = await waitUntil(() => routed.every((p) => poolHost(p.name) === want(p)), 20_000);
    repointedAfterMs = repointed === undefined ? undefined : Date.now() - promotedAt;
    await sleep(1000);
  } finally {
    await Promise.all([writes.stop(), readLoad.stop()]);
  }
  const after = acks.filter((a) => a.at >= failoverAt);
  const times = [failoverAt, ...after.map((a) => a.at)];
  const writeDowntimeMs = Math.max(0, ...times.slice(1).map((t, i) => t - times[i]!));
  const check = await connectTo(r, host.host, FLEET_PORTS.readWrite, login);
  let lost: number;
  try {
    const present = new Set((await check.query<{ id: string }>('SELECT id::text FROM apk_failover_drill WHERE id >= $1', [String(acks[0]?.id ?? 0)])).rows.map((row) => Number(row.id)));
    lost = acks.filter((a) => !present.has(a.id)).length;
  } finally {
    await check.end();
  }
  const promotionAt = failoverAt + report.promotedAfterMs;
  return {
    promoted: report.newWriter,
    writeDowntimeMs,
    acknowledgedWrites: acks.length,
    writeErrors: writes.errors.length,
    acknowledgedWritesLost: lost,
    reads,
    readsFromWriter: fromWriter.length,
    readsFromWriterAfterBound: fromWriter.filter((at) => at > promotionAt + READ_ONLY_CHECK_DELAY_SECONDS * 1000).length,
    readErrors: readLoad.errors.length,
    repointedAfterMs,
    readOnlyPools: Object.fromEntries(routed.map((p) => [p.name, poolHost(p.name)])),
  };
}

/** How long a target may stay in rotation after it stops answering: the target group's checks to fail, plus one timeout. */
export function loadBalancerDetectionWindowMs(): number {
  const h = POOLER_HEALTH_CHECK;
  return (h.unhealthyThreshold * h.intervalSeconds + h.timeoutSeconds) * 1000;
}

export interface HostLostDrillFigures {
  /** When the stand-in took the lost host out of the read/write target group (undefined: not within the window + 5 s). */
  readonly outAfterMs: number | undefined;
  readonly windowMs: number;
  readonly errors: number;
  /** Client errors of attempts begun after the host was out. */
  readonly errorsAfterOut: number;
  /** Queries served in the 3 s after the host was out. */
  readonly servedAfterOut: number;
  /** When the replacement served through the stand-in, after it was registered (undefined: not within 60 s). */
  readonly replacementServedAfterMs: number | undefined;
  readonly replacement: PoolerHost;
}

/**
 * Loses `lost` (SIGKILL to its systemd and its metadata service: no shutdown, no answer) while `clients` query
 * through the load balancer stand-in's read/write listener, then boots a replacement with `replace` and registers
 * it, as the Auto Scaling group does. Every client query says which host it came through (the server sees the host's
 * address).
 */
export async function poolerHostLostDrill(r: Rehearsal, lb: PoolerLoadBalancer, lost: PoolerHost, login: DrillLogin, replace: () => Promise<PoolerHost>, options: { readonly clients?: number } = {}): Promise<HostLostDrillFigures> {
  const served: Array<{ readonly at: number; readonly by: string }> = [];
  const traffic = load(
    options.clients ?? 4,
    () => connectTo(r, lb.address, lb.ports[EndpointRole.READ_WRITE], login),
    async (c) => {
      const row = (await c.query<{ a: string }>('SELECT host(inet_client_addr()) AS a')).rows[0]!;
      served.push({ at: Date.now(), by: row.a });
    },
    20,
  );
  const windowMs = loadBalancerDetectionWindowMs();
  try {
    await waitUntil(() => served.some((s) => s.by === lost.host), 30_000, 250);
    const lostAt = Date.now();
    await killHost(lost.booted.container);
    await killProcess(lost.booted.imds);
    const out = await waitUntil(async () => !(await healthyTargets(lb))[EndpointRole.READ_WRITE].includes(lost.name), windowMs + 5000, 250);
    const outAt = out === undefined ? undefined : lostAt + out;
    const servedBefore = served.length;
    await sleep(3000);
    const servedAfterOut = served.length - servedBefore;
    const replacement = await replace();
    await addPoolerLoadBalancerTarget(lb, replacement);
    const registeredAt = Date.now();
    const joined = await waitUntil(() => served.some((s) => s.by === replacement.host && s.at >= registeredAt), 60_000, 250);
    return {
      outAfterMs: out,
      windowMs,
      errors: traffic.errors.filter((at) => at >= lostAt).length,
      errorsAfterOut: outAt === undefined ? traffic.errors.length : traffic.errors.filter((at) => at > outAt + 500).length,
      servedAfterOut,
      replacementServedAfterMs: joined,
      replacement,
    };
  } finally {
    await traffic.stop();
  }
}
