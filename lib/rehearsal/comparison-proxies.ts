/**
 * The comparison proxies, beside PgBouncer for the bench's comparisons, both run for real:
 * - HAProxy in TCP mode round-robin over the replicas: the analog of Aurora's reader endpoint
 *   (connection-level balancing, no pooling; TLS passes through to the replicas).
 * - pgpool-II in streaming-replication mode, reads load-balanced to the replicas: the analog of
 *   ProxySQL's query routing.
 * Render functions are pure; launch functions spawn the daemons as the server user.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import type { HaproxyPaths, PgpoolPaths } from './layout';
import { chownTo, type OsUser } from './os-user';
import { namespaceOfAddress } from './network/plan';
import { spawnDaemon, type TrackedProcess } from './processes';
import type { Secrets } from './secrets';
import type { TlsFiles } from './tls';

export interface Backend {
  readonly name: string;
  readonly address: string;
  readonly port: number;
}

export interface HaproxySpec {
  readonly listenAddress: string;
  readonly listenPort: number;
  readonly replicas: ReadonlyArray<Backend>;
  readonly maxClientConnections: number;
  /** Admin socket of HAProxy's runtime API (add server at runtime: Rehearsal.addReplica). */
  readonly adminSocket?: string;
}

export function renderHaproxyConfig(spec: HaproxySpec): string {
  return [
    '# HAProxy reader endpoint, rendered by aurora-proxy-kit lib/rehearsal/comparison-proxies.ts; do not edit.',
    'global',
    `  maxconn ${spec.maxClientConnections}`,
    ...(spec.adminSocket === undefined ? [] : [`  stats socket ${spec.adminSocket} mode 600 level admin`]),
    'defaults',
    '  mode tcp',
    '  timeout connect 2s',
    '  timeout client 1h',
    '  timeout server 1h',
    '  # A new connection to a dead replica is retried on another one, as DNS round-robin clients would.',
    '  retries 2',
    '  option redispatch',
    'listen reader',
    `  bind ${spec.listenAddress}:${spec.listenPort}`,
    '  balance roundrobin',
    '  default-server inter 1s fall 2 rise 1',
    ...spec.replicas.map((r) => `  server ${r.name} ${r.address}:${r.port} check`),
    '',
  ].join('\n');
}

export interface PgpoolSpec {
  readonly listenAddress: string;
  readonly listenPort: number;
  readonly paths: PgpoolPaths;
  readonly writer: Backend;
  readonly replicas: ReadonlyArray<Backend>;
  readonly secrets: Secrets;
  readonly tls: TlsFiles;
  /** pgpool children (each a client slot holding one cached connection per backend). */
  readonly children: number;
}

const q = (v: string | number): string => (typeof v === 'number' ? String(v) : `'${v.replace(/'/g, "''")}'`);

export function renderPgpoolConfig(spec: PgpoolSpec): string {
  const s = spec.secrets;
  const backends = [spec.writer, ...spec.replicas];
  const settings: Array<[string, string | number]> = [
    ['backend_clustering_mode', 'streaming_replication'],
    ['listen_addresses', spec.listenAddress],
    ['port', spec.listenPort],
    // Every socket and file pgpool-II 4.3 makes goes into its own 0700 directory: by default the
    // Debian build puts them in the shared /var/run/postgresql, where two rehearsals on the same
    // port collide (pgpool removes a socket it finds there without a pid file).
    ['socket_dir', spec.paths.dir],
    ['pcp_listen_addresses', spec.listenAddress],
    ['pcp_port', spec.listenPort + 1],
    ['pcp_socket_dir', spec.paths.dir],
    ['wd_ipc_socket_dir', spec.paths.dir],
    ['memqcache_oiddir', join(spec.paths.dir, 'oiddir')],
    ['pid_file_name', spec.paths.pidFile],
    ['logdir', spec.paths.dir],
    ['use_watchdog', 'off'],
    ['num_init_children', spec.children],
    ['max_pool', 1],
    ['connection_cache', 'on'],
    // Reads go to the replicas only (weight 0 on the writer), as a ProxySQL read/write split does.
    ['load_balance_mode', 'on'],
    ['sr_check_period', 1],
    ['sr_check_user', s.adminUser],
    ['sr_check_password', s.adminPassword],
    ['health_check_period', 1],
    ['health_check_timeout', 2],
    ['health_check_user', s.adminUser],
    ['health_check_password', s.adminPassword],
    ['health_check_max_retries', 0],
    ['failover_on_backend_error', 'on'],
    ['search_primary_node_timeout', 5],
    // Clients authenticate to pgpool itself (pool_hba: TLS only, SCRAM), as at the other endpoints.
    ['enable_pool_hba', 'on'],
    ['pool_passwd', spec.paths.passwordFile],
    ['allow_clear_text_frontend_auth', 'off'],
    ['ssl', 'on'],
    ['ssl_key', spec.tls.keyFile],
    ['ssl_cert', spec.tls.certFile],
    // Backend certificates are checked against the rehearsal CA: pgpool-II verifies the chain
    // (verify-ca); it has no host-name check towards backends.
    ['ssl_ca_cert', spec.tls.caFile],
    ['log_destination', 'stderr'],
    ['logging_collector', 'off'],
    ['memory_cache_enabled', 'off'],
    ...backends.flatMap((b, i): Array<[string, string | number]> => [
      [`backend_hostname${i}`, b.address],
      [`backend_port${i}`, b.port],
      [`backend_weight${i}`, i === 0 ? 0 : 1],
      [`backend_flag${i}`, 'ALLOW_TO_FAILOVER'],
      [`backend_application_name${i}`, b.name],
    ]),
  ];
  return ['# pgpool-II, rendered by aurora-proxy-kit lib/rehearsal/comparison-proxies.ts; do not edit.', ...settings.map(([k, v]) => `${k} = ${q(v)}`), ''].join('\n');
}

