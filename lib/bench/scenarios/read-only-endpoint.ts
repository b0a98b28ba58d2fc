/**
 * read_only_endpoint (seed Test 1): waves of `pgbench --select-only -C` clients through HAProxy (the
 * Aurora reader endpoint analog: connection-level round-robin, no pooling) and then through the
 * PgBouncer read-only endpoint (the RDS Proxy READ_ONLY endpoint analog), on the same rehearsal.
 * Per side: server connections per replica (pg_stat_activity every 200 ms), the replicas' PostgreSQL
 * CPU seconds (/proc, incl. reaped backends) per 1,000 transactions, backend PSS, TPS, latency, errors.
 */
import { join } from 'node:path';
import { type Endpoint, type Rehearsal, sleep } from '../../rehearsal';
import { BENCH_BLOCKS } from '../blocks';
import { atMost, fewerBy } from '../checks';
import { treeCpuSeconds } from '../proc';
import { ConnectionSampler, MemorySampler, windowStats } from '../sampler';
import { preparePgbenchData, replicaPostmasters, withRehearsal } from '../scope';
import { SEED_FIGURES, SEED_SOURCES } from '../seed-figures';
import { ratio, round } from '../stats';
import type { ScenarioResult } from '../types';
import { runWaves, summarizeWaves, type WavePlan } from '../waves';
import type { ScenarioContext } from './context';

export interface SideFigures {
  readonly endpoint: string;
  readonly serverConnectionsPerReplica: { readonly avg: number; readonly peak: number; readonly byReplica: Record<string, number> };
  readonly postgresCpuSeconds: number;
  readonly cpuSecondsPer1000Tx: number;
  /** Replicas' CPU as a share of the whole machine over the run (CloudWatch CPUUtilization analog). */
  readonly cpuUtilizationPercent: number;
  readonly backendPssMiB: { readonly avg: number; readonly peak: number };
  readonly tps: number;
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
  readonly connectAvgMs: number;
  readonly transactions: number;
  readonly errors: number;
  readonly errorSamples: ReadonlyArray<string>;
  readonly wallSeconds: number;
}

export async function measureSide(r: Rehearsal, endpoint: Endpoint, plan: WavePlan, logDir: string, label: string, cores: number): Promise<SideFigures> {
  const postmasters = replicaPostmasters(r);
  const conns = new ConnectionSampler(r.applicationRoles, 200);
  for (const e of r.endpoints.replicas) await conns.add(e.name, r.adminEndpoint(e.name));
  const mem = new MemorySampler(() => postmasters, 1000);
  const cpu0 = Object.values(postmasters).reduce((s: number, pid) => s + (pid === undefined ? 0 : treeCpuSeconds(pid) ?? 0), 0);
  conns.start();
  mem.start();
  const outcome = await runWaves(endpoint, plan, logDir, label);
  const cpu1 = Object.values(postmasters).reduce((s: number, pid) => s + (pid === undefined ? 0 : treeCpuSeconds(pid) ?? 0), 0);
  const connSamples = await conns.stop();
  const memSamples = await mem.stop();
  const waves = summarizeWaves(outcome, plan.clientsPerWave);
  const c = windowStats(connSamples, outcome.startedAt, outcome.endedAt);
  const m = windowStats(memSamples, outcome.startedAt, outcome.endedAt);
  const cpuSeconds = cpu1 - cpu0;
  return {
    endpoint: `${endpoint.name} ${endpoint.host}:${endpoint.port}`,
    serverConnectionsPerReplica: { avg: round(c.perInstanceAvg, 1), peak: c.perInstancePeak, byReplica: Object.fromEntries(Object.entries(c.byInstance).map(([k, v]) => [k, round(v, 1)])) },
    postgresCpuSeconds: round(cpuSeconds, 2),
    cpuSecondsPer1000Tx: round(waves.transactions === 0 ? Number.NaN : (cpuSeconds / waves.transactions) * 1000, 3),
    cpuUtilizationPercent: round((cpuSeconds / (waves.wallSeconds * cores)) * 100, 1),
    backendPssMiB: { avg: round(m.totalAvg, 1), peak: round(m.totalPeak, 1) },
    tps: waves.tps,
    latencyP50Ms: waves.latencyP50Ms,
    latencyP99Ms: waves.latencyP99Ms,
    connectAvgMs: waves.connectAvgMs,
    transactions: waves.transactions,
    errors: waves.errors,
    errorSamples: waves.errorSamples,
    wallSeconds: waves.wallSeconds,
  };
}

