/**
 * PgBouncer endpoints as processes: one per endpoint (read/write, read-only), each on its own address,
 * configured by pgbouncer-config.ts. The admin console (SHOW POOLS, RELOAD) is reached over the same
 * TLS listener with the rehearsal's admin user.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import type { PgBouncerPaths } from './layout';
import { RehearsalStartError } from './errors';
import { namespaceOfAddress } from './network/plan';
import { chownTo, type OsUser } from './os-user';
import { renderPgBouncerIni, renderPgBouncerUserlist, type PgBouncerEndpointSpec } from './pgbouncer-config';
import { isAlive, logTail, spawnDaemon, type TrackedProcess } from './processes';
import type { Secrets } from './secrets';
import { GiveUp, query, waitFor, type Target } from './sql';
import type { PgBouncerState } from './state';

export function userlistFor(secrets: Secrets): string {
  return renderPgBouncerUserlist([
    // The SCRAM verifier spares PgBouncer the PBKDF2 rounds of a plain-text password at every login.
    { name: secrets.appUser, password: secrets.appPasswordVerifier ?? secrets.appPassword },
    { name: secrets.adminUser, password: secrets.adminPassword },
    ...(secrets.consumerLogins ?? []).map((login) => ({ name: login.name, password: login.verifier })),
  ]);
}

/** Writes the ini file (and the shared auth file) readable only by the server user. */
export function writePgBouncerConfig(state: PgBouncerState, paths: PgBouncerPaths, secrets: Secrets, user: OsUser | undefined): void {
  mkdirSync(state.spec.files.unixSocketDir, { recursive: true, mode: 0o700 });
  chownTo(user, state.spec.files.unixSocketDir);
  for (const [file, text] of [
    [paths.configFile, renderPgBouncerIni(state.spec)],
    [state.spec.files.authFile, userlistFor(secrets)],
  ] as const) {
    writeFileSync(file, text, { mode: 0o600 });
    chmodSync(file, 0o600);
    chownTo(user, file);
  }
}

/** Rewrites only the ini (the health checker's host-list change); ownership is kept by the in-place write. */
export function rewritePgBouncerIni(state: PgBouncerState, paths: PgBouncerPaths, hosts: ReadonlyArray<string>): void {
  writeFileSync(paths.configFile, renderPgBouncerIni({ ...state.spec, hosts }));
}

export function launchPgBouncer(state: PgBouncerState, paths: PgBouncerPaths, program: string, cwd: string, user: OsUser | undefined): TrackedProcess {
  return spawnDaemon({ name: state.processName, kind: 'pgbouncer', program, args: [paths.configFile], logFile: paths.logFile, cwd, user, namespace: namespaceOfAddress(state.spec.listenAddress) });
}

export function consoleTarget(spec: PgBouncerEndpointSpec, secrets: Secrets, caFile: string): Target {
  return { host: spec.listenAddress, port: spec.listenPort, user: secrets.adminUser, password: secrets.adminPassword, database: 'pgbouncer', caFile };
}

export async function waitPgBouncerReady(target: Target, proc: TrackedProcess, timeoutMs: number): Promise<void> {
  try {
    await waitFor(`${proc.name} on ${target.host}:${target.port}`, timeoutMs, async () => {
      if (!isAlive(proc.pid)) throw new GiveUp(`${proc.name} exited during start`);
      await query(target, 'SHOW VERSION', undefined, 1000);
      return true;
    });
  } catch (err) {
    throw new RehearsalStartError(proc.name, (err as Error).message, logTail(proc.logFile), { cause: err });
  }
}

export interface PoolRow {
  readonly database: string;
  readonly user: string;
  readonly cl_active: number;
  readonly cl_waiting: number;
  readonly sv_active: number;
  readonly sv_idle: number;
  readonly sv_used: number;
  readonly sv_tested: number;
  readonly sv_login: number;
  readonly maxwait: number;
  readonly pool_mode: string;
}

export async function showPools(target: Target): Promise<PoolRow[]> {
  const rows = await query<Record<string, string>>(target, 'SHOW POOLS', undefined, 2000);
  const n = (v: string | undefined): number => Number(v ?? 0);
  return rows
    .filter((r) => r.database !== 'pgbouncer')
    .map((r) => ({
      database: r.database ?? '',
      user: r.user ?? '',
      cl_active: n(r.cl_active),
      cl_waiting: n(r.cl_waiting),
      sv_active: n(r.sv_active),
      sv_idle: n(r.sv_idle),
      sv_used: n(r.sv_used),
      sv_tested: n(r.sv_tested),
      sv_login: n(r.sv_login),
      maxwait: n(r.maxwait),
      pool_mode: r.pool_mode ?? '',
    }));
}

/** RELOAD re-reads the ini; a changed host list makes PgBouncer close the old server connections on release. */
export async function reloadPgBouncer(target: Target): Promise<void> {
  await query(target, 'RELOAD', undefined, 2000);
}
