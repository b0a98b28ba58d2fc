/**
 * Runs a scenario against its own rehearsal: a fresh work dir, its own loopback block, `Rehearsal.up`,
 * and `down()` (by pid) whatever happens; the work dir is removed afterwards (logs are copied to the
 * result directory's logs/ when the scenario failed).
 */
import { chmodSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuBudgetsUnavailable, DEFAULT_CORES_PER_VCPU, networkNamespacesUnavailable, query, Rehearsal, REHEARSAL_POOLER_VCPUS, sleep, WorkDirLayout, type RehearsalSettings } from '../rehearsal';
import { initPgbench } from './pgbench';
import { round } from './stats';

/**
 * The shape every scenario runs in: as AWS would place it (as root), the instances as hosts in a data
 * namespace, each under the CPU budget of its class (db.r6gd.xlarge: 4 vCPUs x 0.1 core), so a load
 * saturates the database's budget as it saturated the seeds' instances rather than the whole machine;
 * the bench's clients reach it from the root namespace through the management link. Without root:
 * loopback, no budgets (the result records which).
 */
export function benchShape(): { readonly settings: Pick<RehearsalSettings, 'network' | 'coresPerVcpu'>; readonly description: string } {
  if (networkNamespacesUnavailable() !== undefined || cpuBudgetsUnavailable() !== undefined) return { settings: { network: 'loopback', coresPerVcpu: 0 }, description: 'loopback, no CPU budgets (not root)' };
  const cores = DEFAULT_CORES_PER_VCPU;
  return {
    settings: { network: 'namespaces', coresPerVcpu: cores },
    description: `instances in a data namespace, each under a CPU budget of ${cores} core per vCPU of db.r6gd.xlarge (${round(4 * cores, 2)} core); each pooler under a ${REHEARSAL_POOLER_VCPUS}-vCPU host's (${round(REHEARSAL_POOLER_VCPUS * cores, 2)} core)`,
  };
}

export async function withRehearsal<T>(settings: RehearsalSettings & { addressBlock: string }, logsTo: string | undefined, fn: (r: Rehearsal, workDir: string) => Promise<T>): Promise<T> {
  const workDir = mkdtempSync(join(tmpdir(), 'bench-'));
  chmodSync(workDir, 0o755);
  let rehearsal: Rehearsal | undefined;
  let failed = false;
  try {
    rehearsal = await Rehearsal.up({ healthCheckIntervalMs: 1000, ...benchShape().settings, ...settings, workDir });
    return await fn(rehearsal, workDir);
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    try {
      if (rehearsal !== undefined) await rehearsal.down();
    } finally {
      if (failed && logsTo !== undefined) cpSync(new WorkDirLayout(workDir).logsDir, join(logsTo, `logs-${settings.addressBlock}`), { recursive: true, force: true });
      rmSync(workDir, { recursive: true, force: true });
    }
  }
}

/** pgbench tables on the writer, then waits until every replica has replayed them. */
export async function preparePgbenchData(r: Rehearsal, scale = 1): Promise<void> {
  await initPgbench(r.endpoints.writer, scale);
  const deadline = Date.now() + 30000;
  for (const replica of r.endpoints.replicas) {
    for (;;) {
      const rows = await query<{ n: number }>(replica, 'SELECT count(*)::int AS n FROM pgbench_accounts').catch(() => [{ n: -1 }]);
      if (rows[0]?.n === 100000 * scale) break;
      if (Date.now() > deadline) throw new Error(`${replica.name} did not replay the pgbench tables within 30 s`);
      await sleep(200);
    }
  }
}

/** Postmaster pids of the current replicas, by node name (for CPU and memory accounting). */
export function replicaPostmasters(r: Rehearsal): Record<string, number | undefined> {
  return Object.fromEntries(r.endpoints.replicas.map((e) => [e.name, r.pidOf(e.name)]));
}
