/**
 * The network a rehearsal runs on, chosen once from the `network` setting (rehearsalNetwork): loopback, or
 * namespaces shaped like the VPCs. Callers ask it (addresses, listeners to check, setup and teardown, names)
 * rather than test the setting. The namespaces' plan derives from the address block and the deployment
 * alone, so `down` in another process finds the same plan:
 *
 * - data VPC (apk<n>-data): the instances and the servers at the loopback plan's last octets, named
 *   as AWS names them: `writer` / `replica<i>` instance endpoints, the cluster (writer) endpoint on the
 *   instance that is the writer now (moved at failover, as Aurora's DNS moves it), the proxy's default endpoint on the
 *   read/write PgBouncer (.101), the cluster's reader endpoint on HAProxy (.103, its analog);
 * - consumer VPC `app` (apk<n>-app): the proxy's custom endpoints `read-only` and `read-write`, on
 *   which the read-only and read/write PgBouncers listen too, as RDS Proxy's endpoints put ENIs in a
 *   consumer's VPC.
 *
 * A rehearsal of a deployment (from `--from cdk.out` or a plan) has the
 * deployment's consumer VPCs, endpoints, proxy name and Region instead of `app` and its two endpoints.
 */
import { AwsNames } from '../aws-names';
import { EndpointRole } from '../../../lambda/src/environment';
import { RehearsalConfigError } from '../errors';
import { assertAddressesFree, type Listener } from '../preflight';
import type { RehearsedDeployment } from '../rehearsed-deployment';
import { parseAddressBlock, REHEARSAL_MAX_REPLICAS } from '../rules';
import type { AddressPlan, RehearsalNetwork, ResolvedSettings } from '../settings-types';

export type { AddressPlan } from '../settings-types';
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

/**
 * What the network's names derive from: the address block and the deployment rehearsed (undefined: the fixed
 * layout), named even when undefined, so settings alone are never taken for a deployment's network.
 */
export type NetworkSettings = Pick<ResolvedSettings, 'addressBlock'> & { readonly deployment: RehearsedDeployment | undefined };

/** The servers' last octets, the same on loopback and in the data VPC. */
const HOST = { writer: 2, firstReplica: 3, readWrite: 101, readOnly: 102, haproxy: 103, pgpool: 104 } as const;

function planAt(prefix: string, replicas: number): AddressPlan {
  const at = (last: number): string => `${prefix}.${last}`;
  return { writer: at(HOST.writer), replicas: Array.from({ length: replicas }, (_, i) => at(HOST.firstReplica + i)), readWrite: at(HOST.readWrite), readOnly: at(HOST.readOnly), haproxy: at(HOST.haproxy), pgpool: at(HOST.pgpool) };
}

function loopbackPrefix(addressBlock: string): string {
  const octets = parseAddressBlock(addressBlock);
  if (octets === undefined) throw new RehearsalConfigError([`addressBlock ${addressBlock} is not three octets`]);
  return octets.join('.');
}

function namespacesPrefix(addressBlock: string): string {
  const network = networkPrefix(loopbackPrefix(addressBlock));
  if (typeof network === 'string') throw new RehearsalConfigError([network]);
  return network.prefix;
}

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

/**
 * The plan, with the cluster endpoint on `writerKey` (the node that is the writer now: the state's
 * writerName; `writer` until a failover).
 */
