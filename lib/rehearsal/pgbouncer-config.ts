/**
 * PgBouncer 1.24 configuration of one pooler process of a rehearsal endpoint, rendered from the
 * settings that size the AWS proxy: the same PoolSettings and max_connections go through
 * poolSizing(), so the local pooler enforces the budget the deployed RDS Proxy would. Pure (settings
 * in, text out) so it is unit-tested without a PgBouncer.
 *
 * An endpoint is several processes on one address:port (so_reuseport: the kernel spreads new
 * connections over them), like RDS Proxy's several proxy hosts behind one name. Each process pools
 * for exactly one server: the read/write endpoint's processes all for the writer, the read-only
 * endpoint's in a group per replica, so every replica has pools of its own. A target's budget is
 * split over the processes of its group (shareOf), and [peers] lets any process forward a cancel
 * request to the process that owns the query.
 */
import { poolSizing, type PoolSettings } from '../model';
import { connValue, iniLines, iniValue, PGBOUNCER_MAX_PEER_ID, PoolMode, poolModeSettings, shareOf, sharedPgBouncerSettings, type IniSetting } from '../model/pgbouncer-ini';

export { MAX_PREPARED_STATEMENTS, PGBOUNCER_MAX_PEER_ID, renderPgBouncerUserlist, SERVER_RESET_QUERY, shareOf, type PgBouncerUser } from '../model/pgbouncer-ini';

/** Files every process of an endpoint reads; absolute paths. */
export interface PgBouncerFiles {
  readonly authFile: string;
  readonly tlsCertFile: string;
  readonly tlsKeyFile: string;
  readonly tlsCaFile: string;
}

/** A database login PgBouncer uses towards the servers instead of the client's own. */
export interface ServerLogin {
  readonly user: string;
  /** Plain text: PgBouncer logs in with it (the ini file is readable by the server user only). */
  readonly password: string;
}

export interface PgBouncerEndpointSpec {
  /** Endpoint name, e.g. read-write or read-only (used in log lines and application names). */
  readonly name: string;
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
  readonly files: PgBouncerFiles;
  /**
   * Login every client's server connections use (the read-only endpoint: a role without write
   * privileges, so it stays read-only even if a pool ends up on a writer). Absent: the client's own.
   */
  readonly serverLogin?: ServerLogin;
  /** Seconds before a failed server login is retried; short so a re-pointed pool recovers fast. */
  readonly serverLoginRetrySeconds?: number;
  readonly serverConnectTimeoutSeconds?: number;
  /**
   * How clients share server connections: the model's session settings (poolModeSettings, as the PgBouncer
   * engine's session listeners run them) over the shared ones for SESSION. @default PoolMode.TRANSACTION
   */
  readonly poolMode?: PoolMode;
}

/** One process of an endpoint. */
export interface PoolerProcessSpec {
  /** Unique among the endpoint's processes, 1..16383; cancel keys carry it. */
  readonly peerId: number;
  /** The one server this process pools for. */
  readonly host: string;
  /** Position in its target's group, 0..processesPerTarget-1: which share of the budget it gets. */
  readonly slot: number;
  readonly pidFile: string;
  /** Own directory: the processes share the TCP port but not the Unix socket. */
  readonly unixSocketDir: string;
}

/** Where a peer takes forwarded cancel requests: its Unix socket (same port number). */
export interface PoolerPeer {
  readonly peerId: number;
  readonly unixSocketDir: string;
}

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

/** The pool of one process: its slot's share of its target's budget. */
export function processPoolSizes(spec: Pick<PgBouncerEndpointSpec, 'maxConnections' | 'pool' | 'processesPerTarget'>, slot: number): PgBouncerPoolSizes {
  const budget = pgBouncerPoolSizes(spec);
  return { poolSize: shareOf(budget.poolSize, spec.processesPerTarget, slot), minPoolSize: shareOf(budget.minPoolSize, spec.processesPerTarget, slot) };
}

