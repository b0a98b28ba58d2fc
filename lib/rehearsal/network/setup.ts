/**
 * Making and removing a NetworkPlan on this machine (as root, with iproute2):
 *
 * - the data namespace: lo up, the data VPC's hosts as /32s on lo (the kernel has no dummy links
 *   everywhere; lo is always there);
 * - the management link, a veth pair root <-> data, and in the root namespace a route for the
 *   rehearsal's /24 through it: control traffic (status SQL, bench clients, tests) reaches instances
 *   and endpoints from the root namespace;
 * - per consumer VPC a namespace and a veth pair to the data namespace, the endpoints' addresses on
 *   the data side, the consumer's on its side. The consumer namespace has only its connected /28, so
 *   it reaches its endpoints and nothing else: an instance address gives "network unreachable".
 *   IPv4 forwarding stays off in every namespace, so no namespace relays for another;
 * - `unreachable 198.18.0.0/15` in the root namespace (added when missing), so nothing meant for a
 *   namespace leaves the machine while a link is down; removed by the teardown that leaves no `apk<n>-`
 *   namespace behind, since another rehearsal's namespaces still need it;
 * - a hosts file per namespace, /etc/netns/<ns>/hosts, which `ip netns exec` bind-mounts on /etc/hosts.
 *
 * setUpNetwork first clears what a previous run of the same plan left (refusing while processes run inside),
 * and undoes its own work when a step fails; tearDownNetwork removes everything the plan names and checks it.
 */
import { existsSync, mkdirSync, readdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { IsolationSetupError, IsolationUnavailableError } from '../errors';
import { withRouteLock } from './route-lock';
import { ip, ipProgram, listNamespaces, namespacePids, rootLinkExists, rootRoutes } from './iproute';
import { KIT_NAMESPACE, NETWORK_RANGE, type NetworkPlan } from './plan';

export const NETNS_ETC = '/etc/netns';

/** Why namespaces cannot be made here, or undefined when they can. */
export function networkNamespacesUnavailable(): string | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    return `network namespaces need root (ip netns, veth links, routes); running as uid ${process.getuid?.() ?? '?'}: run as root, or use the loopback network`;
  }
  try {
    ipProgram();
  } catch (err) {
    return (err as IsolationUnavailableError).reason;
  }
  return undefined;
}

function assertAvailable(): void {
  const reason = networkNamespacesUnavailable();
  if (reason !== undefined) throw new IsolationUnavailableError('network namespaces', reason);
}

async function hasUnreachableRange(): Promise<boolean> {
  return (await rootRoutes()).some((r) => r.type === 'unreachable' && r.dst === NETWORK_RANGE);
}

async function ensureUnreachableRange(): Promise<void> {
  if (await hasUnreachableRange()) return;
  await ip(['route', 'add', 'unreachable', NETWORK_RANGE]).catch(async (err: Error) => {
    // Another rehearsal may have added it in between.
    if (!(await hasUnreachableRange())) throw err;
  });
}

/** Runs `script` with /bin/sh inside `ns` (what must be read or written from inside: /proc/sys/net). */
function inNamespace(ns: string, script: string): Promise<string> {
  return ip(['netns', 'exec', ns, '/bin/sh', '-c', script]);
}

async function makeDataNamespace(plan: NetworkPlan): Promise<void> {
  const ns = plan.dataNamespace;
  const m = plan.management;
  await ip(['netns', 'add', ns]);
  await ip(['-n', ns, 'link', 'set', 'lo', 'up']);
  for (const host of plan.dataHosts) await ip(['-n', ns, 'addr', 'add', `${host.address}/32`, 'dev', 'lo']);
  await ip(['link', 'add', m.rootLink, 'type', 'veth', 'peer', 'name', m.dataLink, 'netns', ns]);
  await ip(['addr', 'add', `${m.rootAddress}/${m.prefixLength}`, 'dev', m.rootLink]);
  await ip(['-n', ns, 'addr', 'add', `${m.dataAddress}/${m.prefixLength}`, 'dev', m.dataLink]);
  await ip(['link', 'set', m.rootLink, 'up']);
  await ip(['-n', ns, 'link', 'set', m.dataLink, 'up']);
  await ip(['route', 'add', plan.cidr, 'via', m.dataAddress, 'dev', m.rootLink]);
}

