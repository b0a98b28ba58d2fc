/**
 * Host names shaped like the ones AWS gives an Aurora cluster and its RDS Proxy, so a rehearsal can
 * resolve them (namespaces' hosts files) and serve certificates that name them the way AWS's do.
 *
 * Shapes, with the examples AWS documents them by:
 * - cluster (writer) endpoint `<cluster>.cluster-<id>.<region>.rds.amazonaws.com`
 *   (Aurora User Guide, "Cluster endpoints for Amazon Aurora", Aurora.Endpoints.Cluster:
 *   mydbcluster.cluster-c7tj4example.us-east-1.rds.amazonaws.com);
 * - reader endpoint `<cluster>.cluster-ro-<id>.<region>.rds.amazonaws.com`
 *   (Aurora.Endpoints.Reader: mydbcluster.cluster-ro-c7tj4example.us-east-1.rds.amazonaws.com);
 * - instance endpoint `<instance>.<id>.<region>.rds.amazonaws.com`
 *   (Aurora.Endpoints.Instance: mydbinstance.c7tj4example.us-east-1.rds.amazonaws.com).
 *   The three examples share one `<id>`: it belongs to the account and Region, not to a cluster, so
 *   a rehearsal has one (`accountRegionId`) for all of them;
 * - proxy default endpoint `<proxy>.proxy-<id>.<region>.rds.amazonaws.com` and a proxy endpoint created
 *   beside it `<endpoint>.endpoint.proxy-<id>.<region>.rds.amazonaws.com`, `<id>` being the proxy's
 *   (Aurora User Guide, "Working with Amazon RDS Proxy endpoints", rds-proxy-endpoints; the AWS CLI's
 *   examples for describe-db-proxies and describe-db-proxy-endpoints:
 *   proxyExample.proxy-ab0cd1efghij.us-east-1.rds.amazonaws.com,
 *   proxyEndpoint1.endpoint.proxy-ab0cd1efghij.us-east-1.rds.amazonaws.com).
 * Every documented `<id>` has 12 lower-case letters and digits; the rehearsal derives its own from
 * the rehearsal's id, so the names stay the same from one run to the next.
 * The China partitions' suffix (amazonaws.com.cn) is not modelled.
 */
import { createHash } from 'node:crypto';
import { RehearsalConfigError } from './errors';

export const DEFAULT_AWS_REGION = 'us-east-1';
const RDS_DOMAIN = 'rds.amazonaws.com';

/** RDS identifiers as both flavours of the kit accept them (lib/model/rules: lower case, no "--", no trailing "-"). */
const IDENTIFIER = /^[a-z][a-z0-9-]{0,62}$/;
const REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;
const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

function checkIdentifier(property: string, value: string): void {
  if (!IDENTIFIER.test(value) || value.includes('--') || value.endsWith('-')) {
    throw new RehearsalConfigError([`${property} ${JSON.stringify(value)} is not an RDS identifier: use 1 to 63 lower-case letters, digits and hyphens, starting with a letter, without "--" or a trailing hyphen`]);
  }
}

/** 12 lower-case letters and digits derived from `seed` (the same seed gives the same id). */
export function awsShapedId(seed: string): string {
  const digest = createHash('sha256').update(`aurora-proxy-kit:${seed}`).digest();
  return Array.from(digest.subarray(0, 12), (byte) => ID_ALPHABET[byte % ID_ALPHABET.length]).join('');
}

/** `length` lower-case hex digits derived from `seed`. */
function hexId(seed: string, length: number): string {
  return createHash('sha256').update(`aurora-proxy-kit:${seed}`).digest('hex').slice(0, length);
}

/** The AWS-shaped names of one rehearsal: one account/Region id, one id per proxy. */
export class AwsNames {
  readonly region: string;
  /** The `<id>` of cluster, reader and instance endpoints. */
  readonly accountRegionId: string;

  constructor(readonly rehearsalId: string, region: string = DEFAULT_AWS_REGION) {
    if (rehearsalId.trim() === '') throw new RehearsalConfigError(['rehearsalId "" is empty: name the rehearsal, e.g. its loopback block user']);
    if (!REGION.test(region)) throw new RehearsalConfigError([`region ${JSON.stringify(region)} is not an AWS Region name: use e.g. ${DEFAULT_AWS_REGION}`]);
    this.region = region;
    this.accountRegionId = awsShapedId(`account-region:${rehearsalId}:${region}`);
  }

  private suffix(): string {
    return `${this.region}.${RDS_DOMAIN}`;
  }

  clusterEndpoint(cluster: string): string {
    checkIdentifier('cluster', cluster);
    return `${cluster}.cluster-${this.accountRegionId}.${this.suffix()}`;
  }

  readerEndpoint(cluster: string): string {
    checkIdentifier('cluster', cluster);
    return `${cluster}.cluster-ro-${this.accountRegionId}.${this.suffix()}`;
  }

  instanceEndpoint(instance: string): string {
    checkIdentifier('instance', instance);
    return `${instance}.${this.accountRegionId}.${this.suffix()}`;
  }

  /** The proxy's own `<id>`. */
  proxyId(proxy: string): string {
    checkIdentifier('proxy', proxy);
    return awsShapedId(`proxy:${this.rehearsalId}:${this.region}:${proxy}`);
  }

  /** `proxy-<id>.<region>.rds.amazonaws.com`: what lambda/src/tls.ts `proxyDomainOf` takes from the default endpoint. */
  proxyDomain(proxy: string): string {
    return `proxy-${this.proxyId(proxy)}.${this.suffix()}`;
  }

  /** The default (read/write) endpoint: the name consumers verify the proxy's certificate against. */
  proxyDefaultEndpoint(proxy: string): string {
    return `${proxy}.${this.proxyDomain(proxy)}`;
  }

  /** An endpoint created beside the default one (READ_ONLY or READ_WRITE, possibly in another VPC). */
  proxyCustomEndpoint(proxy: string, endpoint: string): string {
    checkIdentifier('endpoint', endpoint);
    return `${endpoint}.endpoint.${this.proxyDomain(proxy)}`;
  }

  /** The PgBouncer engine's VPC endpoint service: `vpce-svc-<17 hex digits>`, as EC2 names one. */
  endpointServiceId(fleet: string): string {
    return `vpce-svc-${hexId(`endpoint-service:${this.rehearsalId}:${this.region}:${fleet}`, 17)}`;
  }

  /**
   * An interface endpoint of that service in a consumer VPC: the regional DNS name EC2 gives it
   * (`vpce-<id>-<suffix>.vpce-svc-<id>.<region>.vpce.amazonaws.com`), which consumers connect to.
   */
  interfaceEndpoint(fleet: string, endpoint: string): string {
    checkIdentifier('endpoint', endpoint);
    return `vpce-${hexId(`interface-endpoint:${this.rehearsalId}:${fleet}:${endpoint}`, 17)}-${awsShapedId(`interface-endpoint-suffix:${endpoint}`).slice(0, 8)}.${this.endpointServiceId(fleet)}.${this.region}.vpce.amazonaws.com`;
  }

  /** The wildcard of the engine's listener certificate: every interface endpoint of its service. */
  interfaceEndpointWildcard(fleet: string): string {
    return `*.${this.endpointServiceId(fleet)}.${this.region}.vpce.amazonaws.com`;
  }

  /** The wildcard RDS Proxy's certificate carries: it covers the default endpoint, not the custom ones. */
  proxyWildcard(proxy: string): string {
    return `*.${this.proxyDomain(proxy)}`;
  }
}
