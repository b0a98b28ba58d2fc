/**
 * The rehearsal's PostgreSQL 15 instances: a writer made by initdb and replicas cloned from it with
 * pg_basebackup, each on its own loopback address and the same port, like separate hosts. The
 * postmaster is spawned directly (no pg_ctl) so its pid is the one tracked; settings that must stay
 * fixed are `-c` flags, and the two that change at failover (primary_conninfo,
 * synchronous_standby_names) live in postgresql.auto.conf so ALTER SYSTEM can change them.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { CONNECTION_RESERVE } from '../model/sizing';
import { RehearsalStartError } from './errors';
import type { WorkDirLayout } from './layout';
import { nodeBudgetFiles } from './cpu-budgets';
import { namespaceOfAddress } from './network/plan';
import { chownTo, type OsUser } from './os-user';
import { cleanEnv, isAlive, logTail, spawnDaemon, type TrackedProcess } from './processes';
import type { Secrets } from './secrets';
import { scramSha256Verifier } from './scram';
import { conninfoValue, GiveUp, query, sqlLiteral, waitFor, type Target } from './sql';
import type { NodeState } from './state';
import type { RehearsedDeployment } from './rehearsed-deployment';
import type { ResolvedSettings } from './settings';
import type { TlsFiles } from './tls';

const execFileAsync = promisify(execFile);

/**
 * Superuser slots (health checker, admin, status), within max_connections as on Aurora, where the same 3
 * are kept for rdsadmin (CONNECTION_RESERVE's superuser-reserved part).
 */
export const SUPERUSER_RESERVED_CONNECTIONS = CONNECTION_RESERVE.find((p) => p.id === 'superuser-reserved')!.connections;

/** With quorum commit, a commit is acknowledged once any one replica has flushed it. */
export const SYNC_STANDBY_NAMES = 'ANY 1 (*)';

export interface PostgresContext {
  readonly binDir: string;
  readonly user: OsUser | undefined;
  readonly settings: ResolvedSettings;
  readonly deployment?: RehearsedDeployment | undefined;
  readonly tls: TlsFiles;
  readonly secrets: Secrets;
  /** Accept plain TCP logins too (the Lambda suites test DB_TLS=disable); the rehearsal requires TLS, as rds.force_ssl does. */
  readonly allowPlaintext?: boolean;
}

export function nodeState(layout: WorkDirLayout, name: string, address: string, port: number): NodeState {
  return { name, address, port, ...layout.node(name) };
}

export function adminTarget(ctx: Pick<PostgresContext, 'secrets' | 'tls'>, node: Pick<NodeState, 'address' | 'port'>, database = 'postgres'): Target {
  const serverName = ctx.tls.serverName === undefined ? {} : { serverName: ctx.tls.serverName };
  return { host: node.address, port: node.port, user: ctx.secrets.adminUser, password: ctx.secrets.adminPassword, database, caFile: ctx.tls.caFile, ...serverName };
}

async function run(ctx: PostgresContext, program: string, args: string[], cwd: string, timeoutMs: number, env: Record<string, string> = {}): Promise<void> {
  try {
    await execFileAsync(join(ctx.binDir, program), args, { cwd, env: cleanEnv(env), timeout: timeoutMs, killSignal: 'SIGKILL', ...(ctx.user ?? {}) });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new RehearsalStartError(program, e.message, e.stderr ?? '', { cause: err });
  }
}

function prepareDirs(ctx: PostgresContext, node: NodeState): void {
  // The nodes directory must be traversable by the server user; each node's own directory is private to it.
  mkdirSync(dirname(node.dir), { recursive: true, mode: 0o755 });
  mkdirSync(node.dir, { mode: 0o700 });
  mkdirSync(node.socketDir, { mode: 0o700 });
  chownTo(ctx.user, node.dir, node.socketDir);
}

