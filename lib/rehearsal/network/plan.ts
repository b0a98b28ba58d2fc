/**
 * The address plan of a rehearsal shaped like AWS's VPCs, from a small description. Pure: nothing
 * here touches the machine (setup.ts does), so a bad description is refused before anything exists.
 *
 * Each rehearsal gets its own /24 of 198.18.0.0/15 (RFC 2544's benchmarking range, never routed on
 * the internet), taken from its loopback block, so whoever hands out a loopback block hands out its
 * network too: 127.0.<b> -> 198.18.<b>.0/24, 127.1.<b> -> 198.19.<b>.0/24.
 *
 *   .0/25            data VPC: instances and poolers, /32s on the data namespace's lo, at the same
 *                    last octets as on loopback (writer .2, replicas .3..., endpoints .101...)
 *   .128/30          management link, root .129 <-> data .130: control traffic from the root namespace
 *   .144/28 + 16*i   consumer VPC i (at most 7): the proxy endpoints' ENIs at .1-.13 of the /28 on the
 *                    data side of the link, the consumer at .14
 *
 * Namespaces: `apk<n>-data` and `apk<n>-<vpc>` (n = 256 * second octet + third octet of the block).
 */
import { RehearsalConfigError } from '../errors';
import { parseAddressBlock } from '../rules';

export const NETWORK_RANGE = '198.18.0.0/15';
export const MAX_CONSUMER_VPCS = 7;
export const MAX_ENDPOINTS_PER_VPC = 13;
/** Every namespace the kit makes is named `apk<n>-...`; teardown keeps the unreachable route while one exists. */
export const KIT_NAMESPACE = /^apk\d+-[a-z][a-z0-9]*$/;

/** A host of the data VPC (an instance, a pooler) at `<prefix>.<hostNumber>`. */
export interface DataHostSpec {
  /** Unique in the description; addressOf() finds the address by it. */
  readonly key: string;
  /** Last octet, 1 to 126 (the data VPC's /25). */
  readonly hostNumber: number;
  /** Host names every namespace resolves to it (hosts files). */
  readonly names?: ReadonlyArray<string>;
}

/** A proxy endpoint's ENI in a consumer VPC; addresses are given out in order. */
export interface ConsumerEndpointSpec {
  readonly key: string;
  readonly names?: ReadonlyArray<string>;
}

export interface ConsumerVpcSpec {
  /** 1 to 10 lower-case letters and digits, starting with a letter (it ends up in link names). */
  readonly vpc: string;
  readonly endpoints: ReadonlyArray<ConsumerEndpointSpec>;
}

export interface NetworkDescription {
  /** The rehearsal's loopback block, e.g. 127.0.31. */
  readonly addressBlock: string;
  readonly dataHosts: ReadonlyArray<DataHostSpec>;
  readonly consumers: ReadonlyArray<ConsumerVpcSpec>;
}

export interface PlannedHost {
  readonly key: string;
  readonly address: string;
  readonly names: ReadonlyArray<string>;
}

export interface PlannedConsumer {
  readonly vpc: string;
  readonly namespace: string;
  /** The link's end in the data namespace, holding the endpoints' addresses. */
  readonly dataLink: string;
  /** The link's end in the consumer namespace, holding consumerAddress. */
  readonly consumerLink: string;
  readonly subnet: string;
  readonly prefixLength: 28;
  readonly consumerAddress: string;
  readonly endpoints: ReadonlyArray<PlannedHost>;
}

export interface ManagementLink {
  readonly rootLink: string;
  readonly dataLink: string;
  readonly rootAddress: string;
  readonly dataAddress: string;
  readonly prefixLength: 30;
}

