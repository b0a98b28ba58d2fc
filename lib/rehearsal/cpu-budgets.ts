/**
 * Instances as hosts: each PostgreSQL instance of a rehearsal runs under a CPU budget of its own
 * (cgroups.ts), scaled from its instance class's vCPUs (settings.coresPerVcpu cores of this machine per
 * vCPU), so a connection storm or a read-heavy load saturates that instance's budget as it saturated
 * the seeds' instances, not the whole machine. The class is the deployment's (`up --from`), else
 * REHEARSAL_INSTANCE_CLASS. The pooling tier is a host too: PgBouncer's processes (both endpoints, all
 * their groups) share one budget of settings.poolerVcpus, and each comparison proxy (HAProxy, pgpool-II)
 * has one of the same size, so a pooler cannot borrow the CPU an instance is held to. Budgets are named by the rehearsal's block, so `down` in another process
 * finds and removes them once the processes are stopped. coresPerVcpu 0 means no budgets.
 */
import { cpuCoresFor, CpuBudget, removeRehearsalBudgets } from './cgroups';
import { RehearsalOperationError } from './errors';
import type { RehearsedDeployment } from './rehearsed-deployment';
import type { ResolvedSettings } from './settings';

/** The class a rehearsal without a deployment stands in for: the reference deployment's. */
export const REHEARSAL_INSTANCE_CLASS = 'db.r6gd.xlarge';

type BudgetSettings = Pick<ResolvedSettings, 'addressBlock' | 'coresPerVcpu'>;

/** The pooler hosts: every PgBouncer process of the rehearsal, and each comparison proxy. */
export type PoolerBudgetHost = 'pgbouncer' | 'haproxy' | 'pgpool';

/** The cgroup directory name of the rehearsal: its block, e.g. rh-127-0-31. */
export function rehearsalCgroupName(s: Pick<ResolvedSettings, 'addressBlock'>): string {
  return `rh-${s.addressBlock.replace(/\./g, '-')}`;
}

/** The instance class a node stands in for: writer -> the deployment's writer, replica<i> -> its i-th reader. */
export function instanceClassOf(d: RehearsedDeployment | undefined, nodeName: string): string {
  if (d === undefined) return REHEARSAL_INSTANCE_CLASS;
  const replica = /^replica(\d+)$/.exec(nodeName);
  if (replica === null) return d.writerClass;
  // A replica added beyond the deployment's readers (addReplica) takes the last reader's class.
  return d.readerClasses[Number(replica[1]) - 1] ?? d.readerClasses[d.readerClasses.length - 1] ?? d.writerClass;
}

/** Cores of this machine a node gets (0: no budget). */
export function nodeCores(s: BudgetSettings, deployment: RehearsedDeployment | undefined, nodeName: string): number {
  return s.coresPerVcpu === 0 ? 0 : cpuCoresFor(instanceClassOf(deployment, nodeName), s.coresPerVcpu);
}

/** Makes the node's budget and returns the cgroup.procs files its server joins at start; none without budgets. */
export function nodeBudgetFiles(s: BudgetSettings, deployment: RehearsedDeployment | undefined, nodeName: string): string[] {
  const cores = nodeCores(s, deployment, nodeName);
  if (cores === 0) return [];
  return CpuBudget.create({ rehearsal: rehearsalCgroupName(s), host: nodeName, cores }).procsFiles;
}

/** Cores of this machine a pooler host gets (0: no budget). */
export function poolerCores(s: Pick<ResolvedSettings, 'coresPerVcpu' | 'poolerVcpus'>): number {
  return s.poolerVcpus * s.coresPerVcpu;
}

/** Makes the pooler host's budget and returns its cgroup.procs files; none without budgets. */
export function poolerBudgetFiles(s: Pick<ResolvedSettings, 'addressBlock' | 'coresPerVcpu' | 'poolerVcpus'>, host: PoolerBudgetHost): string[] {
  const cores = poolerCores(s);
  if (cores === 0) return [];
  return CpuBudget.create({ rehearsal: rehearsalCgroupName(s), host, cores }).procsFiles;
}

/** Removes every budget of the rehearsal; its processes must be stopped first. */
export function removeNodeBudgets(s: Pick<ResolvedSettings, 'addressBlock'>): void {
  const left = removeRehearsalBudgets(rehearsalCgroupName(s));
  if (left.length > 0) throw new RehearsalOperationError(`down: CPU budgets still in use: ${left.join(', ')}`);
}
