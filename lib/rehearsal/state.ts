/**
 * The rehearsal's state file (WorkDirLayout.stateFile): what runs where (the pids are in the process table,
 * processes.ts). `status` and `down` read it from a fresh process, so it is written after every change, atomically.
 */
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { PoolMode } from '../model/pgbouncer-ini';
import type { PoolSettings } from '../model/sizing';
import type { EndpointRole } from '../model/vocabulary';
import { WorkDirLayout, type NodePaths } from './layout';
import type { RehearsedDeployment } from './rehearsed-deployment';
import type { AddressPlan, ResolvedSettings } from './settings-types';
import type { TlsFiles } from './tls';

/** An endpoint of the RDS Proxy stand-in (pgbouncer.ts renders its files), sized from the settings that size the AWS proxy. */
export interface PgBouncerEndpointSpec {
  /** Endpoint name, e.g. read-write or read-only (used in log lines). */
  readonly name: string;
  /** The read-only endpoint pools as the server role without write privileges, as the fleet's read-only listener. */
  readonly role: EndpointRole;
  readonly listenAddress: string;
  /** More addresses the endpoint listens on, same port (a custom proxy endpoint's ENI in a consumer VPC). */
  readonly extraListenAddresses?: ReadonlyArray<string>;
  readonly listenPort: number;
  /** Database name clients ask for; PgBouncer forwards it to the same name on the servers. */
  readonly database: string;
  readonly serverPort: number;
  /** max_connections each target's budget is sized against (RDS Proxy applies it per target). */
  readonly maxConnections: number;
  readonly pool: PoolSettings;
  /** Client connections each process accepts (RDS Proxy's client side is effectively unbounded). */
  readonly maxClientConnections: number;
  /** PgBouncer processes per target server, sharing the endpoint's listener (so_reuseport). */
  readonly processesPerTarget: number;
  /** User allowed on PgBouncer's admin console (SHOW POOLS, RELOAD). */
  readonly adminUser: string;
  /** @default PoolMode.TRANSACTION */
  readonly poolMode?: PoolMode;
}

export interface NodeState extends NodePaths {
  /** writer, replica1, replica2, ... (the name a node started with; its role can change by failover). */
  readonly name: string;
  readonly address: string;
  readonly port: number;
}

/** The PgBouncer endpoints; which processes run them is in the process table (processes.ts). */
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
  readonly lastError?: string;
}

export function writeHealth(path: string, report: HealthReport): void {
  writeAtomic(path, `${JSON.stringify(report, null, 2)}\n`, 0o644);
}

/** A JSON file another process writes (atomically); undefined while there is none. */
export function readJsonFile<T>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

export const readHealth = (path: string): HealthReport | undefined => readJsonFile<HealthReport>(path);