export async function initWriter(ctx: PostgresContext, node: NodeState, timeoutMs: number): Promise<void> {
  prepareDirs(ctx, node);
  const pwfile = node.passwordFile;
  writeFileSync(pwfile, `${ctx.secrets.adminPassword}\n`, { mode: 0o600 });
  chownTo(ctx.user, pwfile);
  try {
    await run(ctx, 'initdb', ['-D', node.dataDir, '-U', ctx.secrets.adminUser, `--pwfile=${pwfile}`, '--auth-local=trust', '--auth-host=scram-sha-256', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'], node.dir, timeoutMs);
  } finally {
    rmSync(pwfile, { force: true });
  }
  // TLS only over TCP (unless allowPlaintext), as Aurora with rds.force_ssl=1; the socket sits in a
  // 0700 directory of the server user, so `trust` there is reachable only by that user.
  const host = ctx.allowPlaintext ? 'host' : 'hostssl';
  // 198.18.0.0/15: the namespaces' addresses (network namespaces), where root's control connections come from the management link.
  const hba = ['local all all trust', ...['127.0.0.0/8', '198.18.0.0/15'].flatMap((net) => [`${host} all all ${net} scram-sha-256`, `${host} replication all ${net} scram-sha-256`]), ''].join('\n');
  writeFileSync(join(node.dataDir, 'pg_hba.conf'), hba);
  chownTo(ctx.user, join(node.dataDir, 'pg_hba.conf'));
}

function replicaAutoConf(ctx: PostgresContext, node: NodeState, upstream: Pick<NodeState, 'address' | 'port'>): string {
  return `# Written by aurora-proxy-kit rehearsal; changed by ALTER SYSTEM at failover.\nprimary_conninfo = ${sqlLiteral(primaryConninfo(ctx, node, upstream))}\n`;
}

/**
 * Where and how a standby reaches its upstream: TLS verify-full against the rehearsal CA, so a
 * replica only streams from a server whose certificate names the address it dials (an IP SAN), or
 * the TLS server name when the certificate names no address (then `hostaddr` carries the address).
 */
export function upstreamConninfo(ctx: Pick<PostgresContext, 'tls'>, upstream: Pick<NodeState, 'address' | 'port'>): string {
  const host = ctx.tls.serverName === undefined ? `host=${upstream.address}` : `host=${conninfoValue(ctx.tls.serverName)} hostaddr=${upstream.address}`;
  return `${host} port=${upstream.port} sslmode=verify-full sslrootcert=${conninfoValue(ctx.tls.caFile)}`;
}

export function primaryConninfo(ctx: Pick<PostgresContext, 'secrets' | 'tls'>, node: Pick<NodeState, 'name'>, upstream: Pick<NodeState, 'address' | 'port'>): string {
  const s = ctx.secrets;
  return `${upstreamConninfo(ctx, upstream)} user=${s.replicationUser} password=${conninfoValue(s.replicationPassword)} application_name=${node.name} connect_timeout=2`;
}

/** Clones a replica from the running writer; -R writes standby.signal. */
export async function cloneReplica(ctx: PostgresContext, node: NodeState, writer: NodeState, timeoutMs: number): Promise<void> {
  prepareDirs(ctx, node);
  await run(ctx, 'pg_basebackup', ['-d', upstreamConninfo(ctx, writer), '-U', ctx.secrets.replicationUser, '-D', node.dataDir, '-R', '-X', 'stream', '-c', 'fast', '--no-sync'], node.dir, timeoutMs, { PGPASSWORD: ctx.secrets.replicationPassword });
  const autoConf = join(node.dataDir, 'postgresql.auto.conf');
  writeFileSync(autoConf, replicaAutoConf(ctx, node, writer));
  chmodSync(autoConf, 0o600);
  chownTo(ctx.user, autoConf);
}

function serverSettings(ctx: PostgresContext, node: NodeState): Record<string, string> {
  const s = ctx.settings;
  return {
    listen_addresses: node.address,
    port: String(node.port),
    unix_socket_directories: node.socketDir,
    cluster_name: node.name,
    // The instance's max_connections as Aurora's is: the pools leave the reserve within it (poolSizing).
    max_connections: String(s.maxConnections),
    superuser_reserved_connections: String(SUPERUSER_RESERVED_CONNECTIONS),
    ssl: 'on',
    ssl_cert_file: ctx.tls.certFile,
    ssl_key_file: ctx.tls.keyFile,
    password_encryption: 'scram-sha-256',
    fsync: s.fsync ? 'on' : 'off',
    full_page_writes: s.fsync ? 'on' : 'off',
    shared_buffers: '32MB',
    wal_level: 'replica',
    max_wal_senders: '20',
    // Enough WAL for a replica to follow a promoted writer across the timeline switch.
    wal_keep_size: '256MB',
    hot_standby: 'on',
    hot_standby_feedback: 'on',
    // Notice a dead peer in seconds, not the default minute, and reconnect quickly after re-pointing.
    wal_sender_timeout: '5s',
    wal_receiver_timeout: '5s',
    wal_retrieve_retry_interval: '200ms',
    logging_collector: 'off',
    log_min_messages: 'warning',
    log_line_prefix: '%m [%p] ',
  };
}

/** Starts the instance's postmaster; `overrides` change settings for this start only. */
export function launchNode(ctx: PostgresContext, node: NodeState, overrides: Readonly<Record<string, string>> = {}): TrackedProcess {
  const args = ['-D', node.dataDir, ...Object.entries({ ...serverSettings(ctx, node), ...overrides }).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
  return spawnDaemon({ name: node.name, kind: 'postgres', program: join(ctx.binDir, 'postgres'), args, logFile: node.logFile, cwd: node.dir, user: ctx.user, namespace: namespaceOfAddress(node.address), cgroupProcsFiles: nodeBudgetFiles(ctx.settings, ctx.deployment, node.name) });
}

/** Waits until a TLS password login works; fails early if the postmaster exited. */
export async function waitReady(ctx: PostgresContext, node: NodeState, proc: TrackedProcess, timeoutMs: number): Promise<void> {
  try {
    await waitFor(`${node.name} on ${node.address}:${node.port} to accept connections`, timeoutMs, async () => {
      if (!isAlive(proc.pid)) throw new GiveUp(`${node.name} exited during start`);
      await query(adminTarget(ctx, node), 'SELECT 1', undefined, 1000);
      return true;
    });
  } catch (err) {
    throw new RehearsalStartError(node.name, (err as Error).message, logTail(node.logFile), { cause: err });
  }
}

/** Roles and database of the application, created once on the writer before replicas are cloned. */
export async function bootstrapWriter(ctx: PostgresContext, writer: NodeState): Promise<void> {
  const s = ctx.secrets;
  const admin = adminTarget(ctx, writer);
  // The verifier, not the plain text, so that PgBouncer's auth file can hold the identical secret.
  await query(admin, `CREATE ROLE ${s.appUser} LOGIN PASSWORD ${sqlLiteral(s.appPasswordVerifier ?? s.appPassword)}`);
  await query(admin, `CREATE ROLE ${s.replicationUser} LOGIN REPLICATION PASSWORD ${sqlLiteral(s.replicationPassword)}`);
  await query(admin, `CREATE DATABASE ${s.database} OWNER ${s.appUser}`);
  // The read-only endpoint's server login: reads everything, owns nothing, may create nothing
  // (PostgreSQL 15 no longer lets PUBLIC create in the public schema).
  await query(admin, `CREATE ROLE ${s.readOnlyServerUser} LOGIN PASSWORD ${sqlLiteral(scramSha256Verifier(s.readOnlyServerPassword))}`);
  await query(admin, `GRANT pg_read_all_data TO ${s.readOnlyServerUser}`);
}

interface ReplicationRow {
  application_name: string;
  state: string;
  sync_state: string;
}

export async function replicationRows(ctx: PostgresContext, writer: NodeState): Promise<ReplicationRow[]> {
  return query<ReplicationRow>(adminTarget(ctx, writer), 'SELECT application_name, state, sync_state FROM pg_stat_replication ORDER BY application_name');
}

/** Waits until the named replicas stream from the writer. */
export async function waitStreaming(ctx: PostgresContext, writer: NodeState, names: ReadonlyArray<string>, timeoutMs: number): Promise<void> {
  await waitFor(`replicas ${names.join(', ')} to stream from ${writer.name}`, timeoutMs, async () => {
    const rows = await replicationRows(ctx, writer);
    return names.every((n) => rows.some((r) => r.application_name === n && r.state === 'streaming')) ? true : undefined;
  });
}

/** Turns quorum commit on (names present) or off (no replica left to acknowledge). */
export async function setSynchronous(ctx: PostgresContext, writer: NodeState, on: boolean): Promise<void> {
  const admin = adminTarget(ctx, writer);
  await query(admin, `ALTER SYSTEM SET synchronous_standby_names = ${sqlLiteral(on ? SYNC_STANDBY_NAMES : '')}`);
  await query(admin, 'SELECT pg_reload_conf()');
}

/**
 * Promotes a stopped replica the way Aurora promotes its failover target, which restarts
 * (AWS_FACTS 'aurora-failover-target-restarts'): no session of the reader it was lives on, and it takes
 * logins again only as the writer. It starts with hot standby off (logins refused while it recovers), is
 * promoted with `pg_ctl promote` (retried until its startup process takes the request), and is ready once
 * a login works. Returns the new postmaster, which `launched` records first, so a failure still stops it.
 */
export async function startPromoted(ctx: PostgresContext, node: NodeState, launched: (proc: TrackedProcess) => TrackedProcess, timeoutMs: number): Promise<TrackedProcess> {
  const proc = launched(launchNode(ctx, node, { hot_standby: 'off' }));
  const deadline = Date.now() + timeoutMs;
  // pg_ctl refuses until the postmaster has written its pid file and the control file says "in archive recovery".
  for (;;) {
    if (!isAlive(proc.pid)) throw new RehearsalStartError(node.name, 'exited while starting to be promoted', logTail(node.logFile));
    try {
      await run(ctx, 'pg_ctl', ['promote', '-D', node.dataDir, '-w', '-t', String(Math.max(1, Math.ceil((deadline - Date.now()) / 1000)))], node.dir, Math.max(1000, deadline - Date.now()));
      break;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  await waitReady(ctx, node, proc, Math.max(1000, deadline - Date.now()));
  const rows = await query<{ r: boolean }>(adminTarget(ctx, node), 'SELECT pg_is_in_recovery() AS r', undefined, 5000);
  if (rows[0]?.r !== false) throw new RehearsalStartError(node.name, 'is still in recovery after its promotion', logTail(node.logFile));
  return proc;
}

/** Re-points a replica's WAL receiver at a new writer (primary_conninfo is reloadable since PG 13). */
export async function follow(ctx: PostgresContext, node: NodeState, writer: NodeState): Promise<void> {
  const admin = adminTarget(ctx, node);
  await query(admin, `ALTER SYSTEM SET primary_conninfo = ${sqlLiteral(primaryConninfo(ctx, node, writer))}`);
  await query(admin, 'SELECT pg_reload_conf()');
}