async function makeConsumerNamespaces(plan: NetworkPlan): Promise<void> {
  const data = plan.dataNamespace;
  for (const c of plan.consumers) {
    await ip(['netns', 'add', c.namespace]);
    await ip(['-n', c.namespace, 'link', 'set', 'lo', 'up']);
    await ip(['-n', data, 'link', 'add', c.dataLink, 'type', 'veth', 'peer', 'name', c.consumerLink, 'netns', c.namespace]);
    for (const e of c.endpoints) await ip(['-n', data, 'addr', 'add', `${e.address}/${c.prefixLength}`, 'dev', c.dataLink]);
    await ip(['-n', c.namespace, 'addr', 'add', `${c.consumerAddress}/${c.prefixLength}`, 'dev', c.consumerLink]);
    await ip(['-n', data, 'link', 'set', c.dataLink, 'up']);
    await ip(['-n', c.namespace, 'link', 'set', c.consumerLink, 'up']);
  }
}

function writeHostsFiles(plan: NetworkPlan, etc: string): void {
  for (const ns of plan.namespaces) {
    mkdirSync(join(etc, ns), { recursive: true, mode: 0o755 });
    writeFileSync(join(etc, ns, 'hosts'), plan.hostsFile, { mode: 0o644 });
  }
}

/**
 * Rewrites the hosts files of a plan's namespaces, in place: `ip netns exec` bind-mounts the file
 * itself, so a renamed-over file would leave running processes on the old one.
 */
export function rewriteHostsFiles(plan: NetworkPlan, etc = NETNS_ETC): void {
  const booted = existsSync(etc) ? readdirSync(etc).filter((ns) => isHostNamespace(plan, ns)) : [];
  for (const ns of [...plan.namespaces, ...booted]) if (existsSync(join(etc, ns))) writeFileSync(join(etc, ns, 'hosts'), plan.hostsFile);
}

/**
 * The namespaces of hosts booted into the plan's data VPC (`apk<n>-host<i>`, hosts/host-network.ts):
 * made when a host boots, not by setUpNetwork, and removed with the plan's own.
 */
export function isHostNamespace(plan: NetworkPlan, ns: string): boolean {
  return new RegExp(`^${plan.prefix}-host\\d+$`).test(ns);
}

async function build(plan: NetworkPlan, etc: string): Promise<void> {
  // The route first: no kit namespace exists without it, not even while this one is being made; under the
  // lock, so that a teardown elsewhere cannot remove it between the check and the first namespace.
  await withRouteLock(async () => {
    await ensureUnreachableRange();
    await makeDataNamespace(plan);
  });
  await makeConsumerNamespaces(plan);
  for (const ns of plan.namespaces) {
    await inNamespace(ns, 'echo 0 > /proc/sys/net/ipv4/ip_forward');
  }
  writeHostsFiles(plan, etc);
}

/** What of `plan` exists on this machine: namespaces, the root-side link and its route, hosts dirs. */
export async function networkLeftovers(plan: NetworkPlan, etc = NETNS_ETC): Promise<string[]> {
  const listed = await listNamespaces();
  const existing = new Set(listed);
  const routes = await rootRoutes();
  const booted = listed.filter((ns) => isHostNamespace(plan, ns));
  return [
    ...booted.map((ns) => `namespace ${ns}`),
    ...(existsSync(etc) ? readdirSync(etc).filter((ns) => isHostNamespace(plan, ns)).map((ns) => `hosts dir ${join(etc, ns)}`) : []),
    ...plan.namespaces.filter((ns) => existing.has(ns)).map((ns) => `namespace ${ns}`),
    ...(rootLinkExists(plan.management.rootLink) ? [`link ${plan.management.rootLink}`] : []),
    ...routes.filter((r) => r.dev === plan.management.rootLink).map((r) => `route ${r.dst} dev ${r.dev}`),
    ...plan.namespaces.filter((ns) => existsSync(join(etc, ns))).map((ns) => `hosts dir ${join(etc, ns)}`),
  ];
}

