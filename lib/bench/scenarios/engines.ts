/**
 * engines (seed 001's loads, and a writer failover no seed measured): the same loads through both engines on
 * one rehearsal, side by side with the seeds' RDS Proxy figures:
 *  - direct: the writer instance itself (the baseline every "added" figure is against);
 *  - the RDS Proxy analog: the rehearsal's read/write endpoint (PgBouncer, re-pointed by its health checker);
 *  - the PgBouncer engine: two hosts booted from the deployed user data behind the load balancer stand-in, and,
 *    for the per-query loads, one host's listener without the stand-in, so its own hop shows.
 * Loads: pgbench select-only, one client on an open connection (time per query, time added vs direct), one client
 * connecting per transaction (open+query), 16 clients on open connections (throughput); each run in interleaved
 * rounds, the path order rotated every round, each figure the median of its rounds. Then one writer failover with
 * the same writers on both engines at once (each client's longest stretch without an acknowledged write, client
 * errors, acknowledged writes lost), during the engine's own failover drill (pooler-drills/failover.ts). The hosts
 * boot once for all of it. Needs root and network namespaces; without them the scenario says so and measures nothing.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client, type ClientConfig } from 'pg';
import type { PoolerFleetSpec } from '../../model/pgbouncer-fleet';
import { FLEET_PORTS } from '../../model/pgbouncer-fleet';
import { EndpointRole } from '../../model/vocabulary';
import { clientConfig, networkNamespacesUnavailable, poolerFailoverDrill, query, sleep, type Endpoint, type FailoverDrillFigures, type Rehearsal } from '../../rehearsal';
import { BENCH_BLOCKS } from '../blocks';
import { atMost } from '../checks';
import type { Comparison } from '../comparison';
import { runPgbench } from '../pgbench';
import { preparePgbenchData, withRehearsal } from '../scope';
import { SEED_FIGURES, SEED_SOURCES } from '../seed-figures';
import { median, percentile, ratio, round } from '../stats';
import type { ScenarioResult, TargetCheck } from '../types';
import type { ScenarioContext } from './context';

const CONSUMER = { username: 'bench_engines', password: 'bench-engines-consumer-password-0123456789' };
const SERVER = { username: 'bench_engines_ro', password: 'bench-engines-server-password-0123456789' };
/** The writers' table, made before the hosts boot so the engine's consumer role is granted it with the rest. */
const FAILOVER_TABLE = 'apk_engines_failover';
/** Clients of the throughput load, the same on every path. */
const THROUGHPUT_CLIENTS = 16;

type PathKey = 'direct' | 'analog' | 'engine' | 'engineHost';

const PATH_LABELS: Record<PathKey, string> = {
  direct: 'direct (the writer instance)',
  analog: 'RDS Proxy analog (the rehearsal\'s read/write endpoint)',
  engine: 'PgBouncer engine (2 booted hosts behind the NLB stand-in)',
  engineHost: 'PgBouncer engine, one host\'s listener (no NLB stand-in)',
};
const COLUMNS: ReadonlyArray<PathKey> = ['direct', 'analog', 'engine', 'engineHost'];

interface PathRounds {
  readonly queryMs: number[];
  /** Median per-transaction latency of each round's query loops (pgbench -l): a stall inflates queryMs, not this. */
  readonly queryP50Ms: number[];
  readonly openQueryMs: number[];
  readonly tps: number[];
  errors: number;
}

/** ms per loop of `n` sequential select-only transactions by one client (1000 / pgbench's tps), after a short warm-up. */
async function loopMs(endpoint: Endpoint, n: number, connect: boolean, logPrefix?: string): Promise<{ ms: number; p50Ms: number; errors: number }> {
  // A connection per loop warms nothing a few loops do not: the warm-up is short there.
  await runPgbench({ endpoint, clients: 1, transactions: Math.min(connect ? 10 : 50, n), connectPerTransaction: connect, builtin: 'select-only', killAfterMs: 60_000 });
  const r = await runPgbench({ endpoint, clients: 1, transactions: n, connectPerTransaction: connect, builtin: 'select-only', killAfterMs: 120_000, ...(logPrefix === undefined ? {} : { logPrefix }) });
  return { ms: r.tps > 0 ? 1000 / r.tps : Number.NaN, p50Ms: percentile(r.latenciesMs, 50), errors: r.abortedClients + r.failedTransactions + (r.exitCode !== 0 && r.abortedClients === 0 ? 1 : 0) };
}

