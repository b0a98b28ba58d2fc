/**
 * Drills on the PgBouncer engine's booted hosts (pooler-host.ts), shared by the test suite and the bench: each
 * runs clients under load, makes one failure happen as AWS would, and returns what the clients saw.
 * - writer failover through a host's listeners: how long writes stood still, acknowledged writes lost, reads
 *   through the read-only listener served by the new writer, and when the promoted reader's read-only pools
 *   moved to the former writer's instance endpoint (READ_ONLY_ROUTING);
 * - a host lost behind the load balancer stand-in: when the stand-in took it out, the client errors, and
 *   when a replacement booted from the same user data served;
 * - `kill -9` of one PgBouncer process under load: when systemd had it running and serving again, the client
 *   errors;
 * - a reader lost and back under reads through the read-only listener: how long reads stood still (the other
 *   readers' processes keep serving), the client errors, when the reader's pools served again;
 * - a bootstrap that fails (a packages object whose checksums do not hold): the host's FAILURE signal to the
 *   emulator's CloudFormation, no SUCCESS, and when it powered off.
 * Each figure has its bound next to it (a function or constant here, from the model's settings): the booted
 * suite and the bench hold the figures to them.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { EndpointRole } from '../model/vocabulary';
import { FLEET_LISTENER_SHORT, FLEET_PATHS, FLEET_PORTS, fleetPath, fleetProcessName, planFleetProcesses, type FleetListener, type PoolerFleetSpec } from '../model/pgbouncer-fleet';
import { POOLER_HEALTH_CHECK } from '../model/pgbouncer-host-serve';
import { FLEET_RESTART_SECONDS } from '../model/pgbouncer-host-units';
import { DEFAULT_SERVER_LOGIN_RETRY_SECONDS } from '../model/pgbouncer-ini';
import { RehearsalOperationError } from './errors';
import { createStack, readSignals, seedAws, type EmulatedSignal } from './hosts/aws-emulator';
import { execInHost } from './hosts/booted-host';
import { healthyTargets } from './hosts/load-balancer';
import { rehearsalAwsNames } from './network/rehearsal-network';
import { isAlive, killHost, killProcess, logTail, stopProcess } from './processes';
import { sleep } from './sql';
import { addPoolerLoadBalancerTarget, pgbouncerPid, type PoolerHost, type PoolerHostOptions, type PoolerLoadBalancer } from './pooler-host';
import type { Rehearsal } from './rehearsal';

export interface DrillLogin {
  readonly username: string;
  readonly password: string;
}


/**
 * Ends a client's connection. node-postgres' end() can wait for ever on a connection whose startup timed out
 * (a pool holding the client while its server is down): a second, then the socket is dropped.
 */
async function close(c: Client): Promise<void> {
  const ended = await Promise.race([c.end().then(() => true, () => true), sleep(1000).then(() => false)]);
  if (!ended) (c as unknown as { connection?: { stream?: { destroy: () => void } } }).connection?.stream?.destroy();
}

/** A consumer's TLS connection (verify-full against the rehearsal CA) to an address and port. */
/** `fn` until it succeeds, every 250 ms for up to `ms`; then its last error. */
async function retrying<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() >= deadline) throw err;
      await sleep(250);
    }
  }
}

async function connectTo(r: Rehearsal, host: string, port: number, login: DrillLogin): Promise<Client> {
  const c = new Client({ host, port, user: login.username, password: login.password, database: r.endpoints.writer.database, ssl: { ca: readFileSync(r.endpoints.writer.caFile, 'utf8') }, connectionTimeoutMillis: 3000, query_timeout: 5000 });
  c.on('error', () => undefined);
  try {
    await c.connect();
    return c;
  } catch (err) {
    await close(c);
    throw err;
  }
}

/**
 * `clients` loops, each on a connection of its own, reconnecting after an error (100 ms later) and, when
 * `reconnectEvery` is set (or returns a number), after that many of its queries (as a pool's clients open
 * connections now and then). `connections` holds each loop's open connection. An error is counted at the time
 * its attempt began: one begun before a failure may end after it.
 */
