/**
 * reader_added (seed Test 2): the same pgbench -C waves, offered beyond what two replicas capped at
 * max_connections can hold directly; a third replica is added mid-run (Rehearsal.addReplica: clone,
 * start, HAProxy runtime API, the health checker puts it into the read-only pool). Once through
 * HAProxy and once through the PgBouncer read-only endpoint, each on a fresh rehearsal. Measured:
 * server connections per replica before and after the join (pg_stat_activity every 200 ms), the new
 * replica's share, and the client connections served (offered minus the clients pgbench had to abort).
 */
import { join } from 'node:path';
import { type AddReplicaReport, type Endpoint, type Rehearsal, sleep } from '../../rehearsal';
import { BENCH_BLOCKS } from '../blocks';
import { atLeastShare, atMost, moreBy } from '../checks';
import { ConnectionSampler, windowStats, type Sample } from '../sampler';
import { preparePgbenchData, withRehearsal } from '../scope';
import { SEED_FIGURES, SEED_SOURCES } from '../seed-figures';
import { ratio, round } from '../stats';
import type { ScenarioResult } from '../types';
import { runWaves, summarizeWaves, type WavePlan } from '../waves';
import type { ScenarioContext } from './context';

interface SideFigures {
  readonly endpoint: string;
  readonly added: AddReplicaReport;
  readonly addedAtSecond: number;
  readonly before: { readonly perReplicaAvg: number; readonly byReplica: Record<string, number> };
  readonly after: { readonly perReplicaAvg: number; readonly byReplica: Record<string, number>; readonly newReplicaShare: number };
  readonly peakPerReplica: number;
  readonly clientsOffered: number;
  readonly clientsServed: number;
  readonly errors: number;
  readonly transactions: number;
  readonly tps: number;
  readonly errorSamples: ReadonlyArray<string>;
}

const r1 = (n: number): number => round(n, 1);
const roundAll = (o: Readonly<Record<string, number>>): Record<string, number> => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, r1(v)]));

async function side(r: Rehearsal, which: 'haproxy' | 'pooler', plan: WavePlan, addAfterSeconds: number, logDir: string): Promise<SideFigures> {
  const endpoint: Endpoint = which === 'haproxy' ? r.endpoints.haproxy! : r.endpoints.readOnly;
  const sampler = new ConnectionSampler(r.applicationRoles, 200);
  for (const e of r.endpoints.replicas) await sampler.add(e.name, r.adminEndpoint(e.name));
  sampler.start();
  const t0 = Date.now();
  const load = runWaves(endpoint, plan, logDir, which);
  await sleep(Math.max(0, t0 + addAfterSeconds * 1000 - Date.now()));
  const addStarted = Date.now();
  const added = await r.addReplica();
  const joinedAt = Date.now();
  await sampler.add(added.name, r.adminEndpoint(added.name));
  const outcome = await load;
  const samples: Sample[] = await sampler.stop();
  const waves = summarizeWaves(outcome, plan.clientsPerWave);
  const old = r.endpoints.replicas.filter((e) => e.name !== added.name).map((e) => e.name);
  const all = [...old, added.name];
  // Before: all waves running, nothing added yet. After: 2 s after the join (pool reload, HAProxy check).
  const lastWave = outcome.startedAt + (plan.waves - 1) * plan.intervalSeconds * 1000;
  const before = windowStats(samples, lastWave + 1000, addStarted, old);
  const after = windowStats(samples, joinedAt + 2000, outcome.endedAt - 500, all);
  const afterTotal = Object.values(after.byInstance).reduce((a, b) => a + b, 0);
  return {
    endpoint: `${endpoint.name} ${endpoint.host}:${endpoint.port}`,
    added,
    addedAtSecond: r1((addStarted - outcome.startedAt) / 1000),
    before: { perReplicaAvg: r1(before.perInstanceAvg), byReplica: roundAll(before.byInstance) },
    after: { perReplicaAvg: r1(after.perInstanceAvg), byReplica: roundAll(after.byInstance), newReplicaShare: round(afterTotal === 0 ? 0 : (after.byInstance[added.name] ?? 0) / afterTotal, 4) },
    peakPerReplica: windowStats(samples, outcome.startedAt, outcome.endedAt, all).perInstancePeak,
    clientsOffered: waves.clientsOffered,
    clientsServed: waves.clientsServed,
    errors: waves.errors,
    transactions: waves.transactions,
    tps: waves.tps,
    errorSamples: waves.errorSamples,
  };
}