export interface NetworkPlan {
  /** `apk<n>`: the start of every namespace and root-side link name of this rehearsal. */
  readonly prefix: string;
  /** The rehearsal's /24. */
  readonly cidr: string;
  readonly dataNamespace: string;
  readonly management: ManagementLink;
  readonly dataHosts: ReadonlyArray<PlannedHost>;
  readonly consumers: ReadonlyArray<PlannedConsumer>;
  /** The data namespace first, then the consumers'. */
  readonly namespaces: ReadonlyArray<string>;
  /**
   * The hosts file of every namespace: every name resolves everywhere, as RDS endpoint names do in
   * public DNS; what a namespace can reach is decided by its routes, not by its names.
   */
  readonly hostsFile: string;
}

const KEY = /^[a-z][a-z0-9-]{0,62}$/;
const VPC = /^[a-z][a-z0-9]{0,9}$/;
const HOST_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** The /24 prefix (three octets) of a loopback block's network, or a message naming what is wrong. */
export function networkPrefix(addressBlock: string): { prefix: string; n: number } | string {
  const octets = parseAddressBlock(addressBlock);
  if (octets === undefined || octets[0] !== 127 || octets[1] > 1) {
    return `addressBlock ${addressBlock} has no network of its own: use a loopback block 127.0.<b> or 127.1.<b>, which maps to 198.18.<b>.0/24 or 198.19.<b>.0/24`;
  }
  return { prefix: `198.${18 + octets[1]}.${octets[2]}`, n: octets[1] * 256 + octets[2] };
}

function checkDescription(d: NetworkDescription): string[] {
  const problems: string[] = [];
  const keys = [...d.dataHosts.map((h) => h.key), ...d.consumers.flatMap((c) => c.endpoints.map((e) => e.key))];
  for (const [i, key] of keys.entries()) {
    if (!KEY.test(key)) problems.push(`key ${JSON.stringify(key)} is not a key: use lower-case letters, digits and hyphens, starting with a letter`);
    else if (keys.indexOf(key) !== i) problems.push(`key ${key} is used twice: give every host and endpoint its own key`);
  }
  const numbers = d.dataHosts.map((h) => h.hostNumber);
  for (const [i, host] of d.dataHosts.entries()) {
    if (!Number.isInteger(host.hostNumber) || host.hostNumber < 1 || host.hostNumber > 126) problems.push(`dataHosts ${host.key} hostNumber ${host.hostNumber} is outside the data VPC: use 1 to 126`);
    else if (numbers.indexOf(host.hostNumber) !== i) problems.push(`dataHosts ${host.key} hostNumber ${host.hostNumber} is taken by another host: give each host its own number`);
  }
  if (d.consumers.length > MAX_CONSUMER_VPCS) problems.push(`consumers has ${d.consumers.length} VPCs: the plan has room for ${MAX_CONSUMER_VPCS}`);
  const vpcs = d.consumers.map((c) => c.vpc);
  for (const [i, consumer] of d.consumers.entries()) {
    if (!VPC.test(consumer.vpc) || consumer.vpc === 'data') problems.push(`consumers vpc ${JSON.stringify(consumer.vpc)} is not a VPC name: use 1 to 10 lower-case letters and digits, starting with a letter, other than "data"`);
    else if (vpcs.indexOf(consumer.vpc) !== i) problems.push(`consumers vpc ${consumer.vpc} is used twice: name each consumer VPC once`);
    if (consumer.endpoints.length < 1 || consumer.endpoints.length > MAX_ENDPOINTS_PER_VPC) {
      problems.push(`consumers ${consumer.vpc} has ${consumer.endpoints.length} endpoints: give it 1 to ${MAX_ENDPOINTS_PER_VPC} (a consumer VPC reaches nothing but its endpoints)`);
    }
  }
  const names = [...d.dataHosts.flatMap((h) => h.names ?? []), ...d.consumers.flatMap((c) => c.endpoints.flatMap((e) => e.names ?? []))];
  for (const [i, name] of names.entries()) {
    if (!HOST_NAME.test(name)) problems.push(`name ${JSON.stringify(name)} is not a host name for a hosts file: use lower-case labels of letters, digits and hyphens`);
    else if (names.indexOf(name) !== i) problems.push(`name ${name} is given to two hosts: a name resolves to one address`);
  }
  return problems;
}