/**
 * pgpool-II's pool_hba.conf: TLS connections over TCP with SCRAM, nothing else. No `local` line, so
 * its Unix socket accepts no login either; a plain TCP client matches no line and is refused.
 */
export function renderPgpoolHba(): string {
  return ['# pgpool-II client authentication, rendered by aurora-proxy-kit lib/rehearsal/comparison-proxies.ts; do not edit.', 'hostssl all all 127.0.0.0/8 scram-sha-256', 'hostssl all all 198.18.0.0/15 scram-sha-256', ''].join('\n');
}

/** pgpool-II's client socket, by which the start checks that the socket went where it was told. */
export function pgpoolSocketFile(spec: Pick<PgpoolSpec, 'paths' | 'listenPort'>): string {
  return join(spec.paths.dir, `.s.PGSQL.${spec.listenPort}`);
}

function writeOwned(file: string, text: string, user: OsUser | undefined): void {
  writeFileSync(file, text, { mode: 0o600 });
  chmodSync(file, 0o600);
  chownTo(user, file);
}

/** One command on HAProxy's runtime API (stats socket); resolves with its answer. */
export function haproxyCommand(socket: string, command: string, timeoutMs = 3000): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = '';
    const conn = createConnection(socket);
    const timer = setTimeout(() => {
      conn.destroy();
      reject(new Error(`haproxy runtime API: no answer to "${command}" within ${timeoutMs} ms`));
    }, timeoutMs);
    conn.setEncoding('utf8');
    conn.on('connect', () => conn.write(`${command}\n`));
    conn.on('data', (d: string) => (answer += d));
    conn.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    conn.on('close', () => {
      clearTimeout(timer);
      resolve(answer.trim());
    });
  });
}

/** Adds a replica to the running HAProxy's round-robin (runtime API), health-checked like the others. */
export async function haproxyAddServer(socket: string, backend: Backend): Promise<void> {
  const added = await haproxyCommand(socket, `add server reader/${backend.name} ${backend.address}:${backend.port} check inter 1s fall 2 rise 1`);
  if (!/New server registered/i.test(added)) throw new Error(`haproxy refused to add ${backend.name}: ${added}`);
  for (const command of [`enable health reader/${backend.name}`, `enable server reader/${backend.name}`]) {
    const answer = await haproxyCommand(socket, command);
    if (answer !== '') throw new Error(`haproxy: ${command}: ${answer}`);
  }
}

export function launchHaproxy(spec: HaproxySpec, paths: HaproxyPaths, program: string, user: OsUser | undefined, cgroupProcsFiles: ReadonlyArray<string> = []): TrackedProcess {
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  chownTo(user, paths.dir);
  writeOwned(paths.configFile, renderHaproxyConfig(spec), user);
  // -db: stay in the foreground, so the tracked pid is the proxy itself.
  return spawnDaemon({ name: 'haproxy', kind: 'haproxy', program, args: ['-db', '-f', paths.configFile], logFile: paths.logFile, cwd: paths.dir, user, namespace: namespaceOfAddress(spec.listenAddress), cgroupProcsFiles });
}

export function launchPgpool(spec: PgpoolSpec, program: string, user: OsUser | undefined, cgroupProcsFiles: ReadonlyArray<string> = []): TrackedProcess {
  const paths = spec.paths;
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  chownTo(user, paths.dir);
  writeOwned(paths.configFile, renderPgpoolConfig(spec), user);
  // "TEXT" marks a clear-text password: pgpool needs it to answer the servers' SCRAM challenge.
  writeOwned(paths.passwordFile, `${spec.secrets.appUser}:TEXT${spec.secrets.appPassword}\n${spec.secrets.adminUser}:TEXT${spec.secrets.adminPassword}\n`, user);
  writeOwned(paths.pcpFile, '', user);
  writeOwned(paths.hbaFile, renderPgpoolHba(), user);
  // -n: no daemon (tracked pid is the main process); -D: forget the backend status of a previous run.
  return spawnDaemon({
    name: 'pgpool',
    kind: 'pgpool',
    program,
    args: ['-n', '-D', '-f', paths.configFile, '-F', paths.pcpFile, '-a', paths.hbaFile],
    logFile: paths.logFile,
    cwd: paths.dir,
    user,
    namespace: namespaceOfAddress(spec.listenAddress),
    cgroupProcsFiles,
  });
}
