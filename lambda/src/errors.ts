/**
 * Typed errors for the Lambda consumers, plus the classifier that decides
 * which database failures are worth retrying.
 *
 * Every error carries a stable `name` so callers (and the Lambda error
 * report, which shows `errorType`) can tell them apart without parsing text.
 */

/** A required environment variable is missing or has an invalid value. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';

  constructor(
    /** The environment variable at fault, e.g. `DB_PORT`. */
    readonly variable: string,
    /** The offending value (undefined when missing). */
    readonly value: string | undefined,
    /** What is wrong and how to fix it. */
    readonly hint: string,
  ) {
    super(`${variable}=${value === undefined ? '(unset)' : JSON.stringify(value)} is invalid: ${hint}`);
  }
}

/** The invocation event does not have the expected shape. */
export class ValidationError extends Error {
  override readonly name = 'ValidationError';

  constructor(
    /** Path of the offending field in the event, e.g. `id`. */
    readonly field: string,
    readonly value: unknown,
    reason: string,
  ) {
    super(`event.${field}=${describe(value)} is invalid: ${reason}`);
  }
}

/**
 * The function is wired to the wrong kind of endpoint, e.g. the write handler
 * reached a server that is in recovery (a read replica). Never retryable:
 * retrying cannot turn a replica into a writer, and a write must not be
 * silently dropped.
 */
export class EndpointRoleError extends Error {
  override readonly name = 'EndpointRoleError';

  constructor(
    readonly expectedRole: 'READ_ONLY' | 'READ_WRITE',
    message: string,
  ) {
    super(message);
  }
}

/** A failure talking to PostgreSQL (or the proxy in front of it). */
export class DatabaseError extends Error {
  override readonly name = 'DatabaseError';

  constructor(
    message: string,
    /**
     * SQLSTATE for server-reported errors (e.g. `57P01`), the Node system or
     * TLS error code for transport failures (e.g. `ECONNREFUSED`,
     * `SELF_SIGNED_CERT_IN_CHAIN`), undefined when neither is known.
     */
    readonly code: string | undefined,
    /** Whether the operation may succeed if tried again on a fresh connection. */
    readonly retryable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Node system errors raised while connecting or on a live socket that a new attempt may not hit. */
const TRANSIENT_SOCKET_CODES = new Set([
  'ECONNREFUSED', // proxy/DB not accepting yet (failover, scaling)
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN', // temporary DNS failure; ENOTFOUND is a wrong host name and is not retried
]);

/** SQLSTATEs outside class 08 that mean "this connection/attempt lost, the next may work". */
const TRANSIENT_SQLSTATES = new Set([
  '57P01', // admin_shutdown: backend terminated (pg_terminate_backend, failover)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: server starting up / in recovery startup
  '40001', // serialization_failure
  '40P01', // deadlock_detected: the victim transaction may be re-run
  '53300', // too_many_connections: pool saturation is usually short-lived
]);

/**
 * Failed logins as poolers report them, whatever SQLSTATE they carry: PgBouncer sends every error of
 * its own as 08P01 protocol_violation ("SASL authentication failed", "password authentication
 * failed", "no such user"; measured with PgBouncer 1.18), and RDS Proxy's documented messages
 * (Aurora user guide, "Troubleshooting for RDS Proxy") come without a documented SQLSTATE. Retrying
 * cannot fix a wrong credential or a missing secret; it only adds latency and load, so these fail at
 * once. PgBouncer's "server login has been failing" is its back-off after server-side failures and
 * stays retryable.
 */
const AUTHENTICATION_FAILURE_MESSAGES = [
  /authentication failed/i, // PgBouncer (SASL, password, certificate, PAM), RDS Proxy (IAM), PostgreSQL
  /^no such user/i, // PgBouncer
  /invalid SASL authentication mechanism/i, // PgBouncer
  /cannot do SCRAM authentication/i, // PgBouncer
  /has no credentials for the role/i, // RDS Proxy: no secret registered for the user
  /password that was provided for the role/i, // RDS Proxy
  /IAM is allowed only with SSL/i, // RDS Proxy
];

/** Whether a server-reported error is a failed login: SQLSTATE class 28, or a pooler's login message. */
export function isAuthenticationFailure(err: unknown): boolean {
  const sqlState = serverSqlState(err);
  if (sqlState === undefined) return false;
  if (sqlState.startsWith('28')) return true;
  const message = messageOf(err);
  return AUTHENTICATION_FAILURE_MESSAGES.some((re) => re.test(message));
}

/**
 * Messages node-postgres uses for transport failures it raises itself,
 * without a `code`. Matching text is brittle, so keep this list short and
 * covered by tests.
 */
const TRANSIENT_PG_MESSAGES = [
  /^Connection terminated unexpectedly$/,
  /^Connection terminated due to connection timeout$/,
  /^Client has encountered a connection error and is not queryable$/,
];

interface ErrorLike {
  code?: unknown;
  message?: unknown;
  errors?: unknown;
}

function codeOf(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null) {
    const code = (err as ErrorLike).code;
    if (typeof code === 'string' && code.length > 0) return code;
    // Node's happy-eyeballs connect (autoSelectFamily) reports an
    // AggregateError whose members carry the per-address socket codes.
    const inner = (err as ErrorLike).errors;
    if (Array.isArray(inner)) {
      for (const e of inner) {
        const c = codeOf(e);
        if (c !== undefined) return c;
      }
    }
  }
  return undefined;
}

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === 'object' && err !== null && typeof (err as ErrorLike).message === 'string') {
    return (err as ErrorLike).message as string;
  }
  return String(err);
}

