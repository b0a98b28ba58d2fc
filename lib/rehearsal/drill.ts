/**
 * The writer failover drill: a write workload with sequential ids through the read/write endpoint;
 * the writer is killed and a replica promoted; afterwards every acknowledged id must be present on the
 * new writer, and the downtime (the longest gap between two acknowledged writes) is reported.
 */
import { Client } from 'pg';
import { RehearsalOperationError } from './errors';
import type { Rehearsal } from './rehearsal';
import type { Endpoint, FailoverReport } from './types';
import { clientConfig, query, sleep } from './sql';

export const DRILL_TABLE = 'rehearsal_drill';

export interface WorkloadResult {
  /** Ids whose INSERT was acknowledged (committed), in order. */
  readonly acknowledged: ReadonlyArray<number>;
  /** Failed attempts (each retried with the same id, which the ON CONFLICT insert makes safe). */
  readonly errors: number;
  /** Longest time between two consecutive acknowledgements. */
  readonly maxGapMs: number;
  /** Time of each acknowledgement (ms since the epoch), aligned with `acknowledged`. */
  readonly ackTimes: ReadonlyArray<number>;
}

export interface WriteWorkload {
  /** Resolves once `count` more writes have been acknowledged. */
  acknowledgedAtLeast(count: number, timeoutMs: number): Promise<void>;
  stop(): Promise<WorkloadResult>;
}

/** Starts one client writing ids 1, 2, 3, ... sequentially; each id is retried until acknowledged. */
export function startWriteWorkload(endpoint: Endpoint, options: { retryDelayMs?: number; timeoutMs?: number } = {}): WriteWorkload {
  const acknowledged: number[] = [];
  const ackTimes: number[] = [];
  let errors = 0;
  let stopping = false;
  const loop = (async (): Promise<void> => {
    let client: Client | undefined;
    let id = 1;
    while (!stopping) {
      try {
        if (client === undefined) {
          client = new Client(clientConfig(endpoint, options.timeoutMs ?? 2000));
          client.on('error', () => undefined);
          await client.connect();
        }
        await client.query(`INSERT INTO ${DRILL_TABLE} (id) VALUES ($1) ON CONFLICT (id) DO NOTHING`, [id]);
        acknowledged.push(id);
        ackTimes.push(Date.now());
        id++;
      } catch {
        errors++;
        void client?.end().catch(() => undefined);
        client = undefined;
        await sleep(options.retryDelayMs ?? 20);
      }
    }
    await client?.end().catch(() => undefined);
  })();
  return {
    async acknowledgedAtLeast(count, timeoutMs) {
      const target = acknowledged.length + count;
      const deadline = Date.now() + timeoutMs;
      while (acknowledged.length < target) {
        if (Date.now() > deadline) throw new RehearsalOperationError(`write workload: fewer than ${count} writes acknowledged within ${timeoutMs} ms (${errors} errors)`);
        await sleep(20);
      }
    },
    async stop() {
      stopping = true;
      await loop;
      let maxGapMs = 0;
      for (let i = 1; i < ackTimes.length; i++) maxGapMs = Math.max(maxGapMs, ackTimes[i]! - ackTimes[i - 1]!);
      return { acknowledged, errors, maxGapMs, ackTimes };
    },
  };
}

export interface DrillReport {
  readonly failover: FailoverReport;
  readonly acknowledged: number;
  /** Acknowledged ids missing on the new writer: must be empty. */
  readonly missing: ReadonlyArray<number>;
  /** Longest gap between acknowledged writes, i.e. the downtime the client saw. */
  readonly downtimeMs: number;
  readonly failedAttempts: number;
}

/** Runs the drill against a running rehearsal (which ends with a new writer). */
export async function runFailoverDrill(rehearsal: Rehearsal, options: { warmupWrites?: number; writesAfter?: number; timeoutMs?: number } = {}): Promise<DrillReport> {
  const timeoutMs = options.timeoutMs ?? 30000;
  await query(rehearsal.endpoints.readWrite, `CREATE TABLE IF NOT EXISTS ${DRILL_TABLE} (id bigint PRIMARY KEY, at timestamptz NOT NULL DEFAULT clock_timestamp())`);
  const workload = startWriteWorkload(rehearsal.endpoints.readWrite);
  let failover: FailoverReport;
  try {
    await workload.acknowledgedAtLeast(options.warmupWrites ?? 50, timeoutMs);
    failover = await rehearsal.failover(timeoutMs);
    await workload.acknowledgedAtLeast(options.writesAfter ?? 50, timeoutMs);
  } catch (err) {
    await workload.stop();
    throw err;
  }
  const result = await workload.stop();
  const present = new Set(
    (await query<{ id: string }>(rehearsal.endpoints.writer, `SELECT id FROM ${DRILL_TABLE}`)).map((r) => Number(r.id)),
  );
  return {
    failover,
    acknowledged: result.acknowledged.length,
    missing: result.acknowledged.filter((id) => !present.has(id)),
    downtimeMs: result.maxGapMs,
    failedAttempts: result.errors,
  };
}