/** True while the root namespace has the unreachable route for 198.18.0.0/15. */
export function unreachableRangeRouted(): Promise<boolean> {
  return hasUnreachableRange();
}

/**
 * Removes every namespace, link, route and hosts file of `plan` (also after a partial setUpNetwork), and the
 * unreachable route when no kit namespace is left. Refuses, removing nothing, while a process still
 * runs in one of the namespaces: those are stopped by whoever started them, by pid.
 */
export async function tearDownNetwork(plan: NetworkPlan, etc = NETNS_ETC): Promise<void> {
  assertAvailable();
  const listed = await listNamespaces();
  const present = new Set(listed);
  const booted = listed.filter((ns) => isHostNamespace(plan, ns));
  for (const ns of [...booted, ...plan.namespaces.filter((n) => present.has(n))]) {
    const pids = await namespacePids(ns);
    if (pids.length > 0) {
      throw new IsolationSetupError(`namespace ${ns} still has processes ${pids.join(', ')}: stop them (rehearse down stops what the rehearsal started) before removing its network`, await networkLeftovers(plan, etc));
    }
  }
  // Booted hosts' namespaces first: each holds one end of a link into the data namespace.
  for (const ns of booted) await ip(['netns', 'del', ns]);
  if (existsSync(etc)) for (const ns of readdirSync(etc).filter((n) => isHostNamespace(plan, n))) rmSync(join(etc, ns), { recursive: true, force: true });
  // The root end first: deleting a namespace frees its links asynchronously, this one at once.
  if (rootLinkExists(plan.management.rootLink)) await ip(['link', 'del', plan.management.rootLink]);
  for (const ns of [...plan.namespaces].reverse()) if (present.has(ns)) await ip(['netns', 'del', ns]);
  for (const ns of plan.namespaces) rmSync(join(etc, ns), { recursive: true, force: true });
  await withRouteLock(async () => {
    // Another rehearsal's setup or teardown may be at it too: gone already, or not empty, both are fine.
    try {
      rmdirSync(etc);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' && (err as NodeJS.ErrnoException).code !== 'ENOTEMPTY') throw err;
    }
    const kitNamespaces = (await listNamespaces()).filter((ns) => KIT_NAMESPACE.test(ns));
    if (kitNamespaces.length === 0 && (await hasUnreachableRange())) await ip(['route', 'del', 'unreachable', NETWORK_RANGE]);
  });
  const left = await networkLeftovers(plan, etc);
  if (left.length > 0) throw new IsolationSetupError(`tearing down ${plan.prefix} did not remove everything`, left);
}

/**
 * Makes `plan`'s namespaces, links, addresses, routes and hosts files. Safe to repeat: what a previous
 * run of the same plan left is removed first (refused while processes run there). On failure, undoes
 * what it made and throws IsolationSetupError naming the failed step and anything left behind.
 */
export async function setUpNetwork(plan: NetworkPlan, etc = NETNS_ETC): Promise<void> {
  assertAvailable();
  await tearDownNetwork(plan, etc);
  try {
    await build(plan, etc);
  } catch (err) {
    let left: string[] = [];
    try {
      await tearDownNetwork(plan, etc);
    } catch (cleanup) {
      left = cleanup instanceof IsolationSetupError ? [...cleanup.leftovers] : [(cleanup as Error).message];
    }
    const undone = left.length === 0 ? 'everything it had made is removed' : 'undoing it failed too';
    throw new IsolationSetupError(`setting up the network ${plan.prefix} failed (${undone}): ${(err as Error).message}`, left, { cause: err });
  }
}
