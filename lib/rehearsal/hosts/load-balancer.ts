/**
 * The PgBouncer engine's Network Load Balancer, stood in for by HAProxy in TCP mode in the data VPC: a
 * listener per role on the NLB's port (POOLER_LISTENER_PORTS), forwarding TCP to every host's listener
 * (FLEET_PORTS), judged by the same HTTP health check the template sets on each target group
 * (POOLER_HEALTH_CHECK on the hosts' health endpoint, POOLER_HEALTH_PATHS). What it keeps of the NLB:
 * - a target is taken out after `unhealthyThreshold` failed checks `intervalSeconds` apart (a check failing
 *   after `timeoutSeconds`) and put back after `healthyThreshold` passed ones;
 * - the connections of a target taken out are closed (the NLB's default: connection termination for unhealthy
 *   targets, Elastic Load Balancing User Guide, target-group-health-checks, "Unhealthy target connection
 *   termination");
 * - with every target unhealthy it fails open, sending to all of them (same page: "If all targets fail
 *   health checks at the same time ... fails open"): each host is also a backup server without a check;
 * - the listeners' TCP idle timeout.
 * What it does not keep: the NLB's flow hash (round robin here), its nodes per zone, and a new target's
 * "initial" state (HAProxy counts a target healthy from its start; the rehearsal adds a host once it serves).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EndpointRole } from '../../model/vocabulary';
import { FLEET_PORTS, type FleetListener } from '../../model/pgbouncer-fleet';
import { POOLER_HEALTH_CHECK, POOLER_HEALTH_PATHS, POOLER_HEALTH_PORT } from '../../model/pgbouncer-host-serve';
import { POOLER_LISTENER_PORTS } from '../../model/pgbouncer-hosts';
import { chownTo, type OsUser } from '../os-user';
import { haproxyCommand } from '../comparison-proxies';
import { spawnDaemon, type TrackedProcess } from '../processes';

export interface LoadBalancerTarget {
  /** The host's name (pooler-<i>): the server's name in HAProxy. */
  readonly name: string;
  /** Its private address in the data VPC. */
  readonly address: string;
}

export interface LoadBalancerSpec {
  readonly namespace: string;
  /** Where its listeners bind, in the data VPC. */
  readonly address: string;
  readonly targets: ReadonlyArray<LoadBalancerTarget>;
  /**
   * The interface endpoints' addresses in the consumer VPCs (bound in the data namespace, on the links the
   * consumer VPCs reach): PrivateLink carries every listener of the endpoint service to each of them.
   * @default none
   */
  readonly endpointAddresses?: ReadonlyArray<string>;
  /** The listeners' TCP idle timeout (tcp.idle_timeout.seconds). */
  readonly tcpIdleTimeoutSeconds: number;
  /** Its files: config, runtime socket, log. */
  readonly dir: string;
}

/** A listener of the stand-in: the NLB's port, the hosts' port and the health path of one role. */
export interface LoadBalancerListener {
  readonly role: EndpointRole;
  readonly port: number;
  readonly targetPort: number;
  readonly healthPath: string;
}

const LISTENERS: ReadonlyArray<readonly [EndpointRole, FleetListener]> = [
  [EndpointRole.READ_WRITE, 'readWrite'],
  [EndpointRole.READ_ONLY, 'readOnly'],
];

/** The listeners, as the template's NLB has them. */
export function loadBalancerListeners(): LoadBalancerListener[] {
  return LISTENERS.map(([role, listener]) => ({ role, port: POOLER_LISTENER_PORTS[role], targetPort: FLEET_PORTS[listener], healthPath: POOLER_HEALTH_PATHS[listener] }));
}

const backendName = (role: EndpointRole): string => role.toLowerCase().replace('_', '-');
/** A checked server's options: the target group's health check (dynamic servers take no default-server). */
function checkOptions(): string {
  const h = POOLER_HEALTH_CHECK;
  return `check port ${POOLER_HEALTH_PORT} inter ${h.intervalSeconds}s fastinter ${h.intervalSeconds}s downinter ${h.intervalSeconds}s rise ${h.healthyThreshold} fall ${h.unhealthyThreshold} on-marked-down shutdown-sessions`;
}
/** Each host's second entry: a backup without a check, used only while no host passes (fail open). */
const failOpenName = (target: string): string => `${target}-fail-open`;

