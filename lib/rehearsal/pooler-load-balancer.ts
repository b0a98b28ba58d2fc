/**
 * The PgBouncer engine's load balancer on the rehearsal: the NLB stand-in (hosts/load-balancer.ts) in front of
 * the booted pooler hosts (pooler-host.ts), where consumers reach it.
 */
import { EndpointRole } from '../../lambda/src/environment';
import { NLB_DEFAULT_TCP_IDLE_TIMEOUT_SECONDS } from '../model/pgbouncer-fleet';
import { onPath } from './binaries';
import { RehearsalConfigError, RehearsalOperationError } from './errors';
import { acceptsConnections } from './hosts/host-network';
import { addLoadBalancerTarget, healthyTargets, loadBalancerListeners, startLoadBalancer, type LoadBalancer } from './hosts/load-balancer';
import { addressOf } from './network/plan';
import { rehearsalNetworkPlan } from './network/rehearsal-network';
import type { PoolerHost } from './pooler-host-types';
import { isAlive, logTail } from './processes';
import type { RunningRehearsal } from './running';

/**
 * The fleet's load balancer stand-in (hosts/load-balancer.ts) in front of `hosts`, at its address in the data
 * VPC; a host started later joins with addPoolerLoadBalancerTarget, as the Auto Scaling group registers it.
 */
export async function startPoolerLoadBalancer(run: RunningRehearsal, hosts: ReadonlyArray<PoolerHost>, options: { readonly tcpIdleTimeoutSeconds?: number; readonly endpointAddresses?: ReadonlyArray<string> } = {}): Promise<PoolerLoadBalancer> {
  const plan = rehearsalNetworkPlan(run.rehearsed);
  const address = addressOf(plan, 'pooler-load-balancer');
  const program = onPath('haproxy');
  if (program === undefined) throw new RehearsalConfigError(['the pooler load balancer stand-in needs HAProxy: `apt-get install haproxy` (or `make system-deps`)']);
  const lb = startLoadBalancer(
    { namespace: plan.dataNamespace, address, targets: hosts.map((h) => ({ name: h.name, address: h.host })), ...(options.endpointAddresses !== undefined ? { endpointAddresses: options.endpointAddresses } : {}), tcpIdleTimeoutSeconds: options.tcpIdleTimeoutSeconds ?? NLB_DEFAULT_TCP_IDLE_TIMEOUT_SECONDS, dir: run.layout.poolerFleet.loadBalancerDir },
    program,
    run.user,
  );
  run.track(lb.process);
  const ports = Object.fromEntries(loadBalancerListeners().map((l) => [l.role, l.port])) as Record<EndpointRole, number>;
  const result: PoolerLoadBalancer = { ...lb, address, ports };
  // Listening, and its runtime API answering.
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (!isAlive(lb.process.pid)) throw new RehearsalOperationError(`the pooler load balancer stand-in stopped: ${logTail(lb.process.logFile)}`);
    try {
      await healthyTargets(lb);
      if (await acceptsConnections(plan.dataNamespace, address, ports[EndpointRole.READ_WRITE])) return result;
    } catch {
      // Not yet.
    }
    if (Date.now() > deadline) throw new RehearsalOperationError(`the pooler load balancer stand-in did not listen on ${address} within 10 s: ${logTail(lb.process.logFile)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The load balancer stand-in, where consumers reach it: its address in the data VPC and a port per role. */
export interface PoolerLoadBalancer extends LoadBalancer {
  readonly address: string;
  readonly ports: Readonly<Record<EndpointRole, number>>;
}

export function addPoolerLoadBalancerTarget(lb: PoolerLoadBalancer, host: PoolerHost): Promise<void> {
  return addLoadBalancerTarget(lb, { name: host.name, address: host.host });
}
