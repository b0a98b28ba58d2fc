/**
 * A host lost behind the load balancer stand-in: when the stand-in took it out, the client errors, and when a
 * replacement booted from the same user data served.
 */
import { EndpointRole } from '../../model/vocabulary';
import { POOLER_HEALTH_CHECK } from '../../model/pgbouncer-host-serve';
import { healthyTargets } from '../hosts/load-balancer';
import type { PoolerHost } from '../pooler-host-types';
import { addPoolerLoadBalancerTarget, type PoolerLoadBalancer } from '../pooler-load-balancer';
import { killHost, killProcess } from '../processes';
import type { Rehearsal } from '../rehearsal';
import { sleep } from '../sql';
import { connectTo, load, waitUntil, type DrillLogin } from './clients';

/** How long a target may stay in rotation after it stops answering: the target group's checks to fail, plus one timeout. */
export function loadBalancerDetectionWindowMs(): number {
  const h = POOLER_HEALTH_CHECK;
  return (h.unhealthyThreshold * h.intervalSeconds + h.timeoutSeconds) * 1000;
}

export interface HostLostDrillFigures {
  /** When the stand-in took the lost host out of the read/write target group (undefined: not within the window + 5 s). */
  readonly outAfterMs: number | undefined;
  readonly windowMs: number;
  readonly errors: number;
  /** Client errors of attempts begun after the host was out. */
  readonly errorsAfterOut: number;
  /** Queries served in the 3 s after the host was out. */
  readonly servedAfterOut: number;
  /** When the replacement served through the stand-in, after it was registered (undefined: not within 60 s). */
  readonly replacementServedAfterMs: number | undefined;
  readonly replacement: PoolerHost;
}

/**
 * Loses `lost` (SIGKILL to its systemd and its metadata service: no shutdown, no answer) while `clients` query
 * through the load balancer stand-in's read/write listener, then boots a replacement with `replace` and registers
 * it, as the Auto Scaling group does. Every client query says which host it came through (the server sees the host's
 * address).
 */
export async function poolerHostLostDrill(r: Rehearsal, lb: PoolerLoadBalancer, lost: PoolerHost, login: DrillLogin, replace: () => Promise<PoolerHost>, options: { readonly clients?: number } = {}): Promise<HostLostDrillFigures> {
  const served: Array<{ readonly at: number; readonly by: string }> = [];
  const traffic = load(
    options.clients ?? 4,
    () => connectTo(r, lb.address, lb.ports[EndpointRole.READ_WRITE], login),
    async (c) => {
      const row = (await c.query<{ a: string }>('SELECT host(inet_client_addr()) AS a')).rows[0]!;
      served.push({ at: Date.now(), by: row.a });
    },
    20,
  );
  const windowMs = loadBalancerDetectionWindowMs();
  try {
    await waitUntil(() => served.some((s) => s.by === lost.host), 30_000, 250);
    const lostAt = Date.now();
    await killHost(lost.booted.container);
    await killProcess(lost.booted.imds);
    const out = await waitUntil(async () => !(await healthyTargets(lb))[EndpointRole.READ_WRITE].includes(lost.name), windowMs + 5000, 250);
    const outAt = out === undefined ? undefined : lostAt + out;
    const servedBefore = served.length;
    await sleep(3000);
    const servedAfterOut = served.length - servedBefore;
    const replacement = await replace();
    await addPoolerLoadBalancerTarget(lb, replacement);
    const registeredAt = Date.now();
    const joined = await waitUntil(() => served.some((s) => s.by === replacement.host && s.at >= registeredAt), 60_000, 250);
    return {
      outAfterMs: out,
      windowMs,
      errors: traffic.errors.filter((at) => at >= lostAt).length,
      errorsAfterOut: outAt === undefined ? traffic.errors.length : traffic.errors.filter((at) => at > outAt + 500).length,
      servedAfterOut,
      replacementServedAfterMs: joined,
      replacement,
    };
  } finally {
    await traffic.stop();
  }
}
