/**
 * Reads the Lambda consumers' environment (the contract is environment.ts).
 *
 * `loadConfig` is a pure function of the environment so every rule can be
 * unit-tested; `getConfig` memoises it for the container's lifetime, because
 * the environment of a Lambda container never changes after cold start.
 */
import {
  CONNECTION_MODES,
  DB_AUTH_KINDS,
  DB_TLS_MODES,
  ENDPOINT_ROLES,
  ENV_VARS,
  INTEGER_SETTINGS,
  SERVICE_NAME,
  ConnectionMode,
  type DbAuth,
  type DbTlsMode,
  EndpointRole,
  type TlsConfig,
} from './environment';
import { ConfigError } from './errors';
import { proxyDomainOf } from './tls';

export type { ConnectionMode, DbAuth, DbTlsMode, EndpointRole, TlsConfig };

export type AuthConfig =
  | { readonly kind: 'iam'; readonly region: string }
  | { readonly kind: 'secret'; readonly secretArn: string }
  | { readonly kind: 'password'; readonly password: string };

const VERIFYING_TLS_MODES: ReadonlyArray<DbTlsMode> = ['verify-full', 'verify-proxy-domain'];

export interface Config {
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
  readonly auth: AuthConfig;
  readonly tls: TlsConfig;
  readonly endpointRole: EndpointRole;
  readonly connectionMode: ConnectionMode;
  readonly connectTimeoutMs: number;
  readonly queryTimeoutMs: number;
  readonly maxRetries: number;
  readonly retryBaseDelayMs: number;
  /** Reported as `application_name` so sessions are attributable in pg_stat_activity. */
  readonly applicationName: string;
}

export const DEFAULT_APPLICATION_NAME = SERVICE_NAME;

type Env = NodeJS.ProcessEnv;

/** Reads a variable, treating empty/whitespace-only as unset (CDK/CLI often pass ""). */
function read(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined) return undefined;
  const trimmed = raw.trim();
  return trimmed === '' ? undefined : trimmed;
}

function required(env: Env, name: string, hint: string): string {
  const value = read(env, name);
  if (value === undefined) throw new ConfigError(name, env[name], `required. ${hint}`);
  return value;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback?: T): T {
  const value = read(env, name);
  if (value === undefined) {
    if (fallback !== undefined) return fallback;
    throw new ConfigError(name, env[name], `required; set it to one of ${allowed.join(', ')}`);
  }
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ConfigError(name, value, `must be one of ${allowed.join(', ')}`);
  }
  return value as T;
}

function integer(env: Env, setting: keyof typeof INTEGER_SETTINGS): number {
  const name = ENV_VARS[setting];
  const { defaultValue: fallback, min, max } = INTEGER_SETTINGS[setting];
  const value = read(env, name);
  if (value === undefined) return fallback;
  // Strict decimal check: Number('1e3') or parseInt('50ms') would silently accept typos.
  if (!/^\d+$/.test(value)) {
    throw new ConfigError(name, value, `must be a whole number between ${min} and ${max} (default ${fallback})`);
  }
  const n = Number(value);
  if (n < min || n > max) {
    throw new ConfigError(name, value, `must be between ${min} and ${max} (default ${fallback})`);
  }
  return n;
}

function readTls(env: Env, host: string, authKind: DbAuth): TlsConfig {
  const mode = oneOf<DbTlsMode>(env, ENV_VARS.tls, DB_TLS_MODES, 'verify-full');
  // Weakened TLS is only for local databases, which never use IAM tokens.
  // Refusing the combination keeps an IAM token from ever crossing an
  // unverified or plaintext connection.
  if (!VERIFYING_TLS_MODES.includes(mode) && authKind !== 'password') {
    throw new ConfigError(ENV_VARS.tls, mode, `only verify-full or verify-proxy-domain is allowed with DB_AUTH=${authKind}; require/disable are for local tests with DB_AUTH=password.`);
  }
  const caFile = read(env, ENV_VARS.tlsCaFile);
  if (caFile !== undefined && !VERIFYING_TLS_MODES.includes(mode)) {
    throw new ConfigError(ENV_VARS.tlsCaFile, caFile, `only used with DB_TLS=verify-full or verify-proxy-domain (DB_TLS is ${mode}); unset it.`);
  }
  const ca = read(env, ENV_VARS.tlsCa);
  if (ca !== undefined) {
    if (mode !== 'verify-full') throw new ConfigError(ENV_VARS.tlsCa, ca, `only used with DB_TLS=verify-full (DB_TLS is ${mode}); unset it.`);
    if (caFile !== undefined) throw new ConfigError(ENV_VARS.tlsCa, ca, `and DB_TLS_CA_FILE=${caFile} are both set: DB_TLS_CA is the only CA trusted, DB_TLS_CA_FILE adds to the public roots; set one.`);
    if (!/^-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----$/.test(ca)) throw new ConfigError(ENV_VARS.tlsCa, ca, 'is not a PEM certificate: set it to the CA certificate the endpoint\'s certificate chains to.');
    return { mode, ca };
  }
  const serverName = read(env, ENV_VARS.tlsServerName);
  if (mode !== 'verify-proxy-domain') {
    if (serverName !== undefined) {
      throw new ConfigError(ENV_VARS.tlsServerName, serverName, `only used with DB_TLS=verify-proxy-domain (DB_TLS is ${mode}); unset it.`);
    }
    return caFile === undefined ? { mode } : { mode, caFile };
  }
  if (serverName === undefined) {
    throw new ConfigError(ENV_VARS.tlsServerName, undefined, "required with DB_TLS=verify-proxy-domain; set it to the proxy's default endpoint, e.g. myproxy.proxy-abc123.us-east-1.rds.amazonaws.com.");
  }
  // The certificate is checked against serverName instead of DB_HOST, so DB_HOST must be an endpoint of
  // that same proxy: otherwise any server holding a certificate for the proxy could stand in for it.
  const domain = proxyDomainOf(serverName);
  if (domain === '' || !host.endsWith(`.${domain}`)) {
    throw new ConfigError(ENV_VARS.host, host, `is not an endpoint of the proxy ${serverName} (DB_TLS_SERVER_NAME): with DB_TLS=verify-proxy-domain DB_HOST must end in .${domain || serverName}.`);
  }
  return caFile === undefined ? { mode, serverName } : { mode, caFile, serverName };
}