export async function readOnlyEndpoint(ctx: ScenarioContext): Promise<ScenarioResult> {
  const started = Date.now();
  const plan: WavePlan = ctx.quick ? { waves: 3, clientsPerWave: 100, intervalSeconds: 3, totalSeconds: 12 } : { waves: 5, clientsPerWave: 100, intervalSeconds: 4, totalSeconds: 30 };
  const settings = {
    addressBlock: BENCH_BLOCKS.readOnlyEndpoint.block,
    replicas: 2,
    maxConnections: 300,
    // The kit's default budget (100% of one replica's max_connections) and no idle share: RDS Proxy opens
    // server connections as clients need them (MaxIdleConnectionsPercent only says how many idle ones it
    // keeps, Aurora User Guide, rds-proxy-connections), while the stand-in's PgBouncer opens its idle share
    // up front (min_pool_size). With the kit's 5% each replica holds that floor, 15 here, which this load
    // never exceeds, so the count would be the floor and not what the load needs.
    pool: { maxConnectionsPercent: 100, maxIdleConnectionsPercent: 0, connectionBorrowTimeoutSeconds: 120 },
    maxClientConnections: 2000,
  };
  const { haproxy, pooler, poolSize } = await withRehearsal(settings, ctx.outDir, async (r) => {
    await preparePgbenchData(r);
    const logDir = join(ctx.scratchDir, 'read_only_endpoint');
    // The baseline first: the pooler's server connections only exist once a client has used it.
    ctx.log(`  read_only_endpoint: baseline, HAProxy (Aurora reader endpoint analog): ${plan.waves} waves of ${plan.clientsPerWave} clients`);
    const haproxySide = await measureSide(r, r.endpoints.haproxy!, plan, logDir, 'haproxy', ctx.environment.host.cores);
    await sleep(3000);
    ctx.log(`  read_only_endpoint: PgBouncer read-only endpoint (RDS Proxy analog): the same waves`);
    const poolerSide = await measureSide(r, r.endpoints.readOnly, plan, logDir, 'pooler', ctx.environment.host.cores);
    return { haproxy: haproxySide, pooler: poolerSide, poolSize: r.poolSizes.readOnly };
  });

  const ratios = {
    serverConnectionsAvg: round(ratio(pooler.serverConnectionsPerReplica.avg, haproxy.serverConnectionsPerReplica.avg), 4),
    serverConnectionsPeak: round(ratio(pooler.serverConnectionsPerReplica.peak, haproxy.serverConnectionsPerReplica.peak), 4),
    cpuSecondsPer1000Tx: round(ratio(pooler.cpuSecondsPer1000Tx, haproxy.cpuSecondsPer1000Tx), 4),
    cpuUtilization: round(ratio(pooler.cpuUtilizationPercent, haproxy.cpuUtilizationPercent), 4),
    backendPssAvg: round(ratio(pooler.backendPssMiB.avg, haproxy.backendPssMiB.avg), 4),
    tps: round(ratio(pooler.tps, haproxy.tps), 4),
    latencyP50: round(ratio(pooler.latencyP50Ms, haproxy.latencyP50Ms), 4),
    latencyP99: round(ratio(pooler.latencyP99Ms, haproxy.latencyP99Ms), 4),
    connectAvg: round(ratio(pooler.connectAvgMs, haproxy.connectAvgMs), 4),
  };
  const labels = { baselineLabel: 'HAProxy (reader endpoint)', oursLabel: 'PgBouncer read-only' };
  const checks = [
    fewerBy({ id: 'ro-server-connections', metric: 'server connections per replica (avg)', seed: SEED_FIGURES.roConnections.text, ...labels, baseline: haproxy.serverConnectionsPerReplica.avg, ours: pooler.serverConnectionsPerReplica.avg, unit: 'connections', factor: 8 }),
    fewerBy({ id: 'ro-cpu-per-1000tx', metric: 'PostgreSQL CPU s per 1,000 transactions', seed: SEED_FIGURES.roCpu.text, ...labels, baseline: haproxy.cpuSecondsPer1000Tx, ours: pooler.cpuSecondsPer1000Tx, unit: 'CPU s', factor: 3, word: 'less' }),
    atMost({ id: 'ro-pooler-errors', metric: 'errors through the pooler', seed: SEED_FIGURES.roErrors.text, ...labels, baseline: haproxy.errors, ours: pooler.errors, unit: 'errors', limit: 0 }),
  ];
  return {
    name: 'read_only_endpoint',
    title: 'Read-only endpoint vs reader endpoint (seed Test 1)',
    seedSource: SEED_SOURCES.read_only_endpoint,
    startedAt: new Date(started).toISOString(),
    durationSeconds: round((Date.now() - started) / 1000, 1),
    environment: { ...ctx.environment, settings: { ...settings, readOnlyPoolSize: poolSize }, load: { ...plan, client: 'pgbench --select-only -C -n, one pgbench process per wave, TLS verify-full' }, scaling: ctx.environment.scaling.read_only_endpoint },
    figures: { baseline: haproxy, ours: pooler, seedMemory: SEED_FIGURES.roMemory.text },
    ratios,
    checks,
    notes: [
      'CPU: utime+stime of the replicas\' postmasters and their live children plus cutime+cstime (reaped backends), before/after each side.',
      'Memory: summed PSS of the replicas\' postmaster children (backends and background processes), sampled every second.',
      'Latency p50/p99: pgbench -l per-transaction times, which exclude the connection setup; connectAvgMs is pgbench\'s own "average connection time".',
      `Each replica has pools of its own behind the read-only endpoint (pool_size ${poolSize} per replica, split over its PgBouncer processes), as RDS Proxy gives each reader its own budget.`,
    ],
  };
}
