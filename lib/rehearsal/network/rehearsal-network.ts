/**
 * The network of a rehearsal run with `network: 'namespaces'`, derived from its settings alone, so
 * `down` in another process finds the same plan:
 *
 * - data VPC (apk<n>-data): the instances and the servers at the loopback plan's last octets, named
 *   as AWS names them: `writer` / `replica<i>` instance endpoints, the cluster (writer) endpoint on the
 *   instance that is the writer now (moved at failover, as Aurora's DNS moves it), the proxy's default endpoint on the
 *   read/write PgBouncer (.101), the cluster's reader endpoint on HAProxy (.103, its analog);
 * - consumer VPC `app` (apk<n>-app): the proxy's custom endpoints `read-only` and `read-write`, on
 *   which the read-only and read/write PgBouncers listen too, as RDS Proxy's endpoints put ENIs in a
 *   consumer's VPC.
 *
 * A rehearsal of a deployment (settings.deployment, from `--from cdk.out` or a plan) has the
 * deployment's consumer VPCs, endpoints, proxy name and Region instead of `app` and its two endpoints.
 */
import { AwsNames } from '../aws-names';
import { EndpointRole } from '../../../lambda/src/environment';
import type { RehearsedDeployment } from '../deployment';
import { REHEARSAL_MAX_REPLICAS } from '../rules';
import { addressPlan, type ResolvedSettings } from '../settings';
import type { PgBouncerEndpointSpec } from '../state';
import { addressOf, consumerOf, networkPrefix, planNetwork, type NetworkPlan } from './plan';
import { networkNamespacesUnavailable, rewriteHostsFiles, setUpNetwork, tearDownNetwork } from './setup';
import { awsApiNames, REHEARSAL_DNS_SUFFIX, REHEARSAL_PACKAGES_BUCKET } from '../hosts/aws-emulator';

/**
 * Where the AWS emulator listens in the data VPC (hosts/aws-emulator.ts): the stand-in for the VPC's
 * interface endpoints and S3 gateway, by the AWS names a booted host resolves.
 */
export const AWS_EMULATOR_HOST_NUMBER = 120;
/** The booted pooler hosts' last octets in the data VPC: host i at FIRST + i - 1, in namespace `apk<n>-host<i>`. */
export const POOLER_HOST_FIRST_NUMBER = 61;
export const MAX_POOLER_HOSTS = 8;
/** The pooler fleet's load balancer stand-in (hosts/load-balancer.ts) in the data VPC. */
export const POOLER_LOAD_BALANCER_HOST_NUMBER = 110;

/** The proxy's and the cluster's names in the rehearsal's AWS-shaped names. */
export const REHEARSAL_PROXY = 'rehearsal';
export const REHEARSAL_CLUSTER = 'rehearsal';
export const CONSUMER_VPC = 'app';

type NetworkSettings = Pick<ResolvedSettings, 'addressBlock'> & { readonly deployment?: RehearsedDeployment };

/** The AWS-shaped names of the rehearsal on this block (ids derived from the block, so stable across runs). */
export function rehearsalAwsNames(s: NetworkSettings): AwsNames {
  const network = networkPrefix(s.addressBlock);
  return new AwsNames(`rehearsal-${typeof network === 'string' ? s.addressBlock : network.prefix}`, s.deployment?.region);
}

function proxyName(s: NetworkSettings): string {
  return s.deployment?.proxyName ?? REHEARSAL_PROXY;
}

/** A proxy endpoint of the rehearsal: where it listens, by which AWS-shaped name, from which namespace it is reached. */
export interface RehearsalProxyEndpoint {
  readonly name: string;
  readonly role: EndpointRole;
  readonly isDefault: boolean;
  /** `data` or the consumer VPC's key. */
  readonly vpc: string;
  /** The namespace clients of this endpoint run in (undefined for the default endpoint: the data VPC). */
  readonly namespace?: string;
  readonly host: string;
  readonly address: string;
}

