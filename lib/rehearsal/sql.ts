/** Short-lived, bounded connections the rehearsal itself uses to manage and probe the servers. */
import { readFileSync } from 'node:fs';
import { Client, type ClientConfig, type QueryResultRow } from 'pg';

export interface Target {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  readonly database: string;
  /** PEM file of the rehearsal CA; connections verify the certificate and the address (verify-full). */
  readonly caFile: string;
  /** Name to verify the certificate against instead of the address (a certificate that names no address). */
  readonly serverName?: string;
}

const caCache = new Map<string, string>();

export function clientConfig(target: Target, timeoutMs = 3000): ClientConfig {
  let ca = caCache.get(target.caFile);
  if (ca === undefined) {
    ca = readFileSync(target.caFile, 'utf8');
    caCache.set(target.caFile, ca);
  }
  return {
    host: target.host,
    port: target.port,
    user: target.user,
    password: target.password,
    database: target.database,
    ssl: { ca, rejectUnauthorized: true, ...(target.serverName === undefined ? {} : { servername: target.serverName }) },
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs * 10,
    application_name: 'aurora-proxy-kit-rehearsal',
  };
}

/** Runs statements on one connection and closes it; simple-query protocol when there are no params. */
export async function query<R extends QueryResultRow = QueryResultRow>(target: Target, sql: string, params?: unknown[], timeoutMs = 3000): Promise<R[]> {
  const client = new Client(clientConfig(target, timeoutMs));
  client.on('error', () => undefined);
  try {
    await client.connect();
    const result = params === undefined ? await client.query<R>(sql) : await client.query<R>(sql, params);
    return result.rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Thrown by a probe to stop waiting at once (e.g. the process being waited for has exited). */
export class GiveUp extends Error {}

/** Retries `probe` until it returns a value other than undefined, or the deadline passes. */
export async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      if (err instanceof GiveUp) throw err;
      lastError = err;
    }
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? `: ${lastError.message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await sleep(intervalMs);
  }
}

/** Single-quoted SQL literal (standard_conforming_strings: only quotes are doubled). */
export function sqlLiteral(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** libpq conninfo value: single-quoted, backslash-escaped. */
export function conninfoValue(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
