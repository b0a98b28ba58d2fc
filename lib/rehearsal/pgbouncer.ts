/**
 * PgBouncer processes, one at a time: their files, launch, stop, restart, and the admin console.
 * The endpoint's processes share one TCP address:port (so_reuseport), so a TCP connection reaches
 * whichever the kernel picks; each process is addressed through its own Unix socket instead
 * (plain, local, the server user's 0700 directory) for RELOAD and SHOW POOLS.
 * poolers.ts groups them into endpoints.
 */
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import type { PgBouncerPaths, WorkDirLayout } from './layout';
import { namespaceOfAddress } from './network/plan';
import { chownTo, type OsUser } from './os-user';
import { renderPgBouncerIni, renderPgBouncerUserlist, type PgBouncerEndpointSpec, type PoolerPeer, type PoolerProcessSpec } from './pgbouncer-config';
import { isAlive, isOurs, logTail, spawnDaemon, stopProcess, type TrackedProcess } from './processes';
import type { Secrets } from './secrets';
import { GiveUp, waitFor } from './sql';

export function userlistFor(secrets: Secrets): string {
  return renderPgBouncerUserlist([
    // The SCRAM verifier spares PgBouncer the PBKDF2 rounds of a plain-text password at every login.
    { name: secrets.appUser, password: secrets.appPasswordVerifier ?? secrets.appPassword },
    { name: secrets.adminUser, password: secrets.adminPassword },
    ...(secrets.consumerLogins ?? []).map((login) => ({ name: login.name, password: login.verifier })),
  ]);
}

function writeOwned(file: string, text: string, user: OsUser | undefined): void {
  writeFileSync(file, text, { mode: 0o600 });
  chmodSync(file, 0o600);
  chownTo(user, file);
}

/** The auth file every process of both endpoints reads. */
export function writePgBouncerAuthFile(path: string, secrets: Secrets, user: OsUser | undefined): void {
  writeOwned(path, userlistFor(secrets), user);
}

/** Everything one process needs to run: its endpoint, its own place in it, its peers, its files. */
export interface PoolerLaunch {
  readonly spec: PgBouncerEndpointSpec;
  readonly proc: PoolerProcessSpec;
  readonly peers: ReadonlyArray<PoolerPeer>;
  readonly paths: PgBouncerPaths;
  readonly name: string;
  readonly program: string;
  readonly cwd: string;
  readonly user: OsUser | undefined;
  /** The pooler host's CPU budget the process joins. */
  readonly cgroupProcsFiles: ReadonlyArray<string>;
}

/** (Re)writes the process's ini, readable only by the server user, and makes its socket directory. */
export function writePoolerConfig(p: Pick<PoolerLaunch, 'spec' | 'proc' | 'peers' | 'paths' | 'user'>): void {
  mkdirSync(p.proc.unixSocketDir, { recursive: true, mode: 0o700 });
  chownTo(p.user, p.proc.unixSocketDir);
  writeOwned(p.paths.configFile, renderPgBouncerIni(p.spec, p.proc, p.peers), p.user);
}

export function launchPooler(p: PoolerLaunch): TrackedProcess {
  writePoolerConfig(p);
  return spawnDaemon({ name: p.name, kind: 'pgbouncer', program: p.program, args: [p.paths.configFile], logFile: p.paths.logFile, cwd: p.cwd, user: p.user, namespace: namespaceOfAddress(p.spec.listenAddress), cgroupProcsFiles: p.cgroupProcsFiles });
}

/** One statement on a process's admin console, through its Unix socket. */
export async function consoleQuery<R extends object = Record<string, string>>(unixSocketDir: string, port: number, secrets: Secrets, sql: string, timeoutMs = 2000): Promise<R[]> {
  const client = new Client({
    host: unixSocketDir,
    port,
    user: secrets.adminUser,
    password: secrets.adminPassword,
    database: 'pgbouncer',
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
    application_name: 'aurora-proxy-kit-rehearsal',
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.query<R & object>(sql)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Waits until the process answers on its console; gives up at once if it exited. */
export async function waitPoolerReady(proc: TrackedProcess, unixSocketDir: string, port: number, secrets: Secrets, timeoutMs: number): Promise<void> {
  try {
    await waitFor(`${proc.name} on ${unixSocketDir}`, timeoutMs, async () => {
      if (!isAlive(proc.pid)) throw new GiveUp(`${proc.name} exited during start`);
      await consoleQuery(unixSocketDir, port, secrets, 'SHOW VERSION', 1000);
      return true;
    }, 50);
  } catch (err) {
    throw new Error(`${(err as Error).message}\n--- ${proc.name} log tail ---\n${logTail(proc.logFile)}`, { cause: err });
  }
}

/**
 * Starts a process that died again with the same ini (same peer_id, same share of the budget), so the
 * endpoint gets its capacity back; the others kept serving meanwhile (so_reuseport drops a dead
 * listener from the group). Returns the new process once it answers.
 */
export async function restartPooler(p: PoolerLaunch, secrets: Secrets, timeoutMs = 5000, onSpawn: (proc: TrackedProcess) => void = () => undefined): Promise<TrackedProcess> {
  const proc = launchPooler(p);
  // The caller records the pid before the wait, so a process that never gets ready is still stopped by pid.
  onSpawn(proc);
  await waitPoolerReady(proc, p.proc.unixSocketDir, p.spec.listenPort, secrets, timeoutMs);
  return proc;
}

/** Stops a process: safe shutdown (in-flight transactions finish), SIGKILL after `graceMs`. */
export async function stopPooler(proc: TrackedProcess, graceMs = 2000): Promise<number[]> {
  return isOurs(proc) ? stopProcess(proc, graceMs) : [];
}

export interface PoolRow {
  /** The process that reported the row. */
  readonly pooler: string;
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

export async function showPools(pooler: string, unixSocketDir: string, port: number, secrets: Secrets): Promise<PoolRow[]> {
  const rows = await consoleQuery<Record<string, string>>(unixSocketDir, port, secrets, 'SHOW POOLS');
  const n = (v: string | undefined): number => Number(v ?? 0);
  return rows
    .filter((r) => r.database !== 'pgbouncer')
    .map((r) => ({
      pooler,
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

/** RELOAD re-reads the ini; a changed host makes PgBouncer close the old server connections on release. */
export async function reloadPooler(unixSocketDir: string, port: number, secrets: Secrets): Promise<void> {
  await consoleQuery(unixSocketDir, port, secrets, 'RELOAD');
}

/**
 * The PgBouncer build the rehearsal runs, copied into the work dir: the build lives in the checkout's
 * .cache, which the server user (postgres) may not be able to traverse (a clone in a 0700 directory),
 * while the work dir is checked to be usable by it before anything starts.
 */
export function installPgBouncer(build: string, layout: WorkDirLayout): string {
  mkdirSync(layout.binDir, { recursive: true, mode: 0o755 });
  const program = join(layout.binDir, 'pgbouncer');
  copyFileSync(build, program);
  chmodSync(program, 0o755);
  return program;
}