export function rehearsalNetworkPlan(s: NetworkSettings, writerKey = 'writer'): NetworkPlan {
  const names = rehearsalAwsNames(s);
  const cluster = s.deployment?.clusterName ?? REHEARSAL_CLUSTER;
  const instance = (key: string): string[] => [names.instanceEndpoint(key), ...(key === writerKey ? [names.clusterEndpoint(cluster)] : [])];
  return planNetwork({
    addressBlock: s.addressBlock,
    dataHosts: [
      { key: 'writer', hostNumber: HOST.writer, names: instance('writer') },
      // Every replica address the block can hold, so a replica added later (addReplica) has its address.
      ...Array.from({ length: REHEARSAL_MAX_REPLICAS }, (_, i) => ({ key: `replica${i + 1}`, hostNumber: HOST.firstReplica + i, names: instance(`replica${i + 1}`) })),
      { key: 'read-write', hostNumber: HOST.readWrite, names: [names.proxyDefaultEndpoint(proxyName(s))] },
      { key: 'read-only', hostNumber: HOST.readOnly },
      { key: 'haproxy', hostNumber: HOST.haproxy, names: [names.readerEndpoint(cluster)] },
      { key: 'pgpool', hostNumber: HOST.pgpool },
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

/** Every proxy endpoint of the rehearsal in its namespaces, the default one first. */
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

/** The AWS-shaped names to connect by in the namespaces. */
function connectionNames(s: NetworkSettings): RehearsalConnectionNames {
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

/**
 * Names the servers' certificate carries beyond their addresses: RDS Proxy's wildcard, and, as Aurora's
 * instance certificates do, the cluster and reader endpoints and every instance endpoint, so a client of the
 * instances (the PgBouncer engine's pools) verifies them by name.
 */
function certificateNames(s: NetworkSettings): string[] {
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
 * The network a rehearsal runs on: asked, never compared by name. Chosen once (rehearsalNetwork) from the
 * `network` setting, which stays the string users give and state.json keeps.
 */
export interface RehearsalNetworkMode {
  readonly name: RehearsalNetwork;
  /** Where everything listens, with `replicas` replicas. */
  addressPlan(replicas: number): AddressPlan;
  /** Refuses listeners something on this machine already holds. */
  assertFree(listeners: ReadonlyArray<Listener>): Promise<void>;
  /** This network where the machine can make it; otherwise loopback, and a process warning says why (on stderr). */
  available(): RehearsalNetworkMode;
  /** Makes what the servers need before they start; `progress` hears what. */
  setUp(progress: (detail: string) => void): Promise<void>;
  /** Removes it once the servers are stopped. */
  tearDown(): Promise<void>;
  /** Moves the cluster endpoint's name to the new writer. */
  moveClusterEndpoint(writerKey: string): void;
  /** The AWS-shaped names to connect by, or null where nothing resolves them. */
  connectionNames(): RehearsalConnectionNames | null;
  /** Names the servers' certificate carries beyond their addresses. */
  certificateNames(): string[];
  /** A PgBouncer endpoint with the addresses it also listens on (its custom endpoints'). */
  withConsumerEndpoint(endpoint: PgBouncerEndpointSpec, role: 'readOnly' | 'readWrite'): PgBouncerEndpointSpec;
  /** The namespaces' plan, for what boots only in namespaces (the pooler hosts); `refusal` where there are none. */
  namespacesFor(refusal: string): NetworkPlan;
}

/** Every process in the root namespace, on the loopback block: nothing to make, no AWS names. */
function loopbackNetwork(s: NetworkSettings): RehearsalNetworkMode {
  const network: RehearsalNetworkMode = {
    name: 'loopback',
    addressPlan: (replicas) => planAt(loopbackPrefix(s.addressBlock), replicas),
    assertFree: assertAddressesFree,
    available: () => network,
    setUp: async () => undefined,
    tearDown: async () => undefined,
    moveClusterEndpoint: () => undefined,
    connectionNames: () => null,
    certificateNames: () => [],
    withConsumerEndpoint: (endpoint) => endpoint,
    namespacesFor: (refusal) => {
      throw new RehearsalConfigError([refusal]);
    },
  };
  return network;
}

/**
 * Namespaces shaped like the VPCs (as root): the servers in the data VPC's at the block's 198.18 /24, the
 * custom endpoints in the consumer VPCs', AWS's names in every namespace's hosts file.
 */
function namespacedNetwork(s: NetworkSettings): RehearsalNetworkMode {
  const network: RehearsalNetworkMode = {
    name: 'namespaces',
    addressPlan: (replicas) => planAt(namespacesPrefix(s.addressBlock), replicas),
    // Nothing to check: the namespaces are made fresh (setUpNetwork refuses while processes run in them).
    assertFree: async () => undefined,
    available: () => {
      const reason = networkNamespacesUnavailable();
      if (reason === undefined) return network;
      process.emitWarning(`network 'namespaces' unavailable, running on loopback instead: ${reason}`, 'RehearsalNetworkFallback');
      return loopbackNetwork(s);
    },
    setUp: async (progress) => {
      progress('namespaces shaped like the VPCs, veth links, an unreachable route for 198.18.0.0/15');
      await setUpNetwork(rehearsalNetworkPlan(s));
    },
    tearDown: () => tearDownNetwork(rehearsalNetworkPlan(s)),
    // In every namespace's hosts file, in place, so processes already running there resolve the new address too.
    moveClusterEndpoint: (writerKey) => rewriteHostsFiles(rehearsalNetworkPlan(s, writerKey)),
    connectionNames: () => connectionNames(s),
    certificateNames: () => certificateNames(s),
    withConsumerEndpoint: (endpoint, role) => {
      // A PgBouncer engine deployment's consumer VPCs reach its fleet, not the stand-in (pooler-fleet.ts).
      if (s.deployment?.fleet !== undefined) return endpoint;
      const wanted = role === 'readOnly' ? EndpointRole.READ_ONLY : EndpointRole.READ_WRITE;
      return { ...endpoint, extraListenAddresses: rehearsalProxyEndpoints(s).filter((e) => !e.isDefault && e.role === wanted).map((e) => e.address) };
    },
    namespacesFor: () => rehearsalNetworkPlan(s),
  };
  return network;
}

const NETWORKS: Record<RehearsalNetwork, (s: NetworkSettings) => RehearsalNetworkMode> = { loopback: loopbackNetwork, namespaces: namespacedNetwork };

/**
 * The network named by the setting: the one place the name is read. A state file from before the setting
 * existed (or a hand-made one) names none: loopback, nothing to make or remove.
 */
export function rehearsalNetwork(s: Pick<ResolvedSettings, 'addressBlock'> & { readonly network?: string }, deployment?: RehearsedDeployment): RehearsalNetworkMode {
  return (NETWORKS[s.network as RehearsalNetwork] ?? loopbackNetwork)({ addressBlock: s.addressBlock, deployment });
}

/** The address plan of settings (loopback unless they name another network). */
export function addressPlan(s: Pick<ResolvedSettings, 'addressBlock' | 'replicas'> & { readonly network?: RehearsalNetwork }): AddressPlan {
  return rehearsalNetwork(s).addressPlan(s.replicas);
}