/** The custom endpoints in consumer VPCs: the deployment's, or `app`'s read-only and read-write. */
function customEndpoints(s: NetworkSettings): ReadonlyArray<{ readonly vpc: string; readonly name: string; readonly role: EndpointRole }> {
  if (s.deployment === undefined) {
    return [
      { vpc: CONSUMER_VPC, name: 'read-only', role: EndpointRole.READ_ONLY },
      { vpc: CONSUMER_VPC, name: 'read-write', role: EndpointRole.READ_WRITE },
    ];
  }
  return s.deployment.endpoints.filter((e) => !e.isDefault);
}

function consumerVpcKeys(s: NetworkSettings): string[] {
  return s.deployment === undefined ? [CONSUMER_VPC] : s.deployment.consumerVpcs.map((v) => v.key);
}

const endpointKey = (vpc: string, name: string): string => `${vpc}-${name}`.slice(0, 63);

/** An endpoint's name beside the default: the PgBouncer engine's are interface endpoints of its endpoint service, named as EC2 names them. */
function customEndpointHost(s: NetworkSettings, names: AwsNames, endpoint: string): string {
  return s.deployment?.fleet !== undefined ? names.interfaceEndpoint(proxyName(s), endpoint) : names.proxyCustomEndpoint(proxyName(s), endpoint);
}

function lastOctet(address: string): number {
  return Number(address.split('.')[3]);
}

/**
 * The plan, with the cluster endpoint on `writerKey` (the node that is the writer now: the state's
 * writerName; `writer` until a failover).
 */
export function rehearsalNetworkPlan(s: NetworkSettings, writerKey = 'writer'): NetworkPlan {
  // Every replica address the block can hold, so a replica added later (addReplica) has its address.
  const plan = addressPlan({ addressBlock: s.addressBlock, replicas: REHEARSAL_MAX_REPLICAS, network: 'namespaces' });
  const names = rehearsalAwsNames(s);
  const cluster = s.deployment?.clusterName ?? REHEARSAL_CLUSTER;
  const instance = (key: string): string[] => [names.instanceEndpoint(key), ...(key === writerKey ? [names.clusterEndpoint(cluster)] : [])];
  return planNetwork({
    addressBlock: s.addressBlock,
    dataHosts: [
      { key: 'writer', hostNumber: lastOctet(plan.writer), names: instance('writer') },
      ...plan.replicas.map((a, i) => ({ key: `replica${i + 1}`, hostNumber: lastOctet(a), names: instance(`replica${i + 1}`) })),
      { key: 'read-write', hostNumber: lastOctet(plan.readWrite), names: [names.proxyDefaultEndpoint(proxyName(s))] },
      { key: 'read-only', hostNumber: lastOctet(plan.readOnly) },
      { key: 'haproxy', hostNumber: lastOctet(plan.haproxy), names: [names.readerEndpoint(cluster)] },
      { key: 'pgpool', hostNumber: lastOctet(plan.pgpool) },
      { key: 'pooler-load-balancer', hostNumber: POOLER_LOAD_BALANCER_HOST_NUMBER },
      { key: 'aws-apis', hostNumber: AWS_EMULATOR_HOST_NUMBER, names: awsApiNames(names.region, REHEARSAL_DNS_SUFFIX, [REHEARSAL_PACKAGES_BUCKET]) },
    ],
    consumers: consumerVpcKeys(s).map((vpc) => ({
      vpc,
      endpoints: customEndpoints(s)
        .filter((e) => e.vpc === vpc)
        .map((e) => ({ key: endpointKey(vpc, e.name), names: [customEndpointHost(s, names, e.name)] })),
    })),
  });
}

/** Every proxy endpoint of the rehearsal (network 'namespaces'), the default one first. */
export function rehearsalProxyEndpoints(s: NetworkSettings): RehearsalProxyEndpoint[] {
  const plan = rehearsalNetworkPlan(s);
  const names = rehearsalAwsNames(s);
  const proxy = proxyName(s);
  const defaultName = s.deployment?.endpoints.find((e) => e.isDefault)?.name ?? proxy;
  return [
    { name: defaultName, role: EndpointRole.READ_WRITE, isDefault: true, vpc: 'data', host: names.proxyDefaultEndpoint(proxy), address: addressOf(plan, 'read-write') },
    ...customEndpoints(s).map((e) => ({
      name: e.name,
      role: e.role,
      isDefault: false,
      vpc: e.vpc,
      namespace: consumerOf(plan, e.vpc).namespace,
      host: customEndpointHost(s, names, e.name),
      address: addressOf(plan, endpointKey(e.vpc, e.name)),
    })),
  ];
}