function load(clients: number, connect: () => Promise<Client>, step: (c: Client) => Promise<void>, reconnectEvery?: number | (() => number | undefined)): { errors: number[]; messages: Record<string, number>; connections: ReadonlyArray<Client | undefined>; stop: () => Promise<void> } {
  const errors: number[] = [];
  const messages: Record<string, number> = {};
  const connections: Array<Client | undefined> = Array.from({ length: clients }, () => undefined);
  let stopped = false;
  const drop = async (i: number): Promise<void> => {
    const c = connections[i];
    connections[i] = undefined;
    if (c !== undefined) await close(c);
  };
  const worker = async (i: number): Promise<void> => {
    let n = 0;
    while (!stopped) {
      const attemptAt = Date.now();
      try {
        connections[i] ??= await connect();
        await step(connections[i]!);
        n++;
      } catch (err) {
        errors.push(attemptAt);
        const message = errorKind(err);
        messages[message] = (messages[message] ?? 0) + 1;
        await drop(i);
        await sleep(100);
      }
      const every = typeof reconnectEvery === 'function' ? reconnectEvery() : reconnectEvery;
      if (every !== undefined && n % every === 0) await drop(i);
    }
    await drop(i);
  };
  const workers = Array.from({ length: clients }, (_, i) => worker(i));
  return {
    errors,
    messages,
    connections,
    stop: async () => {
      stopped = true;
      await Promise.all(workers);
    },
  };
}

