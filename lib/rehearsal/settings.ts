/**
 * Settings of a local rehearsal, their defaults, and the address plan derived from them. Everything
 * is validated (lib/rehearsal/rules.ts) before anything starts.
 */
import { isAbsolute, resolve } from 'node:path';
import { DEFAULT_POOL_SETTINGS } from '../model/sizing';
import { POSTGRES_PORT } from '../model/vocabulary';
import { REHEARSAL_RULES } from './rules';
import { runRules } from '../model/rule-table';
import { RehearsalConfigError } from './errors';
import { DEFAULT_LOOPBACK_BLOCK } from './loopback-blocks';
import { REHEARSAL_NETWORKS, type RehearsalSettings, type ResolvedSettings } from './settings-types';

export { REHEARSAL_NETWORKS, type RehearsalNetwork, type RehearsalSettings, type RehearsalSpec, type ResolvedSettings } from './settings-types';
export { addressPlan, type AddressPlan } from './network/rehearsal-network';

export const DEFAULT_ADDRESS_BLOCK: string = DEFAULT_LOOPBACK_BLOCK.block;
export const DEFAULT_WORK_DIR = '.rehearsal';
export const DEFAULT_POOLER_PROCESSES = 2;
export const DEFAULT_REPLICAS = 2;
export const DEFAULT_MAX_CONNECTIONS = 100;
export const DEFAULT_MAX_CLIENT_CONNECTIONS = 1000;
/**
 * RDS Proxy publishes no capacity per proxy; the rehearsal gives its pooling tier a host of 4 vCPUs (an
 * m7g.xlarge's), the size of a reader it pools for, so under budgets the pooler is neither the
 * bottleneck of a bench nor free CPU the instances lack.
 */
export const REHEARSAL_POOLER_VCPUS = 4;

export function resolveSettings(settings: RehearsalSettings = {}, cwd = process.cwd()): ResolvedSettings {
  const workDir = settings.workDir ?? DEFAULT_WORK_DIR;
  const maxConnections = settings.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  return {
    replicas: settings.replicas ?? DEFAULT_REPLICAS,
    synchronous: settings.synchronous ?? true,
    workDir: isAbsolute(workDir) ? workDir : resolve(cwd, workDir),
    addressBlock: settings.addressBlock ?? DEFAULT_ADDRESS_BLOCK,
    port: settings.port ?? POSTGRES_PORT,
    maxConnections,
    sizingMaxConnections: settings.sizingMaxConnections ?? maxConnections,
    pool: settings.pool ?? DEFAULT_POOL_SETTINGS,
    maxClientConnections: settings.maxClientConnections ?? DEFAULT_MAX_CLIENT_CONNECTIONS,
    poolerProcesses: settings.poolerProcesses ?? DEFAULT_POOLER_PROCESSES,
    fsync: settings.fsync ?? false,
    comparisonProxies: settings.comparisonProxies ?? settings.peers ?? true,
    healthCheckIntervalMs: settings.healthCheckIntervalMs ?? 500,
    startTimeoutMs: settings.startTimeoutMs ?? 90000,
    network: settings.network ?? 'loopback',
    coresPerVcpu: settings.coresPerVcpu ?? 0,
    poolerVcpus: settings.poolerVcpus ?? REHEARSAL_POOLER_VCPUS,
  };
}

/** Throws RehearsalConfigError with every problem at once. */
export function validateSettings(s: ResolvedSettings): void {
  const problems = runRules(REHEARSAL_RULES, s);
  if (!Number.isInteger(s.healthCheckIntervalMs) || s.healthCheckIntervalMs < 100 || s.healthCheckIntervalMs > 60000) {
    problems.push(`healthCheckIntervalMs ${s.healthCheckIntervalMs} is out of range: use 100 to 60000 ms`);
  }
  if (!Number.isInteger(s.startTimeoutMs) || s.startTimeoutMs < 5000) {
    problems.push(`startTimeoutMs ${s.startTimeoutMs} is too short: use at least 5000 ms`);
  }
  if (!(REHEARSAL_NETWORKS as readonly string[]).includes(s.network)) {
    problems.push(`network ${s.network} is not a rehearsal network: use ${REHEARSAL_NETWORKS.join(' or ')}`);
  }
  if (!(typeof s.coresPerVcpu === 'number' && s.coresPerVcpu >= 0 && s.coresPerVcpu <= 1)) {
    problems.push(`coresPerVcpu ${s.coresPerVcpu} is out of range: use 0 (no CPU budgets) up to 1 core of this machine per vCPU`);
  }
  if (problems.length > 0) throw new RehearsalConfigError(problems);
}