/**
 * What a client needs to connect to a rehearsal by AWS's names (network 'namespaces'): the Region, the
 * cluster's and the proxy's AWS-shaped endpoints, and each proxy endpoint with the namespace its clients
 * run in (`ip netns exec <namespace> ...`), where the names resolve. After `up --from` these are the
 * deployment's names (its proxy, cluster, endpoints and consumer VPCs).
 */
export interface RehearsalConnectionNames {
  readonly region: string;
  /** The data VPC's namespace: the instances, the default endpoint and the cluster's names. */
  readonly dataNamespace: string;
  /** Each consumer VPC's namespace by its key. */
  readonly consumerNamespaces: Readonly<Record<string, string>>;
  readonly cluster: { readonly name: string; readonly writerEndpoint: string; readonly readerEndpoint: string };
  readonly proxy: { readonly name: string; readonly defaultEndpoint: string };
  /** Every proxy endpoint, the default one first, each with the namespace its clients run in. */
  readonly endpoints: ReadonlyArray<RehearsalProxyEndpoint & { readonly namespace: string }>;
}

/** The rehearsal's AWS-shaped names, or null on loopback, where no hosts file resolves them. */
export function rehearsalConnectionNames(s: NetworkSettings & Pick<ResolvedSettings, 'network'>): RehearsalConnectionNames | null {
  if (s.network !== 'namespaces') return null;
  const plan = rehearsalNetworkPlan(s);
  const names = rehearsalAwsNames(s);
  const cluster = s.deployment?.clusterName ?? REHEARSAL_CLUSTER;
  return {
    region: names.region,
    dataNamespace: plan.dataNamespace,
    consumerNamespaces: Object.fromEntries(consumerVpcKeys(s).map((vpc) => [vpc, consumerOf(plan, vpc).namespace])),
    cluster: { name: cluster, writerEndpoint: names.clusterEndpoint(cluster), readerEndpoint: names.readerEndpoint(cluster) },
    proxy: { name: proxyName(s), defaultEndpoint: names.proxyDefaultEndpoint(proxyName(s)) },
    endpoints: rehearsalProxyEndpoints(s).map((e) => ({ ...e, namespace: e.namespace ?? plan.dataNamespace })),
  };
}

/** Where a consumer of the rehearsal connects from, and the names and addresses of its endpoints. */
export interface ConsumerVpcEndpoints {
  readonly namespace: string;
  readonly readOnly: { readonly host: string; readonly address: string };
  readonly readWrite: { readonly host: string; readonly address: string };
  /** The proxy's default endpoint: what verify-proxy-domain checks the certificate against. */
  readonly tlsServerName: string;
  /** The wildcard the endpoints' certificate carries, as RDS Proxy's does. */
  readonly proxyWildcard: string;
}

export function consumerVpcEndpoints(s: NetworkSettings): ConsumerVpcEndpoints {
  const plan = rehearsalNetworkPlan(s);
  const names = rehearsalAwsNames(s);
  return {
    namespace: consumerOf(plan, CONSUMER_VPC).namespace,
    readOnly: { host: names.proxyCustomEndpoint(REHEARSAL_PROXY, 'read-only'), address: addressOf(plan, endpointKey(CONSUMER_VPC, 'read-only')) },
    readWrite: { host: names.proxyCustomEndpoint(REHEARSAL_PROXY, 'read-write'), address: addressOf(plan, endpointKey(CONSUMER_VPC, 'read-write')) },
    tlsServerName: names.proxyDefaultEndpoint(REHEARSAL_PROXY),
    proxyWildcard: names.proxyWildcard(REHEARSAL_PROXY),
  };
}

/**
 * A PgBouncer endpoint that also listens on its custom endpoint's address in the consumer VPC
 * (network 'namespaces'); unchanged on loopback.
 */
