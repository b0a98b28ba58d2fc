/**
 * RDS Proxy's pool defaults for the settings a template or plan leaves out (the kit's constructs and
 * modules always set all three; a hand-written proxy may not). Source: RDS API reference,
 * ConnectionPoolConfiguration (docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_ConnectionPoolConfiguration.html):
 * MaxConnectionsPercent 100 for every engine but SQL Server; MaxIdleConnectionsPercent half of
 * MaxConnectionsPercent, or 50 when that is not given either; ConnectionBorrowTimeout 120 s.
 */
import type { PoolSettings } from '../../model/sizing';
import type { ProxyPoolTopology } from './types';

export const RDS_PROXY_DEFAULT_MAX_CONNECTIONS_PERCENT = 100;
export const RDS_PROXY_DEFAULT_IDLE_WITHOUT_MAX_PERCENT = 50;
export const RDS_PROXY_DEFAULT_BORROW_TIMEOUT_SECONDS = 120;

/** The pool as given, with RDS Proxy's defaults for what is missing, recording which were filled. */
export function poolWithDefaults(given: Partial<PoolSettings> & { readonly initQuery?: string }): ProxyPoolTopology {
  const defaulted: Array<keyof PoolSettings> = [];
  const pick = (key: keyof PoolSettings, fallback: number): number => {
    const value = given[key];
    if (value !== undefined) return value;
    defaulted.push(key);
    return fallback;
  };
  const maxConnectionsPercent = pick('maxConnectionsPercent', RDS_PROXY_DEFAULT_MAX_CONNECTIONS_PERCENT);
  const idleFallback = given.maxConnectionsPercent !== undefined ? Math.floor(given.maxConnectionsPercent / 2) : RDS_PROXY_DEFAULT_IDLE_WITHOUT_MAX_PERCENT;
  const maxIdleConnectionsPercent = pick('maxIdleConnectionsPercent', idleFallback);
  const connectionBorrowTimeoutSeconds = pick('connectionBorrowTimeoutSeconds', RDS_PROXY_DEFAULT_BORROW_TIMEOUT_SECONDS);
  return {
    maxConnectionsPercent,
    maxIdleConnectionsPercent,
    connectionBorrowTimeoutSeconds,
    ...(given.initQuery !== undefined && given.initQuery !== '' ? { initQuery: given.initQuery } : {}),
    defaulted,
  };
}