async function throughput(endpoint: Endpoint, seconds: number): Promise<{ tps: number; errors: number }> {
  const r = await runPgbench({ endpoint, clients: THROUGHPUT_CLIENTS, threads: 2, durationSeconds: seconds, connectPerTransaction: false, builtin: 'select-only' });
  return { tps: r.tps, errors: r.abortedClients + r.failedTransactions + (r.exitCode !== 0 && r.abortedClients === 0 ? 1 : 0) };
}

/** `paths` rotated by `k`: each round starts with another path, so no path always runs first (or last). */
export function rotate<T>(paths: ReadonlyArray<T>, k: number): T[] {
  const n = paths.length;
  return n === 0 ? [] : paths.map((_, i) => paths[(i + k) % n]!);
}

interface Ack {
  readonly client: number;
  readonly id: number;
  readonly at: number;
}

interface Writers {
  readonly acks: Ack[];
  /** When each failed attempt began. */
  readonly errors: number[];
  stop(): Promise<void>;
}

/**
 * `clients` writers, each on a connection of its own: one INSERT per step with a fresh id, acknowledged when the
 * commit returns; after an error the client reconnects 100 ms later (as the engine's drills do).
 */
function startWriters(config: ClientConfig, side: string, clients: number, nextId: () => number): Writers {
  const acks: Ack[] = [];
  const errors: number[] = [];
  let stopped = false;
  const worker = async (client: number): Promise<void> => {
    let c: Client | undefined;
    while (!stopped) {
      const at = Date.now();
      try {
        if (c === undefined) {
          const fresh = new Client(config);
          fresh.on('error', () => undefined);
          c = fresh;
          await fresh.connect();
        }
        const id = nextId();
        await c.query(`INSERT INTO ${FAILOVER_TABLE} (id, side) VALUES ($1, $2)`, [id, side]);
        acks.push({ client, id, at: Date.now() });
      } catch {
        errors.push(at);
        await c?.end().catch(() => undefined);
        c = undefined;
        await sleep(100);
      }
    }
    await c?.end().catch(() => undefined);
  };
  const workers = Array.from({ length: clients }, (_, i) => worker(i));
  return {
    acks,
    errors,
    stop: async () => {
      stopped = true;
      await Promise.all(workers);
    },
  };
}

/**
 * Each client's longest stretch without an acknowledged write between `from` and `to` (its first ack is measured
 * from `from`, its last to `to`): the downtime that client saw.
 */
export function clientDowntimes(acks: ReadonlyArray<Ack>, clients: number, from: number, to: number): number[] {
  return Array.from({ length: clients }, (_, client) => {
    const times = [from, ...acks.filter((a) => a.client === client && a.at > from && a.at <= to).map((a) => a.at).sort((a, b) => a - b), to];
    return Math.max(0, ...times.slice(1).map((t, i) => t - times[i]!));
  });
}

export interface FailoverSideFigures {
  readonly clients: number;
  readonly acknowledgedWrites: number;
  readonly downtimeP50Ms: number;
  readonly downtimeP99Ms: number;
  readonly downtimeMaxMs: number;
  readonly errors: number;
  readonly acknowledgedWritesLost: number;
}

async function sideFigures(r: Rehearsal, side: string, w: Writers, clients: number, from: number, to: number): Promise<FailoverSideFigures> {
  const present = new Set((await query<{ id: string }>(r.endpoints.writer, `SELECT id::text FROM ${FAILOVER_TABLE} WHERE side = $1`, [side], 10_000)).map((row) => Number(row.id)));
  const downtimes = clientDowntimes(w.acks, clients, from, to);
  return {
    clients,
    acknowledgedWrites: w.acks.length,
    downtimeP50Ms: percentile(downtimes, 50),
    downtimeP99Ms: percentile(downtimes, 99),
    downtimeMaxMs: Math.max(...downtimes),
    errors: w.errors.length,
    acknowledgedWritesLost: w.acks.filter((a) => !present.has(a.id)).length,
  };
}

/** Until every client of `w` has a write acknowledged after `after`, or `ms` passed. */
async function resumed(w: Writers, clients: number, after: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const done = new Set(w.acks.filter((a) => a.at > after).map((a) => a.client));
    if (done.size >= clients) return;
    await sleep(100);
  }
}

