/**
 * The RDS Proxy stand-in's PgBouncer processes, one at a time: their files, launch, stop, and the
 * admin console. Their files are the PgBouncer engine's (lib/model/pgbouncer-fleet-files.ts): the stand-in is
 * one host of the fleet model below the work dir, with no load balancer in front (each listener on its
 * endpoint's own addresses and port), RDS Proxy's own sizing (each target's whole poolSizing() budget split
 * over its processes) and the values a deployed host's Fn::Sub fills in set to the rehearsal's. The endpoint's
 * processes share one TCP address:port (so_reuseport), so each is addressed through its own Unix socket
 * (plain, local, the server user's 0700 directory) for RELOAD and SHOW POOLS. poolers.ts groups them into
 * endpoints.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Client } from 'pg';
import { poolSizing, RDS_PROXY_DEFAULT_IDLE_CLIENT_TIMEOUT_SECONDS } from '../model';
import { substitutePlaceholders } from '../model/pgbouncer-bootstrap';
import { FLEET_PATHS, fleetListenerOf, fleetListenerRole, fleetPath, type FleetListener } from '../model/pgbouncer-fleet';
import { fleetPeersFile, fleetProcessName, renderFleetCommonIni, renderFleetPeersIni, renderFleetProcessIni, renderFleetRouteIni, type FleetHostPlacement, type FleetProcess } from '../model/pgbouncer-fleet-files';
import { iniValue, PGBOUNCER_MAX_PEER_ID, renderPgBouncerUserlist, shareOf } from '../model/pgbouncer-ini';
import { EndpointRole } from '../model/vocabulary';
import type { PgBouncerPaths, WorkDirLayout } from './layout';
import { namespaceOfAddress } from './network/plan';
import { chownTo, type OsUser } from './os-user';
import { isAlive, logTail, spawnDaemon, type TrackedProcess } from './processes';
import type { Secrets } from './secrets';
import { GiveUp, waitFor } from './sql';
import type { PgBouncerEndpointSpec } from './state';
import type { TlsFiles } from './tls';

export interface PgBouncerPoolSizes {
  /** Server connections: poolSizing(...).maxServerConnections. */
  readonly poolSize: number;
  /** Server connections kept open while idle: poolSizing(...).maxIdleServerConnections. */
  readonly minPoolSize: number;
}

/** One target's budget (the writer's, or each replica's): poolSizing() of its max_connections. */
export function pgBouncerPoolSizes(spec: Pick<PgBouncerEndpointSpec, 'maxConnections' | 'pool'>): PgBouncerPoolSizes {
  const sizing = poolSizing(spec.maxConnections, spec.pool);
  return { poolSize: sizing.maxServerConnections, minPoolSize: Math.min(sizing.maxIdleServerConnections, sizing.maxServerConnections) };
}

/** The fleet model's listener an endpoint's processes are. */
export function endpointListener(spec: Pick<PgBouncerEndpointSpec, 'role' | 'poolMode'>): FleetListener {
  return fleetListenerOf(spec.role, spec.poolMode);
}

/**
 * A process of an endpoint as the fleet model's process, pooling for `host` with slot `slot`'s share of the
 * target's budget (shareOf: the shares add up to RDS Proxy's whole budget, where the fleet's even split over
 * every host rounds down).
 */
export function standInProcess(spec: PgBouncerEndpointSpec, peerId: number, host: string, slot: number): FleetProcess {
  const budget = pgBouncerPoolSizes(spec);
  const poolSize = shareOf(budget.poolSize, spec.processesPerTarget, slot);
  // PgBouncer reads a pool_size of 0 as "unlimited": a process must have at least one connection.
  if (poolSize < 1) throw new Error(`pgbouncer endpoint ${spec.name}: slot ${slot} of ${spec.processesPerTarget} processes gets no server connection of a budget of ${budget.poolSize}`);
  if (!Number.isInteger(peerId) || peerId < 1 || peerId > PGBOUNCER_MAX_PEER_ID) throw new Error(`pgbouncer endpoint ${spec.name}: peer_id ${peerId} is outside 1..${PGBOUNCER_MAX_PEER_ID}`);
  return { listener: endpointListener(spec), peerId, target: host, serverHost: host, poolSize, minPoolSize: shareOf(budget.minPoolSize, spec.processesPerTarget, slot) };
}

/** The deploy-time values of the fleet's files, as the rehearsal has them. */
export interface StandInValues {
  /** The read-only listener's server role (Secrets.readOnlyServerUser). */
  readonly serverUser: string;
  /** The writer's address: the route files' header names it. */
  readonly writer: string;
}

/**
 * Every file of an endpoint's processes (all of its listener's), by FLEET_PATHS-relative path: the fleet
 * model's, placed on the endpoint's addresses and port and substituted as a deployed host's are.
 */