/**
 * Validates the environment and returns a typed config.
 * Throws ConfigError naming the variable, its value and the fix.
 */
export function loadConfig(env: Env): Config {
  const host = required(env, ENV_VARS.host, 'Set it to the RDS Proxy endpoint host name.');
  const port = integer(env, 'port');
  const database = required(env, ENV_VARS.database, 'Set it to the database name.');
  const user = required(env, ENV_VARS.user, 'Set it to the database user the function logs in as.');

  const authKind = oneOf<DbAuth>(env, ENV_VARS.auth, DB_AUTH_KINDS, 'iam');
  let auth: AuthConfig;
  if (authKind === 'iam') {
    const region = required(env, ENV_VARS.region, 'DB_AUTH=iam signs tokens for a region; Lambda sets AWS_REGION itself.');
    auth = { kind: 'iam', region };
  } else if (authKind === 'secret') {
    const secretArn = required(env, ENV_VARS.secretArn, 'DB_AUTH=secret reads the password from this Secrets Manager secret; set it to the secret\'s ARN.');
    if (!/^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$/.test(secretArn)) {
      throw new ConfigError(ENV_VARS.secretArn, secretArn, 'is not a Secrets Manager secret ARN (arn:<partition>:secretsmanager:<region>:<account>:secret:<name>).');
    }
    auth = { kind: 'secret', secretArn };
  } else {
    // Not trimmed-checked via read(): a password may legitimately contain spaces.
    const password = env[ENV_VARS.password];
    if (password === undefined || password === '') {
      throw new ConfigError(ENV_VARS.password, password, 'required when DB_AUTH=password (local use only; deployed functions use DB_AUTH=iam or DB_AUTH=secret).');
    }
    auth = { kind: 'password', password };
  }

  const tls = readTls(env, host, authKind);
  const endpointRole = oneOf<EndpointRole>(env, ENV_VARS.endpointRole, ENDPOINT_ROLES);
  const connectionMode = oneOf<ConnectionMode>(env, ENV_VARS.connectionMode, CONNECTION_MODES, ConnectionMode.REUSE);

  return {
    host,
    port,
    database,
    user,
    auth,
    tls,
    endpointRole,
    connectionMode,
    connectTimeoutMs: integer(env, 'connectTimeoutMs'),
    queryTimeoutMs: integer(env, 'queryTimeoutMs'),
    maxRetries: integer(env, 'maxRetries'),
    retryBaseDelayMs: integer(env, 'retryBaseDelayMs'),
    applicationName: read(env, ENV_VARS.functionName) ?? DEFAULT_APPLICATION_NAME,
  };
}

let cached: Config | undefined;

/** The container's config, read from process.env on first use. */
export function getConfig(): Config {
  cached ??= loadConfig(process.env);
  return cached;
}

/**
 * Returns the config after checking the function is wired to the endpoint
 * role its code expects, so a read function pointed at the writer (or the
 * reverse) fails on its first use instead of silently misbehaving.
 */
export function getConfigForRole(role: EndpointRole): Config {
  const config = getConfig();
  if (config.endpointRole !== role) {
    throw new ConfigError(ENV_VARS.endpointRole, config.endpointRole, `this handler must be wired to the ${role} proxy endpoint; set DB_ENDPOINT_ROLE=${role} and DB_HOST to that endpoint.`);
  }
  return config;
}

/**
 * Test hook: replace the memoised config (or clear it so the next
 * getConfig() re-reads process.env).
 */
export function setConfigForTests(config: Config | undefined): void {
  cached = config;
}