/** An error's message without what varies from one to the next (addresses, pids), to count errors by kind. */
function errorKind(err: unknown): string {
  return String((err as Error).message ?? err)
    .replace(/\d+(\.\d+){3}(:\d+)?/g, '<address>')
    .replace(/\d+/g, 'N')
    .slice(0, 120);
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
  /** Reads through the read-only listener that a writer served (pg_is_in_recovery() false): 0 is the bound. */
  readonly readsFromWriter: number;
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
  // Counted through the listener like any client, which retries: a process the load did not reach may still
  // fail its first login fast for server_login_retry after the outage, then connect.
  const present = await retrying(10_000, async () => {
    const check = await connectTo(r, host.host, FLEET_PORTS.readWrite, login);
    try {
      return new Set((await check.query<{ id: string }>('SELECT id::text FROM apk_failover_drill WHERE id >= $1', [String(acks[0]?.id ?? 0)])).rows.map((row) => Number(row.id)));
    } finally {
      await close(check);
    }
  });
  const lost = acks.filter((a) => !present.has(a.id)).length;
  return {
    promoted: report.newWriter,
    writeDowntimeMs,
    acknowledgedWrites: acks.length,
    writeErrors: writes.errors.length,
    acknowledgedWritesLost: lost,
    reads,
    readsFromWriter: fromWriter.length,
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

/**
 * What a killed PgBouncer process may take beyond systemd's RestartSec= (FLEET_RESTART_SECONDS) to serve
 * again: its start (Type=notify: ready once it listens), then a client of the load landing on it (they
 * reconnect every 10 queries, the kernel spreading new connections over the listener's processes).
 */
export const PROCESS_RESTART_ALLOWANCE_SECONDS = 4;

/** How long after a `kill -9` the process may take to serve a client again: RestartSec= plus the allowance. */
export function processRestartBoundMs(): number {
  return (FLEET_RESTART_SECONDS + PROCESS_RESTART_ALLOWANCE_SECONDS) * 1000;
}

export interface ProcessKillDrillFigures {
  readonly process: string;
  readonly clients: number;
  /** When systemd had started it again (a new pid), after the kill (undefined: not within the bound + 5 s). */
  readonly restartedAfterMs: number | undefined;
  /** When the restarted process had carried a client's query (on a server connection of its own), after the kill. */
  readonly servingAgainAfterMs: number | undefined;
  readonly boundMs: number;
  /** Client errors of attempts begun from the kill on (each a client whose connection was on the killed process). */
  readonly errors: number;
  readonly errorKinds: Readonly<Record<string, number>>;
  /** Client errors of attempts begun after the restarted process served. */
  readonly errorsAfterServing: number;
  /** Queries the listener's other processes served between the kill and the restarted process's first. */
  readonly servedMeanwhile: number;
}

/**
 * SIGKILLs PgBouncer process `process` of `host` (default rw-1) while `clients` query through its listener,
 * reconnecting every 10 queries; waits until systemd has restarted it (Restart=always) and it has served a
 * client, then 1 s more.
 */
export async function poolerProcessKillDrill(r: Rehearsal, host: PoolerHost, login: DrillLogin, options: { readonly process?: string; readonly clients?: number } = {}): Promise<ProcessKillDrillFigures> {
  const name = options.process ?? `${FLEET_LISTENER_SHORT.readWrite}-1`;
  const listener = (Object.keys(FLEET_LISTENER_SHORT) as FleetListener[]).find((l) => FLEET_LISTENER_SHORT[l] === name.split('-')[0]);
  const oldPid = pgbouncerPid(host, name);
  if (listener === undefined || oldPid === undefined) throw new RehearsalOperationError(`kill drill: no PgBouncer process ${name} runs on ${host.name}: name one of its processes (rw-1, ro-1, ...)`);
  const clients = options.clients ?? 8;
  // Each query says which server connection carried it (its local port on the host): a process's own are its sockets.
  const served: Array<{ readonly at: number; readonly port: number }> = [];
  const traffic = load(clients, () => connectTo(r, host.host, FLEET_PORTS[listener], login), async (c) => {
    const row = (await c.query<{ p: number }>('SELECT inet_client_port() AS p')).rows[0]!;
    served.push({ at: Date.now(), port: row.p });
  }, 10);
  const boundMs = processRestartBoundMs();
  try {
    await sleep(1500);
    const killedAt = Date.now();
    process.kill(oldPid, 'SIGKILL');
    let newPid: number | undefined;
    const restarted = await waitUntil(() => {
      newPid = pgbouncerPid(host, name);
      return newPid !== undefined && newPid !== oldPid;
    }, boundMs + 5000, 20);
    const restartedAt = killedAt + (restarted ?? 0);
    let servingAt: number | undefined;
    if (restarted !== undefined) {
      await waitUntil(() => {
        const own = localPortsOf(newPid!);
        servingAt = served.find((q) => q.at >= restartedAt && own.has(q.port))?.at;
        return servingAt !== undefined;
      }, boundMs + 5000, 50);
    }
    await sleep(1000);
    return {
      process: name,
      clients,
      restartedAfterMs: restarted,
      servingAgainAfterMs: servingAt === undefined ? undefined : servingAt - killedAt,
      boundMs,
      // Every error of the drill: the load ran clean before the kill, and an attempt begun just before it may fail by it.
      errors: traffic.errors.length,
      errorKinds: { ...traffic.messages },
      errorsAfterServing: servingAt === undefined ? traffic.errors.length : traffic.errors.filter((at) => at > servingAt!).length,
      servedMeanwhile: served.filter((q) => q.at > killedAt && q.at <= (servingAt ?? Date.now())).length,
    };
  } finally {
    await traffic.stop();
  }
}

/** The local TCP ports of a process's sockets (its own file descriptors, looked up in its namespace's TCP tables). */
function localPortsOf(pid: number): Set<number> {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m !== null) inodes.add(m[1]!);
      } catch {
        // Closed in between.
      }
    }
  } catch {
    return new Set();
  }
  const ports = new Set<number>();
  for (const table of ['tcp', 'tcp6']) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && inodes.has(f[9]!)) ports.add(parseInt(f[1]!.split(':')[1]!, 16));
    }
  }
  return ports;
}

