/**
 * What every PgBouncer the kit runs has in common, the PgBouncer engine's fleet on AWS (pgbouncer-fleet.ts)
 * and the rehearsal's RDS Proxy stand-in (one host of the same fleet model, lib/rehearsal/pgbouncer.ts):
 * transaction pooling, the reset that keeps one client's session state from the next, prepared
 * statements, the startup parameters carried or refused (never dropped), TLS on both sides, the budget split over processes, and the ini/auth_file syntax.
 * Pure (settings in, text out), so both are unit-tested without a PgBouncer.
 */

/** peer_id is carried in cancel keys: 1..16383 (PgBouncer 1.24, "peer_id"). */
export const PGBOUNCER_MAX_PEER_ID = 16383;

/**
 * Prepared statements kept per server connection (PgBouncer 1.24's default, written out): named
 * protocol-level statements (node-postgres `{ name }`, pgx, JDBC) work in transaction pooling.
 */
export const MAX_PREPARED_STATEMENTS = 200;

/**
 * Removes every SQL-level prepared statement (`PREPARE`; pg_prepared_statements.from_sql) and keeps
 * the protocol-level ones: through PgBouncer those are only its own (it renames a client's named
 * Parse to PGBOUNCER_<n>, max_prepared_statements), which DEALLOCATE ALL would drop after every
 * transaction, making each client Parse again. plpgsql, as DEALLOCATE takes a name and not an
 * expression; it runs for an unprivileged role and on a hot standby. Qualified with pg_catalog: a
 * client able to create a public.format(text, text) would otherwise have it chosen over the built-in
 * (a closer match) in every later client's reset.
 */
export const DEALLOCATE_SQL_PREPARED = "DO $reset$DECLARE s text; BEGIN FOR s IN SELECT name FROM pg_catalog.pg_prepared_statements WHERE from_sql LOOP EXECUTE pg_catalog.format('DEALLOCATE %I', s); END LOOP; END$reset$";

/**
 * Run after every transaction before the server connection goes back to the pool
 * (server_reset_query_always): whatever a client changed in its session (SET outside a transaction,
 * SET ROLE, temporary tables, advisory locks, LISTEN, open cursors, sequences' currval, SQL-level
 * prepared statements) is gone before the next client gets the connection. This is DISCARD ALL
 * with DEALLOCATE ALL narrowed to DEALLOCATE_SQL_PREPARED, and without DISCARD PLANS (cached plans
 * are not session state a client can see). One simple query, one round trip.
 */
export const SERVER_RESET_STATEMENTS: ReadonlyArray<string> = ['SET SESSION AUTHORIZATION DEFAULT', 'RESET ALL', 'CLOSE ALL', 'UNLISTEN *', 'SELECT pg_advisory_unlock_all()', 'DISCARD TEMP', 'DISCARD SEQUENCES', DEALLOCATE_SQL_PREPARED];
/** SERVER_RESET_STATEMENTS as the one simple query PgBouncer sends. */
export const SERVER_RESET_QUERY = SERVER_RESET_STATEMENTS.join('; ');

/**
 * Startup parameters PgBouncer accepts and drops. Only extra_float_digits: JDBC sends it, and since
 * PostgreSQL 12 every value above 0 (JDBC's 3, the default 1) prints floats the same shortest-exact
 * way, so dropping it changes nothing. Not `options`: with it listed PgBouncer drops every
 * `-c name=value` it does not track (default_transaction_isolation, search_path, PGOPTIONS) and
 * serves the client with the defaults. Without it, PgBouncer carries what it tracks, spelt exactly
 * so (DateStyle, client_encoding, TimeZone, standard_conforming_strings, application_name and
 * track_extra_parameters' IntervalStyle: what PostgreSQL reports back, which PgBouncer sets on every
 * server connection it lends the client), and refuses the login for anything else with
 * "unsupported startup parameter in options: <name>", as it does for other unknown startup
 * parameters. search_path is not reported before PostgreSQL 18, so it cannot be carried; a role's
 * defaults (ALTER ROLE ... SET search_path) hold instead, as the reset's RESET ALL returns to them.
 */
