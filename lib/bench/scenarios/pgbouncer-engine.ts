/**
 * pgbouncer_engine (no seed: the drills of the PgBouncer engine's hosts, booted as they boot on AWS): two hosts
 * from the deployed user data behind the load balancer stand-in, then
 *  - a host lost under load: when the stand-in takes it out, the client errors, a replacement joining;
 *  - a writer failover through a host's listeners: writes' downtime, acknowledged writes lost, reads served by
 *    the new writer through the read-only listener, when the promoted reader's read-only pools move.
 * Each figure is held to the bound the kit documents (atMost): a breach fails the target. Needs root and network
 * namespaces (systemd-nspawn, the hosts' own namespaces); without them the scenario says so and measures nothing.
 */
import { AURORA_ENDPOINT_DNS_TTL_SECONDS, READ_ONLY_CHECK_DELAY_SECONDS, READ_ONLY_ROUTING, type PoolerFleetSpec } from '../../model/pgbouncer-fleet';
import { loadBalancerDetectionWindowMs, networkNamespacesUnavailable, poolerFailoverDrill, poolerHostLostDrill } from '../../rehearsal';
import { BENCH_BLOCKS } from '../blocks';
import { atMost } from '../checks';
import { withRehearsal } from '../scope';
import { SEED_SOURCES } from '../seed-figures';
import { round } from '../stats';
import type { ScenarioResult, TargetCheck } from '../types';
import type { ScenarioContext } from './context';

const CONSUMER = { username: 'bench_fleet', password: 'bench-fleet-consumer-password-0123456789' };
const SERVER = { username: 'bench_fleet_ro', password: 'bench-fleet-server-password-0123456789' };
/** Writes may stand still this long at a failover: the cluster endpoint's TTL plus Aurora-like promotion, with room. */
const WRITE_DOWNTIME_BOUND_MS = 20_000;

export async function pgbouncerEngine(ctx: ScenarioContext): Promise<ScenarioResult> {
  const started = Date.now();
  const base = {
    name: 'pgbouncer_engine' as const,
    title: 'The PgBouncer engine\'s booted hosts: a host lost, a writer failover',
    seedSource: SEED_SOURCES.pgbouncer_engine,
    startedAt: new Date(started).toISOString(),
  };
  const unavailable = networkNamespacesUnavailable();
  if (unavailable !== undefined) {
    return { ...base, durationSeconds: 0, environment: { ...ctx.environment, scaling: ctx.environment.scaling.pgbouncer_engine }, figures: {}, ratios: {}, checks: [], notes: [`not run: the hosts boot with systemd-nspawn in network namespaces of their own, which need root (${unavailable})`] };
  }
  const settings = { addressBlock: BENCH_BLOCKS.pgbouncerEngine.block, network: 'namespaces' as const, replicas: 2, peers: false, maxConnections: 100, pool: { maxConnectionsPercent: 50, maxIdleConnectionsPercent: 10, connectionBorrowTimeoutSeconds: 30 } };
  const figures = await withRehearsal(settings, ctx.outDir, async (r) => {
    const login = { consumers: [{ ...CONSUMER, access: 'READ_WRITE' as const }], server: SERVER };
    ctx.log('  pgbouncer_engine: booting two hosts');
    const first = await r.startPoolerHost(login);
    const second = await r.startPoolerHost(login);
    const lb = await r.startPoolerLoadBalancer([first, second]);
    ctx.log('  pgbouncer_engine: a host lost under load');
    const hostLost = await poolerHostLostDrill(r, lb, second, CONSUMER, () => r.startPoolerHost(login));
    const fleet: PoolerFleetSpec = { hosts: 2, vcpusPerHost: 2, readers: 2, maxConnections: r.settings.sizingMaxConnections, pool: r.settings.pool, tcpIdleTimeoutSeconds: 350 };
    ctx.log('  pgbouncer_engine: a writer failover');
    const failover = await poolerFailoverDrill(r, first, CONSUMER, fleet, { readers: ctx.quick ? 2 : 4 });
    // The replacement host itself is no figure: its name only.
    return { hostLost: { ...hostLost, replacement: hostLost.replacement.name }, failover };
  });
  const f = figures.failover;
  const h = figures.hostLost;
  const common = { seed: 'none (the kit\'s documented bound)', baselineLabel: 'bound', oursLabel: 'PgBouncer engine, booted hosts' };
  const repointBoundMs = (READ_ONLY_ROUTING.intervalSeconds + AURORA_ENDPOINT_DNS_TTL_SECONDS + 5) * 1000;
  const checks: TargetCheck[] = [
    atMost({ ...common, id: 'engine-failover-writes-lost', metric: 'acknowledged writes lost at a writer failover', baseline: 0, ours: f.acknowledgedWritesLost, unit: 'writes', limit: 0 }),
    atMost({ ...common, id: 'engine-failover-write-downtime', metric: 'longest stretch without a write at a writer failover', baseline: WRITE_DOWNTIME_BOUND_MS, ours: f.writeDowntimeMs, unit: 'ms', limit: WRITE_DOWNTIME_BOUND_MS }),
    atMost({ ...common, id: 'engine-failover-reads-from-writer', metric: `reads through the read-only listener served by the new writer later than ${READ_ONLY_CHECK_DELAY_SECONDS} s after the promotion`, baseline: 0, ours: f.readsFromWriterAfterBound, unit: 'reads', limit: 0 }),
    atMost({ ...common, id: 'engine-failover-repoint', metric: 'promoted reader\'s read-only pools moved to the former writer', baseline: repointBoundMs, ours: f.repointedAfterMs ?? Number.POSITIVE_INFINITY, unit: 'ms', limit: repointBoundMs }),
    atMost({ ...common, id: 'engine-host-lost-detected', metric: 'a lost host taken out by the load balancer stand-in', baseline: h.windowMs + 5000, ours: h.outAfterMs ?? Number.POSITIVE_INFINITY, unit: 'ms', limit: h.windowMs + 5000 }),
    atMost({ ...common, id: 'engine-host-lost-errors-after', metric: 'client errors begun after the lost host was out', baseline: 0, ours: h.errorsAfterOut, unit: 'errors', limit: 0 }),
  ];
  return {
    ...base,
    durationSeconds: round((Date.now() - started) / 1000, 1),
    environment: { ...ctx.environment, settings, fleet: 'two hosts of 2 vCPUs booted from the deployed user data (Debian 13, systemd, cloud-init), the load balancer stand-in in front', windowMs: loadBalancerDetectionWindowMs(), scaling: ctx.environment.scaling.pgbouncer_engine },
    figures,
    ratios: {},
    checks,
    notes: [
      `Reads served by the new writer within ${READ_ONLY_CHECK_DELAY_SECONDS} s of the promotion (${f.readsFromWriter} here) are the documented bound: a connection the guard passed as a reader just before the promotion, once (docs/PGBOUNCER-ENGINE.md).`,
      'The rehearsal kills the writer and does not bring it back: the promoted reader\'s pools move to an instance that is down, as they would to one Aurora is restarting.',
    ],
  };
}
