/**
 * Connection management for the Lambda consumers.
 *
 * Two modes (CONNECTION_MODE), kept side by side so their latency can be
 * benchmarked:
 * - `reuse`: one pg.Client at module scope survives across invocations of a
 *   warm container. Lambda runs one invocation at a time per container, so a
 *   single client (not a pool) is enough; the pooling happens in RDS Proxy.
 * - `per-invocation`: connect, run, end on every call.
 *
 * Transient failures (see errors.ts) are retried a bounded number of times on
 * a fresh connection, with exponential backoff and jitter. The unit of work
 * passed to withClient() is re-run on retry, so it must be idempotent.
 */
import { Client, type ClientBase, type ClientConfig } from 'pg';
import { Signer } from '@aws-sdk/rds-signer';
import type { Config, ConnectionMode } from './config';
import { ConfigError, isTransientError, toDatabaseError } from './errors';
import { ENV_VARS } from './environment';
import { readSecretCredentials } from './secret-credentials';
import { logger } from './logger';
import { resetTlsCachesForTests, sslOptions } from './tls';

/** Reported in every response so callers can see what the connection layer did. */
export interface ConnectionInfo {
  /** True when this invocation ran on a client opened by an earlier invocation. */
  readonly reused: boolean;
  readonly mode: ConnectionMode;
  /** 1 when the first attempt succeeded; more when transient errors were retried. */
  readonly attempts: number;
}

export interface WithClientOptions {
  /**
   * Time left before the Lambda deadline (context.getRemainingTimeInMillis).
   * A retry is skipped when it could not finish in time anyway, so the
   * function reports the real database error instead of a Lambda timeout.
   */
  readonly remainingTimeMs?: () => number;
}

/** Upper bound of a single backoff sleep, whatever MAX_RETRIES/RETRY_BASE_DELAY_MS say. */
const MAX_BACKOFF_MS = 2000;
/** How long closing a client may take before we stop waiting for it. */
const END_TIMEOUT_MS = 1000;

// ---------------------------------------------------------------------------
// Client options
// ---------------------------------------------------------------------------

let signerCache: { key: string; signer: Signer } | undefined;

function iamSigner(config: Config, region: string): Signer {
  const key = `${config.host}:${config.port}:${config.user}:${region}`;
  if (signerCache?.key !== key) {
    signerCache = { key, signer: new Signer({ hostname: config.host, port: config.port, username: config.user, region }) };
  }
  return signerCache.signer;
}

/**
 * How long a password read from Secrets Manager is used before it is read again: the PgBouncer hosts
 * re-read their secrets on the same period, so a rotated password reaches both within minutes.
 */
export const SECRET_PASSWORD_TTL_MS = 5 * 60 * 1000;

let secretCache: { arn: string; password: string; readAt: number } | undefined;

/** The password of the consumer's secret, read at the first connect and again after SECRET_PASSWORD_TTL_MS. */
export async function secretPassword(config: Config, secretArn: string, now: () => number = Date.now): Promise<string> {
  if (secretCache?.arn === secretArn && now() - secretCache.readAt < SECRET_PASSWORD_TTL_MS) return secretCache.password;
  const credentials = await readSecretCredentials(secretArn);
  // The secret names the user it is for; logging in as another user with it would only fail later, less clearly.
  if (credentials.username !== config.user) {
    throw new ConfigError(ENV_VARS.user, config.user, `does not match the username ${credentials.username} of the secret ${secretArn} (DB_SECRET_ARN): set DB_USER to the secret's user.`);
  }
  secretCache = { arn: secretArn, password: credentials.password, readAt: now() };
  return credentials.password;
}

function passwordOf(config: Config): ClientConfig['password'] {
  const { auth } = config;
  switch (auth.kind) {
    // IAM tokens are valid for 15 minutes, so a reused client reconnecting
    // hours later needs a new one: pg calls this function on every connect.
    // Signing is local (SigV4 presign with the function's role credentials).
    case 'iam':
      return () => iamSigner(config, auth.region).getAuthToken();
    case 'secret':
      return () => secretPassword(config, auth.secretArn);
    case 'password':
      return auth.password;
  }
}

/** Full pg.Client options for a config. Exported for tests and diagnostics. */
export function buildClientConfig(config: Config): ClientConfig {
  return {
    host: config.host,
    port: config.port,
    database: config.database,
    user: config.user,
    password: passwordOf(config),
    ssl: sslOptions(config.tls),
    connectionTimeoutMillis: config.connectTimeoutMs,
    // Client-side timeout only. `statement_timeout` as a startup parameter is
    // rejected by RDS Proxy, and SET would pin the proxy session; a
    // server-side limit belongs on the database role (ALTER ROLE ... SET).
    query_timeout: config.queryTimeoutMs,
    application_name: config.applicationName,
  };
}

// ---------------------------------------------------------------------------
// Connection lifecycle
// ---------------------------------------------------------------------------

