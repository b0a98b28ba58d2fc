/**
 * The consumers' environment contract, written once: the variables a consumer reads, the values they
 * accept, their defaults, and `consumerEnvironment`, which turns a typed deployment spec into the
 * environment record. config.ts reads through these names; whoever deploys a consumer (the CDK
 * construct, the local rehearsal, the tests) builds its environment with `consumerEnvironment`.
 *
 * This file depends on nothing, so the consumers can be bundled on their own and the infrastructure
 * code can import it.
 */

/** The variables of the contract, by the setting each carries. */
export const ENV_VARS = {
  host: 'DB_HOST',
  port: 'DB_PORT',
  database: 'DB_NAME',
  user: 'DB_USER',
  auth: 'DB_AUTH',
  password: 'DB_PASSWORD',
  secretArn: 'DB_SECRET_ARN',
  tls: 'DB_TLS',
  tlsCaFile: 'DB_TLS_CA_FILE',
  tlsCa: 'DB_TLS_CA',
  tlsServerName: 'DB_TLS_SERVER_NAME',
  endpointRole: 'DB_ENDPOINT_ROLE',
  connectionMode: 'CONNECTION_MODE',
  connectTimeoutMs: 'CONNECT_TIMEOUT_MS',
  queryTimeoutMs: 'QUERY_TIMEOUT_MS',
  maxRetries: 'MAX_RETRIES',
  retryBaseDelayMs: 'RETRY_BASE_DELAY_MS',
  /** Read by the Powertools logger. */
  serviceName: 'POWERTOOLS_SERVICE_NAME',
  logLevel: 'POWERTOOLS_LOG_LEVEL',
  /** Set by the Lambda runtime itself. */
  region: 'AWS_REGION',
  functionName: 'AWS_LAMBDA_FUNCTION_NAME',
} as const;

/**
 * iam: an IAM token per connection (RDS Proxy); secret: the password of a Secrets Manager secret
 * `{"username", "password"}` (the PgBouncer engine, which cannot check IAM tokens); password: a static
 * password in the environment (local use only).
 */
export const DB_AUTH_KINDS = ['iam', 'secret', 'password'] as const;
export type DbAuth = (typeof DB_AUTH_KINDS)[number];

/**
 * verify-full: chain and host name (a proxy's default endpoint, a local server);
 * verify-proxy-domain: chain to Amazon's roots and the proxy's own default-endpoint name, for the
 * custom endpoints RDS Proxy's wildcard certificate does not name (see tls.ts);
 * require / disable: local tests with a password only.
 */
export const DB_TLS_MODES = ['verify-full', 'verify-proxy-domain', 'require', 'disable'] as const;
export type DbTlsMode = (typeof DB_TLS_MODES)[number];

/** The PostgreSQL port Aurora, RDS Proxy and the rehearsal's endpoints listen on. */
export const POSTGRES_PORT = 5432;

/** What a proxy endpoint's connections reach: the writer, or the readers. */
export enum EndpointRole {
  /** Reads spread over the readers. */
  READ_ONLY = 'READ_ONLY',
  /** Reads and writes reach the writer. */
  READ_WRITE = 'READ_WRITE',
}
export const ENDPOINT_ROLES: ReadonlyArray<EndpointRole> = [EndpointRole.READ_ONLY, EndpointRole.READ_WRITE];

/**
 * How a consumer holds its database connection: `reuse` keeps one across invocations,
 * `per-invocation` opens one per call (the seeds' comparison).
 */
export enum ConnectionMode {
  /** One connection kept across invocations. */
  REUSE = 'reuse',
  /** A connection opened and closed per invocation. */
  PER_INVOCATION = 'per-invocation',
}
export const CONNECTION_MODES: ReadonlyArray<ConnectionMode> = [ConnectionMode.REUSE, ConnectionMode.PER_INVOCATION];

/** Service name in log lines, and `application_name` when no function name is set. */
export const SERVICE_NAME = 'aurora-proxy-kit';

export interface IntegerSetting {
  readonly defaultValue: number;
  readonly min: number;
  readonly max: number;
}

/** The whole-number settings: their defaults and the range the consumer accepts. */
export const INTEGER_SETTINGS = {
  port: { defaultValue: POSTGRES_PORT, min: 1, max: 65535 },
  connectTimeoutMs: { defaultValue: 5000, min: 100, max: 60000 },
  queryTimeoutMs: { defaultValue: 5000, min: 100, max: 900000 },
  maxRetries: { defaultValue: 2, min: 0, max: 5 },
  retryBaseDelayMs: { defaultValue: 50, min: 1, max: 10000 },
} as const satisfies Record<string, IntegerSetting>;