export const IGNORED_STARTUP_PARAMETERS = ['extra_float_digits'] as const;

/**
 * How a listener lends server connections. Transaction pooling (the default) lends one per transaction
 * and resets it after each; session pooling lends one for the client's whole session, for applications
 * that need session state across transactions (LISTEN, session advisory locks, temporary tables, SET,
 * cursors WITH HOLD, SQL-level PREPARE): what RDS Proxy gives by pinning, asked for up front.
 */
export enum PoolMode {
  /** A server connection per transaction, reset after each: many clients share few connections. */
  TRANSACTION = 'transaction',
  /** A server connection per client session, reset when the client leaves: one connection per client. */
  SESSION = 'session',
}
export const POOL_MODES: ReadonlyArray<PoolMode> = [PoolMode.TRANSACTION, PoolMode.SESSION];

/**
 * The reset of a session-pooling server connection, run when its client disconnects (PgBouncer runs
 * server_reset_query on release in session pooling whatever server_reset_query_always says):
 * SERVER_RESET_QUERY with DEALLOCATE ALL. In session pooling PgBouncer 1.24 does not track
 * protocol-level statements (is_prepared_statements_enabled is false for POOL_SESSION), so every named
 * statement on the connection is the departed client's own, under its own name, and would be "already
 * exists" for the next client. Not DISCARD ALL itself: it refuses to run in the implicit transaction of a
 * multi-statement query, and the read-only guard follows the reset in the same round trip.
 */
export const SESSION_SERVER_RESET_QUERY = SERVER_RESET_QUERY.replace(DEALLOCATE_SQL_PREPARED, 'DEALLOCATE ALL');

/**
 * What a session-pooling process sets over the shared settings (later lines win in PgBouncer's ini):
 * the pool mode and its reset. The fleet's session processes and the rehearsal's session endpoints
 * (the compatibility matrix's session column) take these.
 */
export function poolModeSettings(mode: PoolMode, resetSuffix?: string): IniSetting[] {
  if (mode === PoolMode.TRANSACTION) return [];
  return [
    ['pool_mode', PoolMode.SESSION],
    ['server_reset_query', resetSuffix === undefined ? SESSION_SERVER_RESET_QUERY : `${SESSION_SERVER_RESET_QUERY}; ${resetSuffix}`],
  ];
}

export type IniSetting = readonly [string, string | number];

/**
 * Slot `slot`'s share of `total` split over `parts`: floor(total / parts), plus one for the first
 * total % parts slots. The shares differ by at most one and add up to exactly `total`, so the
 * processes that split a target's budget never open more than the budget between them.
 */
export function shareOf(total: number, parts: number, slot: number): number {
  if (!Number.isInteger(parts) || parts < 1 || !Number.isInteger(slot) || slot < 0 || slot >= parts) throw new Error(`shareOf: slot ${slot} of ${parts} parts`);
  return Math.floor(total / parts) + (slot < total % parts ? 1 : 0);
}

/** Values of pgbouncer.ini are bare; refuse anything that could break out of a line or a key. */
export function iniValue(name: string, value: string | number): string {
  const text = String(value);
  if (/[\r\n]/.test(text)) throw new Error(`pgbouncer setting ${name} contains a line break: ${JSON.stringify(text)}`);
  return text;
}