export function renderPgBouncerIni(spec: PgBouncerEndpointSpec, proc: PoolerProcessSpec, peers: ReadonlyArray<PoolerPeer>): string {
  const { poolSize, minPoolSize } = processPoolSizes(spec, proc.slot);
  // PgBouncer 1.24 reads a pool_size of 0 as "unlimited": a process must have at least one connection.
  if (poolSize < 1) throw new Error(`pgbouncer endpoint ${spec.name}: slot ${proc.slot} of ${spec.processesPerTarget} processes gets no server connection of a budget of ${pgBouncerPoolSizes(spec).poolSize}`);
  if (!Number.isInteger(proc.peerId) || proc.peerId < 1 || proc.peerId > PGBOUNCER_MAX_PEER_ID) throw new Error(`pgbouncer endpoint ${spec.name}: peer_id ${proc.peerId} is outside 1..${PGBOUNCER_MAX_PEER_ID}`);
  if (!peers.some((p) => p.peerId === proc.peerId)) throw new Error(`pgbouncer endpoint ${spec.name}: peer ${proc.peerId} is missing from its own [peers] list`);
  const login = spec.serverLogin === undefined ? [] : [`user=${connValue(spec.serverLogin.user)}`, `password=${connValue(spec.serverLogin.password)}`];
  const db = [`host=${connValue(proc.host)}`, `port=${spec.serverPort}`, `dbname=${connValue(spec.database)}`, ...login, `pool_size=${poolSize}`, `min_pool_size=${minPoolSize}`, `max_db_connections=${poolSize}`].join(' ');
  const settings: IniSetting[] = [
    ['listen_addr', [spec.listenAddress, ...(spec.extraListenAddresses ?? [])].join(',')],
    ['listen_port', spec.listenPort],
    // The endpoint's processes bind the same address:port; the kernel spreads new connections.
    ['so_reuseport', 1],
    ['peer_id', proc.peerId],
    ['unix_socket_dir', proc.unixSocketDir],
    ['pidfile', proc.pidFile],
    ['default_pool_size', poolSize],
    ['max_db_connections', poolSize],
    // After a failover the health checker's RELOAD with the new host replaces the old server connections.
    ...sharedPgBouncerSettings({
      maxClientConnections: spec.maxClientConnections,
      connectionBorrowTimeoutSeconds: spec.pool.connectionBorrowTimeoutSeconds,
      authFile: spec.files.authFile,
      adminUser: spec.adminUser,
      clientTls: { certFile: spec.files.tlsCertFile, keyFile: spec.files.tlsKeyFile, caFile: spec.files.tlsCaFile },
      serverCaFile: spec.files.tlsCaFile,
      ...(spec.serverLoginRetrySeconds === undefined ? {} : { serverLoginRetrySeconds: spec.serverLoginRetrySeconds }),
      ...(spec.serverConnectTimeoutSeconds === undefined ? {} : { serverConnectTimeoutSeconds: spec.serverConnectTimeoutSeconds }),
    }),
    // Session pooling and its reset, over the shared settings (later lines win).
    ...poolModeSettings(spec.poolMode ?? PoolMode.TRANSACTION),
  ];
  return [
    `; PgBouncer endpoint "${spec.name}", peer ${proc.peerId}, rendered by aurora-proxy-kit lib/rehearsal/pgbouncer-config.ts; do not edit.`,
    `; pool_size ${poolSize} = share ${proc.slot + 1} of ${spec.processesPerTarget} of poolSizing(max_connections ${spec.maxConnections}, maxConnectionsPercent ${spec.pool.maxConnectionsPercent}) = ${pgBouncerPoolSizes(spec).poolSize}.`,
    '[databases]',
    `${iniValue('database', spec.database)} = ${iniValue('[databases]', db)}`,
    '',
    '[peers]',
    ...[...peers].sort((a, b) => a.peerId - b.peerId).map((p) => `${p.peerId} = ${iniValue('[peers]', `host=${connValue(p.unixSocketDir)} port=${spec.listenPort}`)}`),
    '',
    '[pgbouncer]',
    ...iniLines(settings),
    '',
  ].join('\n');
}