/**
 * The longest reads may stand still through the read-only listener while a reader is lost. Clients that keep
 * their connections stay on the process the kernel gave them (the listener's processes share its port), so a
 * client on another reader's process never notices; those on the lost reader's process fail and reconnect. The
 * drill starts once every reader has served, so some client is on another reader's process: what remains is one
 * query's time on a loaded machine, with room.
 */
export const READER_LOST_GAP_BOUND_MS = 3000;

/**
 * How long after a lost reader takes logins again its pools may take to serve: PgBouncer tries the server again
 * server_login_retry after the last failed attempt, then a connection the kernel gives to that reader's process
 * logs in (the prober opens one per read), with room for both.
 */
export function readerBackBoundMs(): number {
  return (DEFAULT_SERVER_LOGIN_RETRY_SECONDS + 4) * 1000;
}

export interface ReaderLostDrillFigures {
  readonly reader: string;
  /** Clients that keep their connection (reconnecting after an error), beside the prober. */
  readonly clients: number;
  readonly outageMs: number;
  readonly reads: number;
  /** Reads served while the reader was down (from its stop until it took logins again), by instance. */
  readonly readsDuringOutage: Readonly<Record<string, number>>;
  /** The longest stretch without a read served, from the stop until the reader took logins again. */
  readonly longestGapMs: number;
  readonly gapBoundMs: number;
  /** Client errors (the clients' and the prober's) from the stop on. */
  readonly errors: number;
  readonly errorKinds: Readonly<Record<string, number>>;
  /** The prober's connections while the reader was down: how many, and how many of them failed. */
  readonly proberAttemptsDuringOutage: number;
  readonly proberErrorsDuringOutage: number;
  /** When a read was served by the reader again, after it took logins (undefined: not within the bound + 5 s). */
  readonly servedAgainAfterMs: number | undefined;
  readonly servedAgainBoundMs: number;
  /** Client errors of attempts begun after the reader served again. */
  readonly errorsAfterServedAgain: number;
  /** Reads through the read-only listener served by an instance not in recovery. */
  readonly readsFromWriter: number;
  /** When its pools did not serve again in time: the read-only processes' last log lines (what PgBouncer said). */
  readonly poolLog?: string;
}

/**
 * Stops replica `reader` (default the last one; a clean fast shutdown, as Aurora restarts an instance) for
 * `outageMs` while `clients` read through `host`'s read-only listener on connections they keep, and a prober
 * opens a new connection for every read (as a client without a pool does), then starts the reader again and
 * waits until a read is served by it. Each read says which instance served it (its cluster_name).
 */
