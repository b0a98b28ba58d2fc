/**
 * A writer failover through a host's listeners: how long writes stood still, acknowledged writes lost, reads
 * through the read-only listener served by the new writer, and when the promoted reader's read-only pools
 * moved to the former writer's instance endpoint (READ_ONLY_ROUTING).
 */
import { readFileSync } from 'node:fs';
import { FLEET_PATHS, FLEET_PORTS, fleetPath, type PoolerFleetSpec } from '../../model/pgbouncer-fleet';
import { fleetProcessName, planFleetProcesses } from '../../model/pgbouncer-fleet-files';
import { rehearsalAwsNames } from '../network/rehearsal-network';
import type { PoolerHost } from '../pooler-host-types';
import type { Rehearsal } from '../rehearsal';
import { sleep } from '../sql';
import { close, connectTo, load, retrying, waitUntil, type DrillLogin } from './clients';

export interface FailoverDrillFigures {
  readonly promoted: string;
  /** The longest writes stood still from the writer's kill on. */
  readonly writeDowntimeMs: number;
  readonly acknowledgedWrites: number;
  readonly writeErrors: number;
  /** Acknowledged writes missing after the failover. */
  readonly acknowledgedWritesLost: number;
  readonly reads: number;
  /** Reads through the read-only listener that a writer served (pg_is_in_recovery() false): 0 is the bound. */
  readonly readsFromWriter: number;
  readonly readErrors: number;
  /** When every read-only pool pointed where READ_ONLY_ROUTING puts it, after the promotion (undefined: not within 20 s). */
  readonly repointedAfterMs: number | undefined;
  /** Each read-only process's server host at the end. */
  readonly readOnlyPools: Readonly<Record<string, string>>;
}

/**
 * Kills the writer while 1 client writes through `host`'s read/write listener and `readers` clients read through
 * its read-only listener, and waits until writes resume on the promoted instance. `fleet` is the host's layout
 * (its read-only processes and the readers they pool for).
 */
export async function poolerFailoverDrill(r: Rehearsal, host: PoolerHost, login: DrillLogin, fleet: PoolerFleetSpec, options: { readonly readers?: number } = {}): Promise<FailoverDrillFigures> {
  const setup = await connectTo(r, host.host, FLEET_PORTS.readWrite, login);
  try {
    await setup.query('CREATE TABLE IF NOT EXISTS apk_failover_drill (id bigint PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())');
  } finally {
    await setup.end();
  }
  const acks: Array<{ readonly id: number; readonly at: number }> = [];
  let next = Date.now() * 1000;
  const writes = load(1, () => connectTo(r, host.host, FLEET_PORTS.readWrite, login), async (c) => {
    const id = next++;
    await c.query('INSERT INTO apk_failover_drill (id) VALUES ($1)', [id]);
    acks.push({ id, at: Date.now() });
  });
  let reads = 0;
  const fromWriter: number[] = [];
  const readLoad = load(options.readers ?? 4, () => connectTo(r, host.host, FLEET_PORTS.readOnly, login), async (c) => {
    const at = Date.now();
    const row = (await c.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r')).rows[0]!;
    reads++;
    if (!row.r) fromWriter.push(at);
  });
  const homes = host.values.ReaderEndpoints!.split(' ');
  const routed = planFleetProcesses(fleet)
    .filter((p) => p.listener === 'readOnly' || p.listener === 'readOnlySession')
    .map((p) => ({ name: fleetProcessName(p), home: homes[Number(p.target.slice('reader'.length)) - 1]! }));
  const poolHost = (name: string): string => /= host=(\S+)/.exec(readFileSync(fleetPath(host.root, `${FLEET_PATHS.routesDir}/${name}.ini`), 'utf8'))?.[1] ?? '';
  let report: Awaited<ReturnType<Rehearsal['failover']>>;
  let failoverAt: number;
  let promotedAt: number;
  let repointedAfterMs: number | undefined;
  try {
    await sleep(1000);
    failoverAt = Date.now();
    report = await r.failover();
    promotedAt = Date.now();
    const promoted = rehearsalAwsNames(r.rehearsed).instanceEndpoint(report.newWriter);
    const want = (p: { home: string }): string => (p.home === promoted ? host.values.WriterInstanceEndpoint! : p.home);
    await waitUntil(() => acks.some((a) => a.at > promotedAt), 30_000, 200);
    const repointed = await waitUntil(() => routed.every((p) => poolHost(p.name) === want(p)), 20_000);
    repointedAfterMs = repointed === undefined ? undefined : Date.now() - promotedAt;
    await sleep(1000);
  } finally {
    await Promise.all([writes.stop(), readLoad.stop()]);
  }
  const after = acks.filter((a) => a.at >= failoverAt);
  const times = [failoverAt, ...after.map((a) => a.at)];
  const writeDowntimeMs = Math.max(0, ...times.slice(1).map((t, i) => t - times[i]!));
  // Counted through the listener like any client, which retries: a process the load did not reach may still
  // fail its first login fast for server_login_retry after the outage, then connect.
  const present = await retrying(10_000, async () => {
    const check = await connectTo(r, host.host, FLEET_PORTS.readWrite, login);
    try {
      return new Set((await check.query<{ id: string }>('SELECT id::text FROM apk_failover_drill WHERE id >= $1', [String(acks[0]?.id ?? 0)])).rows.map((row) => Number(row.id)));
    } finally {
      await close(check);
    }
  });
  const lost = acks.filter((a) => !present.has(a.id)).length;
  return {
    promoted: report.newWriter,
    writeDowntimeMs,
    acknowledgedWrites: acks.length,
    writeErrors: writes.errors.length,
    acknowledgedWritesLost: lost,
    reads,
    readsFromWriter: fromWriter.length,
    readErrors: readLoad.errors.length,
    repointedAfterMs,
    readOnlyPools: Object.fromEntries(routed.map((p) => [p.name, poolHost(p.name)])),
  };
}
