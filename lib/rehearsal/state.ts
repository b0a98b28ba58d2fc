/**
 * The rehearsal's state file (work dir/state.json): what runs, by pid, and where. `status` and
 * `down` read it from a fresh process, so it is written after every change, atomically.
 */
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PgBouncerEndpointSpec } from '../model/pgbouncer';
import type { TrackedProcess } from './processes';
import type { AddressPlan, ResolvedSettings } from './settings';
import type { TlsFiles } from './tls';

export interface Secrets {
  readonly database: string;
  readonly adminUser: string;
  readonly adminPassword: string;
  readonly appUser: string;
  readonly appPassword: string;
  /** SCRAM-SHA-256 verifier of appPassword, stored by the writer and by PgBouncer (absent in older state files). */
  readonly appPasswordVerifier?: string;
  readonly replicationUser: string;
  readonly replicationPassword: string;
}

export interface NodeState {
  /** writer, replica1, replica2, ... (the name a node started with; its role can change by failover). */
  readonly name: string;
  readonly address: string;
  readonly port: number;
  readonly dataDir: string;
  readonly socketDir: string;
  readonly logFile: string;
}

export interface PgBouncerState {
  readonly spec: PgBouncerEndpointSpec;
  readonly configFile: string;
  readonly processName: string;
}

export interface RehearsalState {
  readonly version: 1;
  readonly startedAt: string;
  phase: 'starting' | 'up';
  readonly settings: ResolvedSettings;
  readonly plan: AddressPlan;
  readonly tls: TlsFiles;
  readonly nodes: NodeState[];
  /** Name of the node the rehearsal last made the writer (failover() updates it). */
  writerName: string;
  readonly pgbouncer: { readonly readWrite: PgBouncerState; readonly readOnly: PgBouncerState };
  /** Every process started, in start order; killed ones stay listed (their pid is simply gone). */
  readonly processes: TrackedProcess[];
  readonly secretsFile: string;
  readonly healthFile: string;
}

export const STATE_FILE = 'state.json';
export const SECRETS_FILE = 'secrets.json';
export const HEALTH_FILE = 'health.json';

function writeAtomic(path: string, text: string, mode: number): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}

export function writeState(workDir: string, state: RehearsalState): void {
  writeAtomic(join(workDir, STATE_FILE), `${JSON.stringify(state, null, 2)}\n`, 0o644);
}

export function readState(workDir: string): RehearsalState | undefined {
  const path = join(workDir, STATE_FILE);
  if (!existsSync(path)) return undefined;
  return JSON.parse(readFileSync(path, 'utf8')) as RehearsalState;
}

export function writeSecrets(path: string, secrets: Secrets): void {
  // 0600: the passwords of a throwaway rehearsal, but still nobody else's business.
  writeAtomic(path, `${JSON.stringify(secrets, null, 2)}\n`, 0o600);
}

export function readSecrets(path: string): Secrets {
  return JSON.parse(readFileSync(path, 'utf8')) as Secrets;
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

export function readHealth(path: string): HealthReport | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as HealthReport;
  } catch {
    return undefined;
  }
}
