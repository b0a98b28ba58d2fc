/**
 * read_write_split (seed: ProxySQL vs the Aurora cluster endpoint): the same mixed read/write load
 * (80% point reads, 20% single-row updates, 12 closed-loop clients) sent
 *  - all to the writer (through the PgBouncer read/write endpoint, like the cluster endpoint),
 *  - split by the application over the read/write and read-only endpoints (two connections per client),
 *  - through pgpool-II, which routes the reads to the replicas itself (the ProxySQL analog).
 * Each instance is pinned to its own core (writer CPU 0, replicas CPU 1), so the writer is one
 * instance's worth of CPU as in the seed. Measured: operations/s, writer and replica CPU (/proc).
 */
import { pinGroup } from '../pinning';
import { runMixedLoad, type MixedLoadResult } from '../mixed-load';
import { treeCpuSeconds } from '../proc';
import { preparePgbenchData, withRehearsal } from '../scope';
import { moreBy } from '../checks';
import { SEED_FIGURES, SEED_SOURCES } from '../seed-figures';
import { ratio, round } from '../stats';
import type { ScenarioResult } from '../types';
import { type Endpoint, type Rehearsal, sleep } from '../../rehearsal';
import { BENCH_BLOCKS } from '../blocks';
import type { ScenarioContext } from './context';

interface ModeFigures extends MixedLoadResult {
  readonly mode: string;
  readonly writerCpuSeconds: number;
  /** Writer CPU over the run as a share of its one core. */
  readonly writerCpuPercent: number;
  readonly replicasCpuSeconds: number;
  readonly writerCpuMsPer1000Ops: number;
}

async function mode(r: Rehearsal, name: string, read: Endpoint, write: Endpoint, durationMs: number, log: (line: string) => void): Promise<ModeFigures> {
  log(`  read_write_split: ${name}, ${durationMs / 1000} s`);
  const writerPid = r.pidOf(r.endpoints.writer.name)!;
  const replicaPids = r.endpoints.replicas.map((e) => r.pidOf(e.name)).filter((p): p is number => p !== undefined);
  const cpu = (): { w: number; rep: number } => ({ w: treeCpuSeconds(writerPid) ?? 0, rep: replicaPids.reduce((s, p) => s + (treeCpuSeconds(p) ?? 0), 0) });
  // Warm-up (connections, caches) is part of runMixedLoad's connect phase; CPU is read around the run.
  const before = cpu();
  const load = await runMixedLoad({ read, write, clients: 12, workers: 2, durationMs, readShare: 0.8, accounts: 100000 });
  const after = cpu();
  const w = after.w - before.w;
  const ops = load.reads + load.writes;
  return {
    mode: name,
    ...load,
    opsPerSecond: round(load.opsPerSecond, 1),
    seconds: round(load.seconds, 2),
    writerCpuSeconds: round(w, 2),
    writerCpuPercent: round((w / load.seconds) * 100, 1),
    replicasCpuSeconds: round(after.rep - before.rep, 2),
    writerCpuMsPer1000Ops: round(ops === 0 ? Number.NaN : (w / ops) * 1e6, 1),
  };
}

export async function readWriteSplit(ctx: ScenarioContext): Promise<ScenarioResult> {
  const started = Date.now();
  const durationMs = ctx.quick ? 6000 : 20000;
  const settings = { addressBlock: BENCH_BLOCKS.readWriteSplit.block, replicas: 2, maxConnections: 100, pool: { maxConnectionsPercent: 50, maxIdleConnectionsPercent: 10, connectionBorrowTimeoutSeconds: 120 } };
  const figures = await withRehearsal(settings, ctx.outDir, async (r) => {
    await preparePgbenchData(r);
    const pinned = { writer: pinGroup(r.pidOf(r.endpoints.writer.name)!, '0'), replicas: r.endpoints.replicas.map((e) => pinGroup(r.pidOf(e.name)!, '1')) };
    const e = r.endpoints;
    const allToWriter = await mode(r, 'all-to-writer (read/write endpoint)', e.readWrite, e.readWrite, durationMs, ctx.log);
    await sleep(1000);
    const split = await mode(r, 'split (read-only + read/write endpoints)', e.readOnly, e.readWrite, durationMs, ctx.log);
    await sleep(1000);
    const pgpool = await mode(r, 'pgpool-II query routing', e.pgpool!, e.pgpool!, durationMs, ctx.log);
    return { pinned, allToWriter, split, pgpool };
  });
  const ratios = {
    splitThroughput: round(ratio(figures.split.opsPerSecond, figures.allToWriter.opsPerSecond), 4),
    pgpoolThroughput: round(ratio(figures.pgpool.opsPerSecond, figures.allToWriter.opsPerSecond), 4),
    splitWriterCpuPer1000Ops: round(ratio(figures.split.writerCpuMsPer1000Ops, figures.allToWriter.writerCpuMsPer1000Ops), 4),
    pgpoolWriterCpuPer1000Ops: round(ratio(figures.pgpool.writerCpuMsPer1000Ops, figures.allToWriter.writerCpuMsPer1000Ops), 4),
  };
  const checks = [
    moreBy({ id: 'rw-split-throughput', metric: 'operations/s, split vs all to the writer', seed: SEED_FIGURES.rwThroughput.text, baselineLabel: 'all to writer', oursLabel: 'split over endpoints', baseline: figures.allToWriter.opsPerSecond, ours: figures.split.opsPerSecond, unit: 'ops/s', factor: 1.13 }),
  ];
  return {
    name: 'read_write_split',
    title: 'Read/write split vs all to the writer (seed ProxySQL)',
    seedSource: SEED_SOURCES.read_write_split,
    startedAt: new Date(started).toISOString(),
    durationSeconds: round((Date.now() - started) / 1000, 1),
    environment: { ...ctx.environment, settings, load: { clients: 12, workerThreads: 2, readShare: 0.8, durationSeconds: durationMs / 1000, pinning: 'writer -> CPU 0, replicas -> CPU 1 (taskset on every process of each instance); clients and poolers unpinned' }, scaling: ctx.environment.scaling.read_write_split },
    figures,
    ratios,
    checks,
    notes: ['Writes are synchronous (quorum of one replica), as in every rehearsal; pgpool-II is reported beside the split (ratio pgpoolThroughput), not targeted.'],
  };
}
