/**
 * The seed's load shape: pgbench instantiations ("waves") of N clients each, a new one every few
 * seconds, all ending together. Each wave is its own pgbench process with its own -l log.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Endpoint, sleep } from '../rehearsal';
import { runPgbench, type PgbenchResult } from './pgbench';
import { percentile, round } from './stats';

export interface WavePlan {
  readonly waves: number;
  readonly clientsPerWave: number;
  readonly intervalSeconds: number;
  readonly totalSeconds: number;
  /**
   * pgbench threads per wave (default 1, as the seed's pgbench ran: a thread makes its clients'
   * connects one at a time). One thread per client saturates 2 cores so far that walsenders time out.
   */
  readonly threadsPerWave?: number;
}

export interface WavesOutcome {
  readonly startedAt: number;
  readonly endedAt: number;
  readonly results: PgbenchResult[];
}

export async function runWaves(endpoint: Endpoint, plan: WavePlan, logDir: string, label: string): Promise<WavesOutcome> {
  mkdirSync(logDir, { recursive: true });
  const startedAt = Date.now();
  const runs: Array<Promise<PgbenchResult>> = [];
  for (let w = 0; w < plan.waves; w++) {
    const at = startedAt + w * plan.intervalSeconds * 1000;
    await sleep(Math.max(0, at - Date.now()));
    runs.push(
      runPgbench({
        endpoint,
        clients: plan.clientsPerWave,
        threads: plan.threadsPerWave ?? 1,
        durationSeconds: Math.max(1, plan.totalSeconds - w * plan.intervalSeconds),
        connectPerTransaction: true,
        builtin: 'select-only',
        logPrefix: join(logDir, `${label}-wave${w + 1}`),
      }),
    );
  }
  const results = await Promise.all(runs);
  return { startedAt, endedAt: Date.now(), results };
}

export interface WaveSummary {
  readonly transactions: number;
  readonly tps: number;
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
  /** Mean of pgbench's "average connection time", weighted by transactions. */
  readonly connectAvgMs: number;
  readonly abortedClients: number;
  readonly failedTransactions: number;
  /** Aborted clients + failed transactions (+1 per pgbench that exited non-zero for another reason). */
  readonly errors: number;
  readonly clientsOffered: number;
  readonly clientsServed: number;
  readonly wallSeconds: number;
  readonly errorSamples: ReadonlyArray<string>;
}

export function summarizeWaves(o: WavesOutcome, clientsPerWave: number): WaveSummary {
  const transactions = o.results.reduce((s, r) => s + r.transactions, 0);
  const latencies = o.results.flatMap((r) => r.latenciesMs);
  const aborted = o.results.reduce((s, r) => s + r.abortedClients, 0);
  const failed = o.results.reduce((s, r) => s + r.failedTransactions, 0);
  const otherFailures = o.results.filter((r) => r.exitCode !== 0 && r.abortedClients === 0 && r.failedTransactions === 0).length;
  const connectWeighted = o.results.reduce((s, r) => s + (r.connectAvgMs ?? 0) * r.transactions, 0);
  const wallSeconds = (o.endedAt - o.startedAt) / 1000;
  const offered = o.results.length * clientsPerWave;
  return {
    transactions,
    tps: round(transactions / wallSeconds, 1),
    latencyP50Ms: round(percentile(latencies, 50), 3),
    latencyP99Ms: round(percentile(latencies, 99), 3),
    connectAvgMs: round(transactions === 0 ? Number.NaN : connectWeighted / transactions, 3),
    abortedClients: aborted,
    failedTransactions: failed,
    errors: aborted + failed + otherFailures,
    clientsOffered: offered,
    clientsServed: offered - aborted,
    wallSeconds: round(wallSeconds, 2),
    errorSamples: [...new Set(o.results.map((r) => r.stderrTail).filter((t) => t !== ''))].slice(0, 3),
  };
}