export function renderLoadBalancerConfig(spec: Omit<LoadBalancerSpec, 'namespace' | 'dir'> & { readonly adminSocket: string }): string {
  const h = POOLER_HEALTH_CHECK;
  return [
    '# The PgBouncer engine\'s Network Load Balancer stand-in, rendered by aurora-proxy-kit lib/rehearsal/hosts/load-balancer.ts; do not edit.',
    'global',
    // Within the rehearsal user's open-file limit (HAProxy needs about two descriptors per connection).
    '  maxconn 400',
    `  stats socket ${spec.adminSocket} mode 600 level admin`,
    'defaults',
    '  mode tcp',
    '  timeout connect 10s',
    `  timeout client ${spec.tcpIdleTimeoutSeconds}s`,
    `  timeout server ${spec.tcpIdleTimeoutSeconds}s`,
    `  timeout check ${h.timeoutSeconds}s`,
    ...loadBalancerListeners().flatMap((l) => [
      `listen ${backendName(l.role)}`,
      ...[spec.address, ...(spec.endpointAddresses ?? [])].map((a) => `  bind ${a}:${l.port}`),
      '  balance roundrobin',
      `  option httpchk GET ${l.healthPath}`,
      '  http-check expect status 200',
      '  option allbackups',
      ...spec.targets.flatMap((t) => [`  server ${t.name} ${t.address}:${l.targetPort} ${checkOptions()}`, `  server ${failOpenName(t.name)} ${t.address}:${l.targetPort} backup`]),
    ]),
    '',
  ].join('\n');
}

export interface LoadBalancer {
  readonly spec: LoadBalancerSpec;
  readonly process: TrackedProcess;
  readonly adminSocket: string;
}

export function startLoadBalancer(spec: LoadBalancerSpec, program: string, user: OsUser | undefined): LoadBalancer {
  mkdirSync(spec.dir, { recursive: true, mode: 0o700 });
  chownTo(user, spec.dir);
  const adminSocket = join(spec.dir, 'admin.sock');
  const configFile = join(spec.dir, 'haproxy.cfg');
  writeFileSync(configFile, renderLoadBalancerConfig({ ...spec, adminSocket }), { mode: 0o600 });
  chownTo(user, configFile);
  // -db: in the foreground, so the tracked pid is the proxy itself.
  const process = spawnDaemon({ name: 'pooler-load-balancer', kind: 'haproxy', program, args: ['-db', '-f', configFile], logFile: join(spec.dir, 'haproxy.log'), cwd: spec.dir, user, namespace: spec.namespace });
  return { spec, process, adminSocket };
}

/** Each listener's targets that pass their checks now (HAProxy's view: operational state running). */
export async function healthyTargets(lb: Pick<LoadBalancer, 'adminSocket'>): Promise<Record<EndpointRole, string[]>> {
  const state = await haproxyCommand(lb.adminSocket, 'show servers state');
  const healthy: Record<EndpointRole, string[]> = { [EndpointRole.READ_WRITE]: [], [EndpointRole.READ_ONLY]: [] };
  // Lines after the version and header: be_id be_name srv_id srv_name srv_addr srv_op_state ...
  for (const line of state.split('\n').slice(2)) {
    const f = line.trim().split(/\s+/);
    const role = LISTENERS.map(([r]) => r).find((r) => backendName(r) === f[1]);
    if (role === undefined || f[3] === undefined || f[3].endsWith('-fail-open')) continue;
    if (f[5] === '2') healthy[role].push(f[3]);
  }
  return healthy;
}

/** A new host joins every listener, as the Auto Scaling group registers an instance with the target groups. */
export async function addLoadBalancerTarget(lb: Pick<LoadBalancer, 'adminSocket'>, target: LoadBalancerTarget): Promise<void> {
  for (const l of loadBalancerListeners()) {
    const be = backendName(l.role);
    for (const [name, extra] of [[target.name, checkOptions()], [failOpenName(target.name), 'backup']] as const) {
      const added = await haproxyCommand(lb.adminSocket, `add server ${be}/${name} ${target.address}:${l.targetPort} ${extra}`);
      if (!/New server registered/i.test(added)) throw new Error(`the load balancer stand-in refused ${name}: ${added}`);
      for (const command of [...(extra.startsWith('check') ? [`enable health ${be}/${name}`] : []), `enable server ${be}/${name}`]) {
        const answer = await haproxyCommand(lb.adminSocket, command);
        if (answer !== '') throw new Error(`the load balancer stand-in: ${command}: ${answer}`);
      }
    }
  }
}