interface Slot {
  readonly client: Client;
  /** The config the client was opened with; a different config never reuses it. */
  readonly config: Config;
  /** Flipped by pg's 'error'/'end' events: a broken client is never handed out again. */
  readonly state: { broken: boolean };
}

/** The module-scope client of `reuse` mode. */
let slot: Slot | undefined;
let connecting: Promise<Slot> | undefined;

interface Lease {
  readonly client: Client;
  readonly reused: boolean;
  /** per-invocation clients are ended after use; the reuse slot is kept. */
  readonly owned: boolean;
}

async function endQuietly(client: Client): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.end(),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, END_TIMEOUT_MS);
        timer.unref();
      }),
    ]);
  } catch {
    // Closing an already-broken connection may fail; there is nothing to recover.
  } finally {
    clearTimeout(timer);
  }
}

async function openClient(config: Config, onBroken?: (err?: Error) => void): Promise<Client> {
  const client = new Client(buildClientConfig(config));
  // pg emits 'error' when the server or proxy drops an idle connection
  // (failover, idle timeout, pg_terminate_backend). Without a listener Node
  // treats it as an unhandled error and the whole container crashes.
  client.on('error', (err) => {
    logger.warn('database connection lost', { code: (err as { code?: string }).code, error: err.message });
    onBroken?.(err);
  });
  client.on('end', () => onBroken?.());
  try {
    await client.connect();
  } catch (err) {
    void endQuietly(client);
    throw err;
  }
  return client;
}

async function acquire(config: Config): Promise<Lease> {
  if (config.connectionMode === 'per-invocation') {
    return { client: await openClient(config), reused: false, owned: true };
  }
  if (slot !== undefined && !slot.state.broken && slot.config === config) {
    return { client: slot.client, reused: true, owned: false };
  }
  if (slot !== undefined) {
    void endQuietly(slot.client);
    slot = undefined;
  }
  // Share one in-flight connect between concurrent callers (only possible
  // outside Lambda, e.g. a local script calling the handler in parallel).
  connecting ??= (async () => {
    const state = { broken: false };
    const client = await openClient(config, () => {
      state.broken = true;
    });
    slot = { client, config, state };
    return slot;
  })().finally(() => {
    connecting = undefined;
  });
  const ready = await connecting;
  return { client: ready.client, reused: false, owned: false };
}

async function release(lease: Lease, failed: boolean): Promise<void> {
  if (lease.owned) {
    await endQuietly(lease.client);
    return;
  }
  // Any failure discards the reused client: after an error the session may be
  // mid-transaction, still running a timed-out statement, or half-closed, and
  // a reconnect is far cheaper than debugging a poisoned connection.
  const current = slot?.client === lease.client ? slot : undefined;
  if (failed || current === undefined || current.state.broken) {
    if (current !== undefined) slot = undefined;
    void endQuietly(lease.client);
  }
}

/** Backoff before retry number `attempt` (1-based): exponential, capped, "equal jitter". */
export function backoffDelayMs(attempt: number, baseMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(MAX_BACKOFF_MS, baseMs * 2 ** (attempt - 1));
  // Half fixed so retries are really spaced out, half random so many
  // containers failing together (failover) do not retry in lockstep.
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `fn` with a connected client, according to the connection mode.
 * Transient failures are retried on a fresh connection up to
 * config.maxRetries times; everything else is thrown at once, as a typed
 * error (DatabaseError for pg/socket failures).
 */
export async function withClient<T>(
  config: Config,
  fn: (client: ClientBase) => Promise<T>,
  options: WithClientOptions = {},
): Promise<{ result: T; connection: ConnectionInfo }> {
  for (let attempt = 1; ; attempt++) {
    let lease: Lease | undefined;
    try {
      lease = await acquire(config);
      const result = await fn(lease.client);
      await release(lease, false);
      return { result, connection: { reused: lease.reused, mode: config.connectionMode, attempts: attempt } };
    } catch (err) {
      if (lease !== undefined) await release(lease, true);
      const typed = toDatabaseError(err);
      if (!isTransientError(typed) || attempt > config.maxRetries) throw typed;

      const delayMs = backoffDelayMs(attempt, config.retryBaseDelayMs);
      const remaining = options.remainingTimeMs?.();
      if (remaining !== undefined && remaining < delayMs + config.connectTimeoutMs + config.queryTimeoutMs) {
        logger.warn('not retrying: not enough time left before the Lambda deadline', { attempt, remaining_ms: remaining });
        throw typed;
      }
      logger.warn('transient database error, retrying', {
        attempt,
        delay_ms: delayMs,
        code: (typed as { code?: string }).code,
        error: typed.message,
      });
      await sleep(delayMs);
    }
  }
}

/**
 * Test hook: closes the module-scope client and forgets cached signer and
 * CA bundles, so the next withClient() starts like a cold container.
 */
export async function resetConnectionForTests(): Promise<void> {
  const current = slot;
  slot = undefined;
  connecting = undefined;
  signerCache = undefined;
  secretCache = undefined;
  resetTlsCachesForTests();
  if (current !== undefined) await endQuietly(current.client);
}
