/** What an RdsProxy of another stack or app is imported by (its own file, so the import's implementation needs nothing of the construct's). */
import type { PoolSizing } from './model';

/**
 * An RdsProxy of another stack or app (RdsProxy.fromRdsProxyAttributes): the values its app
 * exports, e.g. as stack outputs.
 */
export interface RdsProxyAttributes {
  /** The proxy's name (its metrics' ProxyName). */
  readonly proxyName: string;
  /** The proxy's ARN: `rds-db:connect` is scoped to it. */
  readonly proxyArn: string;
  /** The proxy's default endpoint host name. */
  readonly defaultEndpoint: string;
  /**
   * Names of the proxy's READ_ONLY endpoints, charted and summed in the client-side metrics.
   * @default - none: the client-side READ_ONLY metrics are refused
   */
  readonly readOnlyEndpointNames?: string[];
  /**
   * Names of the proxy's READ_WRITE endpoints besides the default one.
   * @default - the default endpoint only
   */
  readonly readWriteEndpointNames?: string[];
  /**
   * The proxy's pool sizing (RdsProxy.poolSizing in its app).
   * @default - unknown: reading poolSizing fails with the fix
   */
  readonly poolSizing?: PoolSizing;
}