export async function readerAdded(ctx: ScenarioContext): Promise<ScenarioResult> {
  const started = Date.now();
  // 600 clients meet 3 x 100 slots once the third replica joins: 2x the direct path's capacity, more
  // than the seed's 1,742 offered to 931 slots (1.87x).
  const plan: WavePlan = ctx.quick ? { waves: 6, clientsPerWave: 100, intervalSeconds: 1, totalSeconds: 14 } : { waves: 6, clientsPerWave: 100, intervalSeconds: 3, totalSeconds: 36 };
  const addAfterSeconds = ctx.quick ? 7 : 18;
  const base = {
    replicas: 2,
    // The same per-replica max_connections on both sides: 100 application connections per replica.
    maxConnections: 100,
    pool: { maxConnectionsPercent: 100, maxIdleConnectionsPercent: 5, connectionBorrowTimeoutSeconds: 120 },
    maxClientConnections: 2000,
  };
  const logDir = join(ctx.scratchDir, 'reader_added');
  const haproxy = await withRehearsal({ ...base, addressBlock: BENCH_BLOCKS.readerAddedHaproxy.block }, ctx.outDir, async (r) => {
    await preparePgbenchData(r);
    ctx.log(`  reader_added: baseline, HAProxy: ${plan.waves} waves of ${plan.clientsPerWave} clients, a replica added after ${addAfterSeconds} s`);
    return side(r, 'haproxy', plan, addAfterSeconds, logDir);
  });
  const pooler = await withRehearsal({ ...base, addressBlock: BENCH_BLOCKS.readerAddedPooler.block }, ctx.outDir, async (r) => {
    await preparePgbenchData(r);
    ctx.log(`  reader_added: PgBouncer read-only endpoint: the same waves and replica`);
    return side(r, 'pooler', plan, addAfterSeconds, logDir);
  });
  const ratios = {
    serverConnectionsPerReplicaBefore: round(ratio(pooler.before.perReplicaAvg, haproxy.before.perReplicaAvg), 4),
    serverConnectionsPerReplicaAfter: round(ratio(pooler.after.perReplicaAvg, haproxy.after.perReplicaAvg), 4),
    newReplicaShare: round(ratio(pooler.after.newReplicaShare, haproxy.after.newReplicaShare), 4),
    clientsServed: round(ratio(pooler.clientsServed, haproxy.clientsServed), 4),
    tps: round(ratio(pooler.tps, haproxy.tps), 4),
  };
  const labels = { baselineLabel: 'HAProxy (reader endpoint)', oursLabel: 'PgBouncer read-only' };
  const checks = [
    atLeastShare({ id: 'ra-new-replica-share', metric: 'new replica\'s share of read-only server connections after it joins', seed: SEED_FIGURES.raNewReader.text, ...labels, baseline: haproxy.after.newReplicaShare, ours: pooler.after.newReplicaShare, unit: 'share', min: 0.25 }),
    // The seed's point: demand beyond what the readers can hold directly, all of it served through the proxy.
    moreBy({ id: 'ra-offered-vs-capacity', metric: `clients offered vs the direct path's capacity (${base.replicas + 1} replicas x max_connections ${base.maxConnections})`, seed: SEED_FIGURES.raClients.text, baselineLabel: 'direct capacity after the join', oursLabel: 'clients offered', baseline: (base.replicas + 1) * base.maxConnections, ours: pooler.clientsOffered, unit: 'clients', factor: 1.87 }),
    atLeastShare({ id: 'ra-pooler-served', metric: 'offered clients served (HAProxy: those it did not refuse)', seed: SEED_FIGURES.raClients.text, ...labels, baseline: haproxy.clientsServed / haproxy.clientsOffered, ours: pooler.clientsServed / pooler.clientsOffered, unit: 'share', min: 1 }),
    atMost({ id: 'ra-pooler-errors', metric: 'errors through the pooler', seed: 'not published', ...labels, baseline: haproxy.errors, ours: pooler.errors, unit: 'errors', limit: 0 }),
  ];
  return {
    name: 'reader_added',
    title: 'A reader added mid-run (seed Test 2)',
    seedSource: SEED_SOURCES.reader_added,
    startedAt: new Date(started).toISOString(),
    durationSeconds: round((Date.now() - started) / 1000, 1),
    environment: { ...ctx.environment, settings: base, load: { ...plan, addReplicaAfterSeconds: addAfterSeconds, client: 'pgbench --select-only -C -n per wave, TLS verify-full' }, scaling: ctx.environment.scaling.reader_added },
    figures: { baseline: haproxy, ours: pooler, seedPerInstance: SEED_FIGURES.raPerInstance.text },
    ratios,
    checks,
    notes: [
      'Clients served = clients offered minus clients pgbench aborted (a refused connection aborts a pgbench client); the direct path refuses what exceeds its capacity (2 x 100 before the join, 3 x 100 after); through the pooler every offered client must be served.',
      'Each replica has its own PgBouncer processes on the read-only endpoint\'s address (so_reuseport); once the new replica streams, the health checker starts its processes and the kernel hands them their share of new client connections.',
    ],
  };
}
