/**
 * A booted host's place in its VPC: a namespace of its own (its IMDS address on its lo, its own
 * loopback, as an instance has) joined to the VPC's namespace by a veth pair, with one /32 address, as
 * an instance's network interface has one private address in its subnet. The VPC's side gets a /32
 * route to the host; the host's side routes the VPC's range through its link, and reaches nothing else.
 * IPv4 forwarding stays off, so the host is reached only from the VPC's namespace (and through it, by
 * what listens there), and reaches only what listens there: instances, endpoints, the AWS emulator.
 */
import { ip } from '../network/iproute';

export interface HostLink {
  /** The host's own namespace (made here). */
  readonly namespace: string;
  /** The VPC's namespace (exists). */
  readonly vpcNamespace: string;
  /** The link's end in the VPC's namespace (at most 15 characters). */
  readonly vpcLink: string;
  /** The host's private address. */
  readonly address: string;
  /** What the host routes through its link: the VPC's range. */
  readonly vpcCidr: string;
  /**
   * An address of the VPC's namespace the host routes through (the VPC's router), for destinations that
   * are not the VPC namespace's own (the management link's far end); without it, a device route.
   */
  readonly gateway?: string;
}

const LINK_NAME = /^[a-z][a-z0-9-]{0,14}$/;

/** Makes the host's namespace and joins it to the VPC; undoes what it made when a step fails. */
export async function connectHost(link: HostLink): Promise<void> {
  if (!LINK_NAME.test(link.vpcLink)) throw new Error(`vpcLink ${JSON.stringify(link.vpcLink)} is not a link name: 1 to 15 lower-case letters, digits and hyphens`);
  await ip(['netns', 'add', link.namespace]);
  try {
    await ip(['-n', link.namespace, 'link', 'set', 'lo', 'up']);
    await ip(['-n', link.vpcNamespace, 'link', 'add', link.vpcLink, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', link.namespace]);
    await ip(['-n', link.namespace, 'addr', 'add', `${link.address}/32`, 'dev', 'eth0']);
    await ip(['-n', link.namespace, 'link', 'set', 'eth0', 'up']);
    await ip(['-n', link.vpcNamespace, 'link', 'set', link.vpcLink, 'up']);
    // Device routes both ways: each side answers ARP for its own addresses on any of its links.
    const via = link.gateway === undefined ? [] : ['via', link.gateway, 'onlink'];
    await ip(['-n', link.namespace, 'route', 'add', link.vpcCidr, ...via, 'dev', 'eth0', 'src', link.address]);
    await ip(['-n', link.vpcNamespace, 'route', 'add', `${link.address}/32`, 'dev', link.vpcLink]);
  } catch (err) {
    await disconnectHost(link).catch(() => undefined);
    throw err;
  }
}

/** Removes the host's namespace (its end of the link goes with it, and so does the VPC's end). */
export async function disconnectHost(link: Pick<HostLink, 'namespace' | 'vpcNamespace' | 'vpcLink'>): Promise<void> {
  await ip(['-n', link.vpcNamespace, 'link', 'del', link.vpcLink]).catch(() => undefined);
  await ip(['netns', 'del', link.namespace]);
}

/** True once something inside `namespace` accepts a TCP connection on `address:port` (within 1 s). */
export function acceptsConnections(namespace: string, address: string, port: number): Promise<boolean> {
  const probe = `import socket; socket.create_connection(("${address}", ${port}), 1).close()`;
  return ip(['netns', 'exec', namespace, 'python3', '-c', probe], 5000).then(
    () => true,
    () => false,
  );
}
