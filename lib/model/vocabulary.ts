/**
 * Words the constructs, the Terraform generator and the rehearsal share with the Lambda consumers. Their
 * one home is the consumers' environment contract (lambda/src/environment.ts), which depends on nothing
 * so the consumers bundle on their own; the model re-exports them.
 */
import type { TlsConfig } from '../../lambda/src/environment';

export {
  CONNECTION_MODES,
  ENDPOINT_ROLES,
  POSTGRES_PORT,
  ConnectionMode,
  EndpointRole,
} from '../../lambda/src/environment';

/** The endpoint a consumer connects through, as its TLS check needs to know it. */
export interface ConsumerEndpointTarget {
  /** Whether the endpoint is its proxy's default endpoint, rather than one created beside it. */
  readonly isProxyDefaultEndpoint: boolean;
  /** Host name of the proxy's default endpoint. */
  readonly proxyDefaultEndpoint: string;
}

/**
 * The TLS check a consumer makes of its proxy endpoint. RDS Proxy's certificate is a wildcard for the
 * proxy's domain, which names the default endpoint but not the endpoints created beside it (rule
 * consumer-tls-server-name): verify-full on the default endpoint, verify-proxy-domain against the
 * default endpoint's name on the others.
 */
export function consumerEndpointTls(target: ConsumerEndpointTarget): TlsConfig {
  return target.isProxyDefaultEndpoint ? { mode: 'verify-full' } : { mode: 'verify-proxy-domain', serverName: target.proxyDefaultEndpoint };
}