/**
 * SQLSTATE of an error reported by the server. pg's server errors carry a
 * `severity` field; checking it keeps 5-letter Node codes such as `EPIPE`
 * from being mistaken for SQLSTATEs.
 */
function serverSqlState(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { code, severity } = err as { code?: unknown; severity?: unknown };
  return typeof severity === 'string' && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * Decides whether an error from pg / the socket layer is transient, i.e.
 * whether retrying on a fresh connection may succeed.
 *
 * Deliberately NOT retryable: 25006 read_only_sql_transaction (a miswired
 * endpoint stays miswired), auth failures (28xxx, and 08P01 with an
 * login message as PgBouncer and RDS Proxy report them), TLS certificate errors,
 * 57014 query_canceled (a statement timeout would just time out again),
 * client-side query timeouts (the statement may still be running), and every
 * SQL error caused by the statement itself.
 */
export function isTransientError(err: unknown): boolean {
  if (err instanceof DatabaseError) return err.retryable;
  if (err instanceof ConfigError || err instanceof ValidationError || err instanceof EndpointRoleError) {
    return false;
  }
  const sqlState = serverSqlState(err);
  if (sqlState !== undefined) {
    if (isAuthenticationFailure(err)) return false;
    return sqlState.startsWith('08') || TRANSIENT_SQLSTATES.has(sqlState);
  }
  const code = codeOf(err);
  if (code !== undefined) return TRANSIENT_SOCKET_CODES.has(code);
  const message = messageOf(err);
  return TRANSIENT_PG_MESSAGES.some((re) => re.test(message));
}

/**
 * Wraps an unknown failure into a DatabaseError (keeping the original as
 * `cause`). Our own typed errors pass through unchanged so their type
 * survives to the Lambda error report.
 */
export function toDatabaseError(err: unknown): Error {
  if (
    err instanceof DatabaseError ||
    err instanceof ConfigError ||
    err instanceof ValidationError ||
    err instanceof EndpointRoleError
  ) {
    return err;
  }
  return new DatabaseError(messageOf(err), codeOf(err), isTransientError(err), { cause: err });
}

/** SQLSTATE of a server-reported error, if any (for branching on e.g. 42P01). */
export function sqlStateOf(err: unknown): string | undefined {
  return err instanceof DatabaseError ? serverSqlState(err.cause) : serverSqlState(err);
}

function describe(value: unknown): string {
  if (value === undefined) return '(missing)';
  try {
    const json = JSON.stringify(value);
    return json === undefined ? String(value) : json.length > 80 ? `${json.slice(0, 77)}...` : json;
  } catch {
    // Too deep or cyclic to print (String() would recurse as deep as JSON did): name the type only.
    return Array.isArray(value) ? '(array)' : `(${typeof value})`;
  }
}