export async function engines(ctx: ScenarioContext): Promise<ScenarioResult> {
  const started = Date.now();
  const base = {
    name: 'engines' as const,
    title: 'Both engines on one bench: the RDS Proxy analog and the PgBouncer engine\'s booted hosts',
    seedSource: SEED_SOURCES.engines,
    startedAt: new Date(started).toISOString(),
  };
  const unavailable = networkNamespacesUnavailable();
  if (unavailable !== undefined) {
    return { ...base, durationSeconds: 0, environment: { ...ctx.environment, scaling: ctx.environment.scaling.engines }, figures: {}, ratios: {}, checks: [], notes: [`not run: the PgBouncer engine's hosts boot with systemd-nspawn in network namespaces of their own, which need root (${unavailable})`] };
  }
  const rounds = ctx.quick ? 1 : 3;
  const queryLoops = ctx.quick ? 300 : 1000;
  const openLoops = ctx.quick ? 50 : 100;
  const seconds = ctx.quick ? 4 : 8;
  const writersPerSide = ctx.quick ? 4 : 8;
  // Two engines on one cluster: after the failover the promoted replica serves both engines' read/write pools and
  // the read-only pools that pointed at it, each sized from the same percentage; at 20% of 200 they fit together
  // (4 x 40 < 197), where 40% of 100 ran the new writer out of connection slots. 16 clients fit every pool.
  const settings = { addressBlock: BENCH_BLOCKS.engines.block, network: 'namespaces' as const, replicas: 2, comparisonProxies: false, maxConnections: 200, pool: { maxConnectionsPercent: 20, maxIdleConnectionsPercent: 10, connectionBorrowTimeoutSeconds: 30 } };
  const measured = await withRehearsal(settings, ctx.outDir, async (r) => {
    await preparePgbenchData(r);
    await query(r.endpoints.writer, `CREATE TABLE IF NOT EXISTS ${FAILOVER_TABLE} (id bigint PRIMARY KEY, side text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())`);
    const login = { consumers: [{ ...CONSUMER, access: 'READ_WRITE' as const }], server: SERVER };
    ctx.log('  engines: booting two PgBouncer engine hosts and the load balancer stand-in');
    const bootAt = Date.now();
    const first = await r.startPoolerHost(login);
    const second = await r.startPoolerHost(login);
    const lb = await r.startPoolerLoadBalancer([first, second]);
    const bootSeconds = round((Date.now() - bootAt) / 1000, 1);
    const engineLogin = { database: r.endpoints.writer.database, user: CONSUMER.username, password: CONSUMER.password, caFile: r.endpoints.writer.caFile };
    const endpoints: Record<PathKey, Endpoint> = {
      direct: r.endpoints.writer,
      analog: r.endpoints.readWrite,
      engine: { ...engineLogin, name: 'pgbouncer-engine-nlb', host: lb.address, port: lb.ports[EndpointRole.READ_WRITE] },
      engineHost: { ...engineLogin, name: `pgbouncer-engine-${first.name}`, host: first.host, port: FLEET_PORTS.readWrite },
    };
    const figures = Object.fromEntries(COLUMNS.map((k): [PathKey, PathRounds] => [k, { queryMs: [], queryP50Ms: [], openQueryMs: [], tps: [], errors: 0 }])) as Record<PathKey, PathRounds>;
    const logDir = join(ctx.scratchDir, 'engines');
    mkdirSync(logDir, { recursive: true });
    for (let round_ = 0; round_ < rounds; round_++) {
      ctx.log(`  engines: round ${round_ + 1}/${rounds}: ${queryLoops} query and ${openLoops} open+query loops per path, then ${THROUGHPUT_CLIENTS} clients for ${seconds} s per path`);
      for (const key of rotate(COLUMNS, round_)) {
        const q = await loopMs(endpoints[key], queryLoops, false, join(logDir, `${key}-${round_}`));
        const o = await loopMs(endpoints[key], openLoops, true);
        figures[key].queryMs.push(q.ms);
        figures[key].queryP50Ms.push(q.p50Ms);
        figures[key].openQueryMs.push(o.ms);
        figures[key].errors += q.errors + o.errors;
      }
      // The host's listener alone is for the per-query loads: throughput through it would halve the fleet.
      for (const key of rotate<PathKey>(['direct', 'analog', 'engine'], round_)) {
        const t = await throughput(endpoints[key], seconds);
        figures[key].tps.push(t.tps);
        figures[key].errors += t.errors;
      }
    }

    ctx.log(`  engines: a writer failover, ${writersPerSide} writers through each engine, during the engine's failover drill`);
    let next = Date.now() * 1000;
    const nextId = (): number => next++;
    const writerConfig = (e: Endpoint): ClientConfig => ({ ...clientConfig(e, 3000), query_timeout: 5000 });
    const analogWriters = startWriters(writerConfig(endpoints.analog), 'analog', writersPerSide, nextId);
    const engineWriters = startWriters(writerConfig(endpoints.engine), 'engine', writersPerSide, nextId);
    const from = Date.now();
    let drill: FailoverDrillFigures;
    let to: number;
    try {
      await sleep(1000);
      const fleet: PoolerFleetSpec = { hosts: 2, vcpusPerHost: 2, readers: 2, maxConnections: r.settings.sizingMaxConnections, pool: r.settings.pool, tcpIdleTimeoutSeconds: 350 };
      drill = await poolerFailoverDrill(r, first, CONSUMER, fleet, { readers: ctx.quick ? 2 : 4 });
      const drillEnd = Date.now();
      await Promise.all([resumed(analogWriters, writersPerSide, drillEnd, 30_000), resumed(engineWriters, writersPerSide, drillEnd, 30_000)]);
    } finally {
      to = Date.now();
      await Promise.all([analogWriters.stop(), engineWriters.stop()]);
    }
    const failover = {
      analog: await sideFigures(r, 'analog', analogWriters, writersPerSide, from, to),
      engine: await sideFigures(r, 'engine', engineWriters, writersPerSide, from, to),
      engineDrill: drill,
    };
    return { bootSeconds, endpoints: Object.fromEntries(COLUMNS.map((k) => [k, `${endpoints[k].host}:${endpoints[k].port}`])), rounds: figures, failover };
  });

  const med = (key: PathKey, what: 'queryMs' | 'queryP50Ms' | 'openQueryMs' | 'tps'): number => round(median(measured.rounds[key][what]), 4);
  const added = (key: PathKey): number => round(med(key, 'queryMs') - med('direct', 'queryMs'), 4);
  const f = measured.failover;
  const comparison: Comparison = {
    columns: COLUMNS.map((k) => PATH_LABELS[k]),
    seedColumn: 'RDS Proxy (seed 001)',
    rows: [
      { metric: 'query on an open connection (1 client)', unit: 'ms', values: COLUMNS.map((k) => med(k, 'queryMs')), seed: SEED_FIGURES.coQuery.text },
      { metric: 'time added per query (vs direct)', unit: 'ms', values: COLUMNS.map((k) => (k === 'direct' ? null : added(k))), seed: 'about 0.7 ms (seed 001)' },
      { metric: 'query latency p50 (1 client, pgbench -l)', unit: 'ms', values: COLUMNS.map((k) => med(k, 'queryP50Ms')), seed: 'not published (means only)' },
      { metric: 'open+query per loop (1 client, TLS, SCRAM)', unit: 'ms', values: COLUMNS.map((k) => med(k, 'openQueryMs')), seed: SEED_FIGURES.coOpen.text },
      { metric: `throughput, ${THROUGHPUT_CLIENTS} clients on open connections`, unit: 'tx/s', values: COLUMNS.map((k) => (k === 'engineHost' ? null : med(k, 'tps'))), seed: SEED_FIGURES.engThroughput.text },
      { metric: 'errors under the loads', unit: 'errors', values: COLUMNS.map((k) => measured.rounds[k].errors), seed: 'none reported' },
      { metric: 'writer failover: downtime a client saw, p50', unit: 'ms', values: [null, f.analog.downtimeP50Ms, f.engine.downtimeP50Ms, null], seed: SEED_FIGURES.engFailover.text },
      { metric: 'writer failover: downtime a client saw, p99', unit: 'ms', values: [null, f.analog.downtimeP99Ms, f.engine.downtimeP99Ms, null], seed: SEED_FIGURES.engFailover.text },
      { metric: 'writer failover: client errors', unit: 'errors', values: [null, f.analog.errors, f.engine.errors, null], seed: SEED_FIGURES.engFailover.text },
      { metric: 'writer failover: acknowledged writes lost', unit: 'writes', values: [null, f.analog.acknowledgedWritesLost, f.engine.acknowledgedWritesLost, null], seed: SEED_FIGURES.engFailover.text },
    ],
  };
  const ratios = {
    queryEngineVsAnalog: round(ratio(med('engine', 'queryMs'), med('analog', 'queryMs')), 4),
    addedPerQueryEngineVsAnalog: round(ratio(added('engine'), added('analog')), 4),
    openQueryAnalogVsDirect: round(ratio(med('analog', 'openQueryMs'), med('direct', 'openQueryMs')), 4),
    openQueryEngineVsDirect: round(ratio(med('engine', 'openQueryMs'), med('direct', 'openQueryMs')), 4),
    throughputAnalogVsDirect: round(ratio(med('analog', 'tps'), med('direct', 'tps')), 4),
    throughputEngineVsDirect: round(ratio(med('engine', 'tps'), med('direct', 'tps')), 4),
    throughputEngineVsAnalog: round(ratio(med('engine', 'tps'), med('analog', 'tps')), 4),
    failoverDowntimeP50EngineVsAnalog: round(ratio(f.engine.downtimeP50Ms, f.analog.downtimeP50Ms), 4),
  };
  const failoverSeed = SEED_FIGURES.engFailover.text;
  // The time each engine adds per query has no target: the 0.1 ms bound was retired (docs/BENCH.md, "Retired
  // targets"); the side-by-side table reports it beside RDS Proxy's.
  const checks: TargetCheck[] = [
    atMost({ id: 'engines-failover-writes-lost-analog', metric: 'acknowledged writes lost at a writer failover, RDS Proxy analog', seed: failoverSeed, baselineLabel: 'bound', oursLabel: `RDS Proxy analog (${f.analog.acknowledgedWrites} acknowledged)`, baseline: 0, ours: f.analog.acknowledgedWritesLost, unit: 'writes', limit: 0 }),
    atMost({ id: 'engines-failover-writes-lost-engine', metric: 'acknowledged writes lost at a writer failover, PgBouncer engine (NLB stand-in)', seed: failoverSeed, baselineLabel: 'bound', oursLabel: `PgBouncer engine (${f.engine.acknowledgedWrites} acknowledged)`, baseline: 0, ours: f.engine.acknowledgedWritesLost, unit: 'writes', limit: 0 }),
  ];
  return {
    ...base,
    durationSeconds: round((Date.now() - started) / 1000, 1),
    environment: {
      ...ctx.environment,
      settings,
      load: { rounds, queryLoops, openLoops, throughputClients: THROUGHPUT_CLIENTS, throughputSeconds: seconds, writersPerSide, client: 'pgbench -n -b select-only [-C], TLS verify-full, SCRAM; writers: node-postgres, one INSERT per step' },
      fleet: 'two hosts of 2 vCPUs booted from the deployed user data (Debian 13, systemd, cloud-init), the load balancer stand-in (HAProxy, the target groups\' health checks) in front',
      scaling: ctx.environment.scaling.engines,
    },
    figures: measured,
    ratios,
    comparison,
    checks,
    notes: [
      `Each per-query, open+query and throughput figure is the median of ${rounds} interleaved round${rounds === 1 ? '' : 's'} (the path order rotated each round); the hosts booted once (${measured.bootSeconds} s) for every load.`,
      `The NLB stand-in is HAProxy relaying TCP in userspace; AWS's NLB forwards in the network. Its own hop is the difference between the engine's two columns: ${round(med('engine', 'queryMs') - med('engineHost', 'queryMs'), 4)} ms per query here.`,
      `Failover: ${f.analog.clients} writers per engine wrote through it at once while the writer was killed and a replica promoted; a client's downtime is its longest stretch without an acknowledged write, p50/p99 over the clients (with ${f.analog.clients}, p99 is the worst client). The engine's own drill through a host's listener in the same failover: writes stood still ${f.engineDrill.writeDowntimeMs} ms, ${f.engineDrill.acknowledgedWritesLost} acknowledged writes lost, ${f.engineDrill.readsFromWriter} reads from the writer through the read-only listener.`,
      'The analog\'s PgBouncer runs under a CPU budget of its own (a cgroup, as the rehearsal\'s pooler host); the booted hosts\' processes have none and wait for a core among every other task of the machine, so on a busy machine their tail (and mean) grows more than their median: compare the p50 row with the mean.',
      'The analog re-points its read/write pool when its health checker sees the promotion; the engine\'s pools reach the writer by the cluster endpoint\'s name, which the failover moves as Aurora\'s DNS does (PgBouncer caches it for its DNS TTL).',
    ],
  };
}