export function withConsumerEndpoint(s: NetworkSettings & Pick<ResolvedSettings, 'network'>, endpoint: PgBouncerEndpointSpec, role: 'readOnly' | 'readWrite'): PgBouncerEndpointSpec {
  // A PgBouncer engine deployment's consumer VPCs reach its fleet, not the stand-in (pooler-fleet.ts).
  if (s.network !== 'namespaces' || s.deployment?.fleet !== undefined) return endpoint;
  const wanted = role === 'readOnly' ? EndpointRole.READ_ONLY : EndpointRole.READ_WRITE;
  const addresses = rehearsalProxyEndpoints(s)
    .filter((e) => !e.isDefault && e.role === wanted)
    .map((e) => e.address);
  return { ...endpoint, extraListenAddresses: addresses };
}

/**
 * Names the servers' certificate carries beyond their addresses (network 'namespaces'): RDS Proxy's
 * wildcard, and, as Aurora's instance certificates do, the cluster and reader endpoints and every
 * instance endpoint, so a client of the instances (the PgBouncer engine's pools) verifies them by name.
 */
export function certificateNames(s: NetworkSettings & Pick<ResolvedSettings, 'network'>): string[] {
  if (s.network !== 'namespaces') return [];
  const names = rehearsalAwsNames(s);
  const cluster = s.deployment?.clusterName ?? REHEARSAL_CLUSTER;
  const instances = ['writer', ...Array.from({ length: REHEARSAL_MAX_REPLICAS }, (_, i) => `replica${i + 1}`)];
  // The AWS emulator's names and address too: it serves the booted hosts' AWS calls (and the kit's seeding
  // of it, by address) with the rehearsal's certificate.
  const plan = rehearsalNetworkPlan(s);
  const aws = [...awsApiNames(names.region, REHEARSAL_DNS_SUFFIX, [REHEARSAL_PACKAGES_BUCKET]), addressOf(plan, 'aws-apis')];
  // The booted pooler hosts' addresses: their listeners serve the rehearsal's certificate (the kit's own is
  // for the endpoint service's names, which the rehearsal's clients do not reach the hosts by yet).
  const prefix = plan.cidr.split('.').slice(0, 3).join('.');
  const poolerHosts = Array.from({ length: MAX_POOLER_HOSTS }, (_, i) => `${prefix}.${POOLER_HOST_FIRST_NUMBER + i}`);
  // And the address of their load balancer's stand-in, which passes TLS through to them as the NLB does.
  const fleet = s.deployment?.fleet !== undefined ? [names.interfaceEndpointWildcard(proxyName(s))] : [];
  return [names.proxyWildcard(proxyName(s)), ...fleet, names.clusterEndpoint(cluster), names.readerEndpoint(cluster), ...instances.map((i) => names.instanceEndpoint(i)), ...aws, ...poolerHosts, addressOf(plan, 'pooler-load-balancer')];
}

/**
 * The settings to run with: `namespaces` stays when this machine can make them; otherwise the
 * rehearsal falls back to loopback and says why (a process warning, on stderr).
 */
export function effectiveNetwork(s: ResolvedSettings): ResolvedSettings {
  if (s.network !== 'namespaces') return s;
  const reason = networkNamespacesUnavailable();
  if (reason === undefined) return s;
  process.emitWarning(`network 'namespaces' unavailable, running on loopback instead: ${reason}`, 'RehearsalNetworkFallback');
  return { ...s, network: 'loopback' };
}

/** Makes the rehearsal's namespaces (network 'namespaces'); nothing for loopback. */
export async function setUpRehearsalNetwork(s: NetworkSettings & Pick<ResolvedSettings, 'network'>): Promise<void> {
  if (s.network === 'namespaces') await setUpNetwork(rehearsalNetworkPlan(s));
}

/**
 * Moves the cluster endpoint's name to the new writer in every namespace's hosts file (in place, so
 * processes already running in a namespace resolve the new address too); nothing for loopback.
 */
export function moveClusterEndpoint(s: NetworkSettings & Pick<ResolvedSettings, 'network'>, writerKey: string): void {
  if (s.network === 'namespaces') rewriteHostsFiles(rehearsalNetworkPlan(s, writerKey));
}

/** Removes them once the servers are stopped; nothing for loopback (or a state written before the setting existed). */
export async function tearDownRehearsalNetwork(s: NetworkSettings & { readonly network?: string }): Promise<void> {
  if (s.network === 'namespaces') await tearDownNetwork(rehearsalNetworkPlan(s));
}