export function standInFiles(spec: PgBouncerEndpointSpec, processes: ReadonlyArray<FleetProcess>, root: string, values: StandInValues): Map<string, string> {
  const listener = endpointListener(spec);
  const placement: FleetHostPlacement = { listen: { [listener]: { addresses: [spec.listenAddress, ...(spec.extraListenAddresses ?? [])], port: spec.listenPort } }, adminUser: spec.adminUser };
  const fleet = { hosts: 1, vcpusPerHost: spec.processesPerTarget, readers: 1, maxConnections: spec.maxConnections, pool: spec.pool, maxClientConnections: spec.maxClientConnections, tcpIdleTimeoutSeconds: RDS_PROXY_DEFAULT_IDLE_CLIENT_TIMEOUT_SECONDS };
  // Checked as the renderers check theirs: a line break would start a section of its own.
  const deployTime = Object.fromEntries(Object.entries({ ServerPort: String(spec.serverPort), DatabaseName: spec.database, ServerUser: values.serverUser, ClusterEndpoint: values.writer, WriterInstanceEndpoint: values.writer }).map(([k, v]) => [k, iniValue(k, v)]));
  const sub = (text: string): string => substitutePlaceholders(text, deployTime);
  const files = new Map<string, string>([
    [FLEET_PATHS.commonIni, renderFleetCommonIni(fleet, root, placement)],
    [fleetPeersFile(listener), renderFleetPeersIni(listener, processes, root, placement)],
  ]);
  for (const p of processes) {
    files.set(`${FLEET_PATHS.dir}/${fleetProcessName(p)}.ini`, sub(renderFleetProcessIni(p, root, placement)));
    if (fleetListenerRole(listener) === EndpointRole.READ_ONLY) files.set(`${FLEET_PATHS.routesDir}/${fleetProcessName(p)}.ini`, sub(renderFleetRouteIni(p)));
  }
  return files;
}

function writeOwned(file: string, text: string, user: OsUser | undefined): void {
  writeFileSync(file, text, { mode: 0o600 });
  chmodSync(file, 0o600);
  chownTo(user, file);
}

/** `dir` and the parents it lacks, each the server user's and private to it (as systemd's RuntimeDirectory). */
function makeOwnedDir(dir: string, user: OsUser | undefined): void {
  if (existsSync(dir)) return;
  makeOwnedDir(dirname(dir), user);
  mkdirSync(dir, { mode: 0o700 });
  chownTo(user, dir);
}

/** Writes files by their FLEET_PATHS-relative path below `root`, readable only by the server user. */
export function writeStandInFiles(root: string, files: ReadonlyMap<string, string>, user: OsUser | undefined): void {
  for (const [relative, text] of files) {
    makeOwnedDir(dirname(fleetPath(root, relative)), user);
    writeOwned(fleetPath(root, relative), text, user);
  }
}

/**
 * What every process below `root` reads besides its ini: the auth file (the read-only listener's server role
 * with its password, as a deployed host's, and every client login as its SCRAM verifier, which spares
 * PgBouncer the PBKDF2 rounds at every login) and the TLS files, the rehearsal CA as the RDS bundle.
 */
export function writeStandInSecrets(root: string, secrets: Secrets, tls: Pick<TlsFiles, 'certFile' | 'keyFile' | 'caFile'>, user: OsUser | undefined): void {
  const users = [
    { name: secrets.appUser, password: secrets.appPasswordVerifier ?? secrets.appPassword },
    { name: secrets.adminUser, password: secrets.adminPassword },
    { name: secrets.readOnlyServerUser, password: secrets.readOnlyServerPassword },
    ...(secrets.consumerLogins ?? []).map((login) => ({ name: login.name, password: login.verifier })),
  ];
  const files = new Map([
    [FLEET_PATHS.authFile, renderPgBouncerUserlist(users)],
    [FLEET_PATHS.tlsCertFile, readFileSync(tls.certFile, 'utf8')],
    [FLEET_PATHS.tlsKeyFile, readFileSync(tls.keyFile, 'utf8')],
    [FLEET_PATHS.tlsCaFile, readFileSync(tls.caFile, 'utf8')],
    [FLEET_PATHS.rdsCaBundle, readFileSync(tls.caFile, 'utf8')],
  ]);
  writeStandInFiles(root, files, user);
}

/** Everything one process needs to run, its files written. */
export interface PoolerLaunch {
  readonly spec: PgBouncerEndpointSpec;
  readonly paths: PgBouncerPaths;
  readonly name: string;
  readonly program: string;
  readonly cwd: string;
  readonly user: OsUser | undefined;
  /** The pooler host's CPU budget the process joins. */
  readonly cgroupProcsFiles?: ReadonlyArray<string>;
}

export function launchPooler(p: PoolerLaunch): TrackedProcess {
  // Its socket directory, as systemd's RuntimeDirectory makes it on a deployed host.
  makeOwnedDir(p.paths.socketDir, p.user);
  return spawnDaemon({ name: p.name, kind: 'pgbouncer', program: p.program, args: [p.paths.configFile], logFile: p.paths.logFile, cwd: p.cwd, user: p.user, namespace: namespaceOfAddress(p.spec.listenAddress), cgroupProcsFiles: p.cgroupProcsFiles ?? [] });
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