export async function poolerReaderLostDrill(r: Rehearsal, host: PoolerHost, login: DrillLogin, options: { readonly reader?: string; readonly clients?: number; readonly outageMs?: number } = {}): Promise<ReaderLostDrillFigures> {
  const replicas = r.endpoints.replicas.map((e) => e.name);
  const reader = options.reader ?? replicas[replicas.length - 1];
  if (reader === undefined || !replicas.includes(reader) || replicas.length < 2) throw new RehearsalOperationError(`reader-lost drill: reader ${String(reader)} of replicas [${replicas.join(', ')}]: name a replica of a rehearsal with at least 2 (the others serve while it is down)`);
  const clients = options.clients ?? 4;
  const outageMs = options.outageMs ?? 5000;
  const served: Array<{ readonly at: number; readonly by: string; readonly writer: boolean; readonly prober: boolean }> = [];
  const servedBy = new WeakMap<Client, string>();
  const read = (prober: boolean) => async (c: Client): Promise<void> => {
    const row = (await c.query<{ n: string; r: boolean }>("SELECT current_setting('cluster_name') AS n, pg_is_in_recovery() AS r")).rows[0]!;
    served.push({ at: Date.now(), by: row.n, writer: !row.r, prober });
    servedBy.set(c, row.n);
  };
  const connect = (): Promise<Client> => connectTo(r, host.host, FLEET_PORTS.readOnly, login);
  // The steady clients reconnect now and then until the drill begins (spreading them over the processes), then keep their connections.
  let keep = false;
  const steady = load(clients, connect, read(false), () => (keep ? undefined : 10));
  const prober = load(1, connect, read(true), 1);
  const servedAgainBoundMs = readerBackBoundMs();
  try {
    // Every reader serving first, and some steady client connected to another reader's process as the drill begins.
    const ready = await waitUntil(() => {
      keep = replicas.every((n) => served.some((s) => s.by === n)) && steady.connections.some((c) => c !== undefined && servedBy.has(c) && servedBy.get(c) !== reader);
      return keep;
    }, 15_000, 20);
    if (ready === undefined) throw new RehearsalOperationError(`reader-lost drill: not every reader served through ${host.name}'s read-only listener within 15 s (served by: ${[...new Set(served.map((s) => s.by))].join(', ') || 'none'})`);
    const stoppedAt = Date.now();
    await r.stopInstance(reader);
    await sleep(outageMs);
    await r.startInstance(reader);
    const backAt = Date.now();
    const again = await waitUntil(() => served.some((s) => s.by === reader && s.at > backAt), servedAgainBoundMs + 5000, 50);
    const againAt = again === undefined ? undefined : backAt + again;
    await sleep(1000);
    const during = served.filter((s) => s.at >= stoppedAt && s.at <= backAt);
    const times = [stoppedAt, ...during.map((s) => s.at), backAt];
    const errors = [...steady.errors, ...prober.errors];
    const kinds: Record<string, number> = { ...steady.messages };
    for (const [k, n] of Object.entries(prober.messages)) kinds[k] = (kinds[k] ?? 0) + n;
    const inOutage = (at: number): boolean => at >= stoppedAt && at <= backAt;
    return {
      reader,
      clients,
      outageMs: backAt - stoppedAt,
      reads: served.length,
      readsDuringOutage: during.reduce<Record<string, number>>((acc, s) => ({ ...acc, [s.by]: (acc[s.by] ?? 0) + 1 }), {}),
      longestGapMs: Math.max(...times.slice(1).map((t, i) => t - times[i]!)),
      gapBoundMs: READER_LOST_GAP_BOUND_MS,
      errors: errors.filter((at) => at >= stoppedAt).length,
      errorKinds: kinds,
      proberAttemptsDuringOutage: served.filter((s) => s.prober && inOutage(s.at)).length + prober.errors.filter(inOutage).length,
      proberErrorsDuringOutage: prober.errors.filter(inOutage).length,
      servedAgainAfterMs: again,
      servedAgainBoundMs,
      errorsAfterServedAgain: againAt === undefined ? errors.length : errors.filter((at) => at > againAt).length,
      readsFromWriter: served.filter((s) => s.writer).length,
      ...(again === undefined ? { poolLog: await readOnlyLog(host) } : {}),
    };
  } finally {
    await Promise.all([steady.stop(), prober.stop()]);
    // A drill that failed halfway leaves the reader running for what comes next (while the rehearsal still runs).
    if (r.pidOf(reader) === undefined && r.pidOf(replicas.find((n) => n !== reader)!) !== undefined) await r.startInstance(reader).catch(() => undefined);
  }
}

/** The last lines the host's read-only PgBouncer processes logged (their units' journal). */
async function readOnlyLog(host: PoolerHost): Promise<string> {
  const units = readFileSync(fleetPath(host.root, `${FLEET_PATHS.dir}/processes`), 'utf8').trim().split(/\s+/).filter((n) => n.startsWith(`${FLEET_LISTENER_SHORT.readOnly}-`)).flatMap((n) => ['-u', `apk-pgbouncer@${n}.service`]);
  const out = await execInHost(host.booted, ['journalctl', '--no-pager', '-o', 'short-precise', '-n', '40', ...units]);
  return `${out.stdout}${out.stderr}`;
}

