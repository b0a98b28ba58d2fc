/**
 * The rehearsal's state file (WorkDirLayout.stateFile): what runs, by pid, and where. `status` and
 * `down` read it from a fresh process, so it is written after every change, atomically.
 */
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { WorkDirLayout, type NodePaths } from './layout';
import type { PgBouncerEndpointSpec } from './pgbouncer-config';
import type { TrackedProcess } from './processes';
import type { RehearsedDeployment } from './rehearsed-deployment';
import type { AddressPlan, ResolvedSettings } from './settings';
import type { TlsFiles } from './tls';

export interface NodeState extends NodePaths {
  /** writer, replica1, replica2, ... (the name a node started with; its role can change by failover). */
  readonly name: string;
  readonly address: string;
  readonly port: number;
}

/** The PgBouncer endpoints; which processes run them is in the pooler registry (poolers.ts). */
export interface PgBouncerState {
  /** The PgBouncer 1.25.2 binary the processes run (restarts and new groups use it too). */
  readonly program: string;
  readonly readWrite: PgBouncerEndpointSpec;
  readonly readOnly: PgBouncerEndpointSpec;
  /** The pooler host's CPU budget every process joins, restarted ones too (cpu-budgets.ts); empty without budgets. */
  readonly cgroupProcsFiles: ReadonlyArray<string>;
}

export interface RehearsalState {
  readonly version: 1;
  readonly startedAt: string;
  phase: 'starting' | 'up';
  readonly settings: ResolvedSettings;
  /** The deployment rehearsed (`up --from`), so other processes rebuild the same network and names. */
  readonly deployment?: RehearsedDeployment;
  readonly plan: AddressPlan;
  readonly tls: TlsFiles;
  readonly nodes: NodeState[];
  /** Name of the node the rehearsal last made the writer (failover() updates it). */
  writerName: string;
  readonly pgbouncer: PgBouncerState;
  /** Every process started, in start order; killed ones stay listed (their pid is simply gone). */
  readonly processes: TrackedProcess[];
}

/** Writes through a temporary file and a rename, so a reader in another process never sees half a file. */
export function writeAtomic(path: string, text: string, mode: number): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}

export function writeState(workDir: string, state: RehearsalState): void {
  writeAtomic(new WorkDirLayout(workDir).stateFile, `${JSON.stringify(state, null, 2)}\n`, 0o644);
}

export function readState(workDir: string): RehearsalState | undefined {
  const path = new WorkDirLayout(workDir).stateFile;
  if (!existsSync(path)) return undefined;
  const state = JSON.parse(readFileSync(path, 'utf8')) as RehearsalState;
  // Written when the settings carried the deployment: `down` still finds its namespaces.
  const { deployment, ...settings } = (state.settings ?? {}) as ResolvedSettings & { deployment?: RehearsedDeployment };
  return deployment === undefined ? state : { ...state, settings, deployment };
}

/** What the health checker last saw; written by it, read by status and by failover(). */
export interface HealthReport {
  readonly checkedAt: string;
  readonly pid: number;
  readonly writer: string | undefined;
  readonly liveReplicas: ReadonlyArray<string>;
  readonly readWriteHosts: ReadonlyArray<string>;
  readonly readOnlyHosts: ReadonlyArray<string>;
  readonly reloads: number;
  /** PgBouncer processes found dead and started again, since the checker started. */
  readonly poolerRestarts?: number;
  readonly lastError?: string;
}

export function writeHealth(path: string, report: HealthReport): void {
  writeAtomic(path, `${JSON.stringify(report, null, 2)}\n`, 0o644);
}

export function readHealth(path: string): HealthReport | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as HealthReport;
  } catch {
    return undefined;
  }
}