export interface TlsConfig {
  readonly mode: DbTlsMode;
  /** PEM bundle trusted in addition to the roots of the mode (verify-full, verify-proxy-domain). */
  readonly caFile?: string;
  /**
   * The only CA (PEM text) trusted, instead of the public roots (verify-full): a private CA such as the
   * PgBouncer engine's, whose certificate is known only at deploy time.
   */
  readonly ca?: string;
  /** The name the certificate must be valid for (verify-proxy-domain): the proxy's default endpoint. */
  readonly serverName?: string;
}

/** How a consumer logs in: an IAM token, a password secret's (PgBouncer engine), or a password (local use only). */
export type ConsumerAuth =
  | { readonly kind: 'iam' }
  | { readonly kind: 'secret'; readonly secretArn: string }
  | { readonly kind: 'password'; readonly password: string };

/** Where and how a consumer connects; `consumerEnvironment` turns it into the function's environment. */
export interface ConsumerDeployment {
  /** Host name of the proxy endpoint (or a local pooler). */
  readonly host: string;
  readonly port: number;
  readonly database: string;
  /** The database user the function logs in as. */
  readonly user: string;
  /** Role of the endpoint `host` names; the handler checks it matches its own at cold start. */
  readonly endpointRole: EndpointRole;
  /** @default { kind: 'iam' } */
  readonly auth?: ConsumerAuth;
  /** @default { mode: 'verify-full' } */
  readonly tls?: TlsConfig;
  /** @default 'reuse' */
  readonly connectionMode?: ConnectionMode;
  /** @default INTEGER_SETTINGS.connectTimeoutMs.defaultValue */
  readonly connectTimeoutMs?: number;
  /** @default INTEGER_SETTINGS.queryTimeoutMs.defaultValue */
  readonly queryTimeoutMs?: number;
  /** @default INTEGER_SETTINGS.maxRetries.defaultValue */
  readonly maxRetries?: number;
  /** @default INTEGER_SETTINGS.retryBaseDelayMs.defaultValue */
  readonly retryBaseDelayMs?: number;
  /**
   * Powertools log level, e.g. `DEBUG` or `SILENT`.
   * @default - Powertools' default
   */
  readonly logLevel?: string;
}

/**
 * The environment of a consumer deployed as `spec` describes. Settings left out are left out of the
 * record too, so the consumer's defaults apply; auth, TLS and the connection mode are always written,
 * so a deployed function's template says how it connects.
 */
export function consumerEnvironment(spec: ConsumerDeployment): Record<string, string> {
  const auth = spec.auth ?? { kind: 'iam' };
  const tls = spec.tls ?? { mode: 'verify-full' };
  const optional: Array<[string, string | number | undefined]> = [
    [ENV_VARS.connectTimeoutMs, spec.connectTimeoutMs],
    [ENV_VARS.queryTimeoutMs, spec.queryTimeoutMs],
    [ENV_VARS.maxRetries, spec.maxRetries],
    [ENV_VARS.retryBaseDelayMs, spec.retryBaseDelayMs],
    [ENV_VARS.logLevel, spec.logLevel],
  ];
  return {
    [ENV_VARS.host]: spec.host,
    [ENV_VARS.port]: String(spec.port),
    [ENV_VARS.database]: spec.database,
    [ENV_VARS.user]: spec.user,
    [ENV_VARS.auth]: auth.kind,
    ...(auth.kind === 'password' ? { [ENV_VARS.password]: auth.password } : {}),
    ...(auth.kind === 'secret' ? { [ENV_VARS.secretArn]: auth.secretArn } : {}),
    [ENV_VARS.tls]: tls.mode,
    ...(tls.caFile !== undefined ? { [ENV_VARS.tlsCaFile]: tls.caFile } : {}),
    ...(tls.ca !== undefined ? { [ENV_VARS.tlsCa]: tls.ca } : {}),
    ...(tls.serverName !== undefined ? { [ENV_VARS.tlsServerName]: tls.serverName } : {}),
    [ENV_VARS.endpointRole]: spec.endpointRole,
    [ENV_VARS.connectionMode]: spec.connectionMode ?? 'reuse',
    ...Object.fromEntries(optional.filter(([, value]) => value !== undefined).map(([name, value]) => [name, String(value)])),
    [ENV_VARS.serviceName]: SERVICE_NAME,
  };
}