/**
 * How long a host whose bootstrap fails may take to signal FAILURE and power off: its boot, the packages
 * object's download with the fetcher's retries, the install step refusing it. A fraction of what
 * CloudFormation waits for a signal (FLEET_HOST_SIGNAL_TIMEOUT_SECONDS in pgbouncer-rollout.ts, 900 s): the
 * FAILURE, not the timeout, stops the rollout.
 */
export const BOOTSTRAP_FAILURE_BOUND_MS = 120_000;

/** The logical id the drill's stack gives the group its hosts signal (as the synthesized template's). */
const DRILL_GROUP = 'PoolerHostsASG0D1E2F3A';

export interface BootstrapFailureDrillFigures {
  readonly host: string;
  readonly instanceId: string;
  /** When the host had powered off (its systemd-nspawn exited), after its boot began (undefined: not within the bound). */
  readonly poweredOffAfterMs: number | undefined;
  readonly boundMs: number;
  /** The signals the emulator's CloudFormation received from this instance. */
  readonly failureSignals: number;
  readonly successSignals: number;
  readonly signals: ReadonlyArray<EmulatedSignal>;
  /** The host's last console lines (what the failed step said). */
  readonly console: string;
}

/**
 * Boots a new host of the fleet whose packages object does not hold (its SHA256SUMS names another file's hash,
 * so the install step refuses it) and whose user data signals a stack made for the drill in the emulator's
 * CloudFormation, as the rollout's hosts do; waits until it powers off and reads the stack's signals. `fleetHost`
 * is a host of the fleet already started (the emulator, the packages bucket).
 */
export async function poolerBootstrapFailureDrill(r: Rehearsal, fleetHost: PoolerHost, options: PoolerHostOptions): Promise<BootstrapFailureDrillFigures> {
  const caFile = r.endpoints.writer.caFile;
  const dir = join(r.workDir, 'bootstrap-failure-drill');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, 'apk-host'), 'not the agent\n');
  writeFileSync(join(dir, 'SHA256SUMS'), `${'0'.repeat(64)}  apk-host\n`);
  execFileSync('tar', ['-cf', join(dir, 'broken.tar'), '-C', dir, 'SHA256SUMS', 'apk-host']);
  const key = 'pooler/drill-broken.tar';
  await seedAws(fleetHost.aws, caFile, { objects: [{ bucket: fleetHost.values.PackagesBucket!, key, file: join(dir, 'broken.tar') }] });
  // moto's CloudFormation holds the stack only as something to signal (it is no judge of templates).
  const stack = `apk-bootstrap-drill-${Date.now()}`;
  await createStack(fleetHost.aws, caFile, stack, { Resources: { [DRILL_GROUP]: { Type: 'AWS::CloudFormation::WaitConditionHandle' } } });
  const bootAt = Date.now();
  const booting = await r.bootPoolerHost(options, { PackagesKey: key, SignalStack: stack, SignalResource: DRILL_GROUP, SignalRegion: fleetHost.aws.spec.region });
  const instanceId = booting.booted.spec.instanceId;
  try {
    const off = await waitUntil(() => !isAlive(booting.booted.container.pid), BOOTSTRAP_FAILURE_BOUND_MS - (Date.now() - bootAt), 250);
    const signals = (await readSignals(fleetHost.aws, caFile, stack)).filter((s) => s.reason.endsWith(instanceId));
    return {
      host: booting.name,
      instanceId,
      poweredOffAfterMs: off === undefined ? undefined : Date.now() - bootAt,
      boundMs: BOOTSTRAP_FAILURE_BOUND_MS,
      failureSignals: signals.filter((s) => s.status === 'FAILURE').length,
      successSignals: signals.filter((s) => s.status === 'SUCCESS').length,
      signals,
      console: logTail(booting.booted.container.logFile, 8),
    };
  } finally {
    // A host still running past the bound is stopped here; its metadata service always.
    if (isAlive(booting.booted.container.pid)) await killHost(booting.booted.container);
    await stopProcess(booting.booted.imds);
  }
}