function renderHostsFile(prefix: string, hosts: ReadonlyArray<PlannedHost>): string {
  const lines = ['127.0.0.1\tlocalhost', '::1\tlocalhost ip6-localhost ip6-loopback', `# ${prefix}: the rehearsal's names (aurora-proxy-kit)`];
  for (const host of hosts) if (host.names.length > 0) lines.push(`${host.address}\t${host.names.join(' ')}`);
  return `${lines.join('\n')}\n`;
}

/** The plan for `d`; throws RehearsalConfigError naming every problem before anything is made. */
export function planNetwork(d: NetworkDescription): NetworkPlan {
  const network = networkPrefix(d.addressBlock);
  const problems = [...(typeof network === 'string' ? [network] : []), ...checkDescription(d)];
  if (typeof network === 'string' || problems.length > 0) throw new RehearsalConfigError(problems);
  const { prefix: ip, n } = network;
  const prefix = `apk${n}`;
  const dataHosts = d.dataHosts.map((h) => ({ key: h.key, address: `${ip}.${h.hostNumber}`, names: [...(h.names ?? [])] }));
  const consumers = d.consumers.map((c, i): PlannedConsumer => {
    const base = 144 + 16 * i;
    return {
      vpc: c.vpc,
      namespace: `${prefix}-${c.vpc}`,
      dataLink: `eni-${c.vpc}`,
      consumerLink: 'eth0',
      subnet: `${ip}.${base}/28`,
      prefixLength: 28,
      consumerAddress: `${ip}.${base + 14}`,
      endpoints: c.endpoints.map((e, k) => ({ key: e.key, address: `${ip}.${base + 1 + k}`, names: [...(e.names ?? [])] })),
    };
  });
  const dataNamespace = `${prefix}-data`;
  return {
    prefix,
    cidr: `${ip}.0/24`,
    dataNamespace,
    management: { rootLink: `${prefix}-mgmt`, dataLink: 'mgmt', rootAddress: `${ip}.129`, dataAddress: `${ip}.130`, prefixLength: 30 },
    dataHosts,
    consumers,
    namespaces: [dataNamespace, ...consumers.map((c) => c.namespace)],
    hostsFile: renderHostsFile(prefix, [...dataHosts, ...consumers.flatMap((c) => c.endpoints)]),
  };
}

/** The address planned for `key` (a data host or an endpoint). */
export function addressOf(plan: NetworkPlan, key: string): string {
  const host = [...plan.dataHosts, ...plan.consumers.flatMap((c) => c.endpoints)].find((h) => h.key === key);
  if (host === undefined) throw new RehearsalConfigError([`key ${key} is not in the network plan ${plan.prefix}: use one of the description's keys`]);
  return host.address;
}

/**
 * The namespace a server listening on `address` runs in: the data namespace of the rehearsal whose
 * data VPC holds the address (198.18.<b>.1-126 -> apk<b>-data), or none for any other address
 * (loopback). A pure rule of the plan, so every launcher places its server the same way.
 */
export function namespaceOfAddress(address: string): string | undefined {
  const m = /^198\.(18|19)\.(\d{1,3})\.(\d{1,3})$/.exec(address);
  if (m === null || Number(m[2]) > 255 || Number(m[3]) < 1 || Number(m[3]) > 126) return undefined;
  return `apk${(Number(m[1]) - 18) * 256 + Number(m[2])}-data`;
}

/** The consumer VPC named `vpc`. */
export function consumerOf(plan: NetworkPlan, vpc: string): PlannedConsumer {
  const consumer = plan.consumers.find((c) => c.vpc === vpc);
  if (consumer === undefined) throw new RehearsalConfigError([`vpc ${vpc} is not a consumer VPC of ${plan.prefix}: use one of ${plan.consumers.map((c) => c.vpc).join(', ') || '(none)'}`]);
  return consumer;
}