/** libpq-style connection-string value for the [databases] and [peers] sections. */
export function connValue(value: string): string {
  return /^[A-Za-z0-9_.,:/@-]+$/.test(value) ? value : `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** `key = value` lines of one section, each value checked. */
export function iniLines(settings: ReadonlyArray<IniSetting>): string[] {
  return settings.map(([k, v]) => `${k} = ${iniValue(k, v)}`);
}

/**
 * PgBouncer's server_login_retry of the kit's processes: after a failed server login a pool fails its new
 * clients at once ("server login has been failing") and tries the server again this much later, so a reader
 * that comes back serves again about this long after it takes logins.
 */
export const DEFAULT_SERVER_LOGIN_RETRY_SECONDS = 1;

/** What the shared settings need to know; paths are absolute on the host that runs PgBouncer. */
export interface SharedPgBouncerOptions {
  /** Client connections each process accepts (or a template's token for it). */
  readonly maxClientConnections: number | string;
  /** RDS Proxy's ConnectionBorrowTimeout: how long a client waits for a pooled connection (or a token). */
  readonly connectionBorrowTimeoutSeconds: number | string;
  readonly authFile: string;
  /** User allowed on the admin console (SHOW POOLS, RELOAD). */
  readonly adminUser: string;
  /** The certificate and key clients see, and the CA that signed them. */
  readonly clientTls: { readonly certFile: string; readonly keyFile: string; readonly caFile: string };
  /** The CA the servers' certificates chain to (the rehearsal CA, or the RDS CA bundle). */
  readonly serverCaFile: string;
  /** Seconds before a failed server login is retried; short so a re-pointed pool recovers fast. @default DEFAULT_SERVER_LOGIN_RETRY_SECONDS */
  readonly serverLoginRetrySeconds?: number;
  /** @default 2 */
  readonly serverConnectTimeoutSeconds?: number;
}

/**
 * The [pgbouncer] settings every process of the kit has, in this order. The rehearsal and the fleet
 * add what is theirs (listen address, peer_id, pool size, DNS, keepalives).
 */
export function sharedPgBouncerSettings(o: SharedPgBouncerOptions): IniSetting[] {
  return [
    // Transaction pooling is what RDS Proxy does: a server connection is borrowed per transaction.
    ['pool_mode', PoolMode.TRANSACTION],
    ['max_client_conn', o.maxClientConnections],
    // No reserve pool: the pool size is the whole budget, as MaxConnectionsPercent is for RDS Proxy.
    ['reserve_pool_size', 0],
    ['query_wait_timeout', o.connectionBorrowTimeoutSeconds],
    ['max_prepared_statements', MAX_PREPARED_STATEMENTS],
    ['server_reset_query', SERVER_RESET_QUERY],
    ['server_reset_query_always', 1],
    // Spread server connections evenly instead of reusing the most recent (LIFO) one.
    ['server_round_robin', 1],
    ['server_login_retry', o.serverLoginRetrySeconds ?? DEFAULT_SERVER_LOGIN_RETRY_SECONDS],
    ['server_connect_timeout', o.serverConnectTimeoutSeconds ?? 2],
    // PgBouncer's default: a server connection idle for 30 s is checked before reuse. Checking every
    // reuse (0) would add a round trip to every transaction.
    ['server_check_delay', 30],
    ['auth_type', 'scram-sha-256'],
    ['auth_file', o.authFile],
    ['admin_users', o.adminUser],
    ['stats_users', o.adminUser],
    // RDS Proxy requires TLS from clients; so does every endpoint of the kit.
    ['client_tls_sslmode', 'require'],
    ['client_tls_cert_file', o.clientTls.certFile],
    ['client_tls_key_file', o.clientTls.keyFile],
    ['client_tls_ca_file', o.clientTls.caFile],
    // The servers' certificate must chain to the CA and name the host it is reached by.
    ['server_tls_sslmode', 'verify-full'],
    ['server_tls_ca_file', o.serverCaFile],
    // Dropped without a word: only what changes nothing (IGNORED_STARTUP_PARAMETERS).
    ['ignore_startup_parameters', IGNORED_STARTUP_PARAMETERS.join(',')],
    ['application_name_add_host', 0],
    ['log_connections', 0],
    ['log_disconnections', 0],
  ];
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
