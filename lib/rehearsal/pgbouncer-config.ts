import { poolSizing, type PoolSettings } from '../model';

/**
 * PgBouncer configuration of one rehearsal endpoint, rendered from the settings that size the AWS
 * proxy: the same PoolSettings and max_connections go through poolSizing(), so the local pooler
 * enforces the budget the deployed RDS Proxy would. Pure (settings in, text out) so it is unit-tested
 * without a PgBouncer, and the rehearsal's health checker re-renders it with a new host list.
 */

/** Files a PgBouncer endpoint reads and writes; all absolute paths. */
export interface PgBouncerFiles {
  readonly authFile: string;
  readonly pidFile: string;
  readonly unixSocketDir: string;
  readonly tlsCertFile: string;
  readonly tlsKeyFile: string;
  readonly tlsCaFile: string;
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
  /** Servers behind the endpoint; more than one are used round-robin per new server connection. */
  readonly hosts: ReadonlyArray<string>;
  readonly serverPort: number;
  /** max_connections the pool is sized against (one target's, as RDS Proxy applies it per target). */
  readonly maxConnections: number;
  readonly pool: PoolSettings;
  /** Client connections the endpoint accepts (RDS Proxy's client side is effectively unbounded). */
  readonly maxClientConnections: number;
  /** User allowed on PgBouncer's admin console (SHOW POOLS, RELOAD). */
  readonly adminUser: string;
  readonly files: PgBouncerFiles;
  /** Seconds before a failed server login is retried; short so a re-pointed pool recovers fast. */
  readonly serverLoginRetrySeconds?: number;
  readonly serverConnectTimeoutSeconds?: number;
}

export interface PgBouncerPoolSizes {
  /** Server connections of the endpoint's pool: poolSizing(...).maxServerConnections. */
  readonly poolSize: number;
  /** Server connections kept open while idle: poolSizing(...).maxIdleServerConnections. */
  readonly minPoolSize: number;
}

/**
 * PgBouncer 1.18 keeps one pool per (database, user), not per host: a host list shares a single pool.
 * Capping that pool at one target's budget guarantees no replica exceeds its budget wherever the
 * round-robin lands, at the price of less total read capacity than RDS Proxy's per-target pools.
 */
export function pgBouncerPoolSizes(spec: Pick<PgBouncerEndpointSpec, 'maxConnections' | 'pool'>): PgBouncerPoolSizes {
  const sizing = poolSizing(spec.maxConnections, spec.pool);
  return { poolSize: sizing.maxServerConnections, minPoolSize: Math.min(sizing.maxIdleServerConnections, sizing.maxServerConnections) };
}

/** Values of pgbouncer.ini are bare; refuse anything that could break out of a line or a key. */
function iniValue(name: string, value: string | number): string {
  const text = String(value);
  if (/[\r\n]/.test(text)) throw new Error(`pgbouncer setting ${name} contains a line break: ${JSON.stringify(text)}`);
  return text;
}

/** libpq-style connection-string value for the [databases] section. */
function connValue(value: string): string {
  return /^[A-Za-z0-9_.,:/-]+$/.test(value) ? value : `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

export function renderPgBouncerIni(spec: PgBouncerEndpointSpec): string {
  if (spec.hosts.length === 0) throw new Error(`pgbouncer endpoint ${spec.name} has no hosts`);
  const { poolSize, minPoolSize } = pgBouncerPoolSizes(spec);
  const db = [
    `host=${connValue(spec.hosts.join(','))}`,
    `port=${spec.serverPort}`,
    `dbname=${connValue(spec.database)}`,
    `pool_size=${poolSize}`,
    `min_pool_size=${minPoolSize}`,
    `max_db_connections=${poolSize}`,
  ].join(' ');
  const settings: Array<[string, string | number]> = [
    ['listen_addr', [spec.listenAddress, ...(spec.extraListenAddresses ?? [])].join(',')],
    ['listen_port', spec.listenPort],
    ['unix_socket_dir', spec.files.unixSocketDir],
    ['pidfile', spec.files.pidFile],
    // Transaction pooling is what RDS Proxy does: a server connection is borrowed per transaction.
    ['pool_mode', 'transaction'],
    ['max_client_conn', spec.maxClientConnections],
    ['default_pool_size', poolSize],
    ['max_db_connections', poolSize],
    // No reserve pool: the pool size is the whole budget, as MaxConnectionsPercent is for RDS Proxy.
    ['reserve_pool_size', 0],
    // ConnectionBorrowTimeout: how long a client waits for a pooled connection.
    ['query_wait_timeout', spec.pool.connectionBorrowTimeoutSeconds],
    // Spread server connections evenly instead of reusing the most recent (LIFO) one.
    ['server_round_robin', 1],
    ['server_login_retry', spec.serverLoginRetrySeconds ?? 1],
    ['server_connect_timeout', spec.serverConnectTimeoutSeconds ?? 2],
    // PgBouncer's default: a server connection idle for 30 s is checked before reuse. Checking every
    // reuse (0) would add a round trip to every transaction; after a failover the health checker's
    // RELOAD with the new host list replaces the old server connections anyway.
    ['server_check_delay', 30],
    ['auth_type', 'scram-sha-256'],
    ['auth_file', spec.files.authFile],
    ['admin_users', spec.adminUser],
    ['stats_users', spec.adminUser],
    // RDS Proxy requires TLS from clients.
    ['client_tls_sslmode', 'require'],
    ['client_tls_cert_file', spec.files.tlsCertFile],
    ['client_tls_key_file', spec.files.tlsKeyFile],
    ['client_tls_ca_file', spec.files.tlsCaFile],
    ['server_tls_sslmode', 'verify-ca'],
    ['server_tls_ca_file', spec.files.tlsCaFile],
    // Drivers such as JDBC and pgbench send these; PgBouncer would otherwise refuse the login.
    ['ignore_startup_parameters', 'extra_float_digits,options'],
    ['application_name_add_host', 0],
    ['log_connections', 0],
    ['log_disconnections', 0],
  ];
  return [
    `; PgBouncer endpoint "${spec.name}", rendered by aurora-proxy-kit lib/rehearsal/pgbouncer-config.ts; do not edit.`,
    `; pool_size ${poolSize} = poolSizing(max_connections ${spec.maxConnections}, maxConnectionsPercent ${spec.pool.maxConnectionsPercent}).`,
    '[databases]',
    `${iniValue('database', spec.database)} = ${iniValue('[databases]', db)}`,
    '',
    '[pgbouncer]',
    ...settings.map(([k, v]) => `${k} = ${iniValue(k, v)}`),
    '',
  ].join('\n');
}

export interface PgBouncerUser {
  readonly name: string;
  /** Plain text or a SCRAM-SHA-256 secret; PgBouncer needs the plain text to log in to the server as the client. */
  readonly password: string;
}

/** auth_file lines: "user" "password", with double quotes doubled. */
export function renderPgBouncerUserlist(users: ReadonlyArray<PgBouncerUser>): string {
  const quote = (s: string): string => {
    if (/[\r\n]/.test(s)) throw new Error('pgbouncer auth_file entries cannot contain line breaks');
    return `"${s.replace(/"/g, '""')}"`;
  };
  return users.map((u) => `${quote(u.name)} ${quote(u.password)}`).join('\n') + '\n';
}
