/**
 * A reader lost and back under reads through the read-only listener: how long reads stood still (the other
 * readers' processes keep serving), the client errors, when the reader's pools served again.
 */
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { FLEET_LISTENER_SHORT, FLEET_PATHS, FLEET_PORTS, fleetPath } from '../../model/pgbouncer-fleet';
import { DEFAULT_SERVER_LOGIN_RETRY_SECONDS } from '../../model/pgbouncer-ini';
import { RehearsalOperationError } from '../errors';
import { execInHost } from '../hosts/booted-host';
import type { PoolerHost } from '../pooler-host-types';
import type { Rehearsal } from '../rehearsal';
import { sleep } from '../sql';
import { connectTo, load, waitUntil, type DrillLogin } from './clients';

/**
 * The longest reads may stand still through the read-only listener while a reader is lost. Clients that keep
 * their connections stay on the process the kernel gave them (the listener's processes share its port), so a
 * client on another reader's process never notices; those on the lost reader's process fail and reconnect. The
 * drill starts once every reader has served, so some client is on another reader's process: what remains is one
 * query's time on a loaded machine, with room.
 */
export const READER_LOST_GAP_BOUND_MS = 3000;

/**
 * How long after a lost reader takes logins again its pools may take to serve: PgBouncer tries the server again
 * server_login_retry after the last failed attempt, then a connection the kernel gives to that reader's process
 * logs in (the prober opens one per read), with room for both.
 */
export function readerBackBoundMs(): number {
  return (DEFAULT_SERVER_LOGIN_RETRY_SECONDS + 4) * 1000;
}

export interface ReaderLostDrillFigures {
  readonly reader: string;
  /** Clients that keep their connection (reconnecting after an error), beside the prober. */
  readonly clients: number;
  readonly outageMs: number;
  readonly reads: number;
  /** Reads served while the reader was down (from its stop until it took logins again), by instance. */
  readonly readsDuringOutage: Readonly<Record<string, number>>;
  /** The longest stretch without a read served, from the stop until the reader took logins again. */
  readonly longestGapMs: number;
  readonly gapBoundMs: number;
  /** Client errors (the clients' and the prober's) from the stop on. */
  readonly errors: number;
  readonly errorKinds: Readonly<Record<string, number>>;
  /** The prober's connections while the reader was down: how many, and how many of them failed. */
  readonly proberAttemptsDuringOutage: number;
  readonly proberErrorsDuringOutage: number;
  /** When a read was served by the reader again, after it took logins (undefined: not within the bound + 5 s). */
  readonly servedAgainAfterMs: number | undefined;
  readonly servedAgainBoundMs: number;
  /** Client errors of attempts begun after the reader served again. */
  readonly errorsAfterServedAgain: number;
  /** Reads through the read-only listener served by an instance not in recovery. */
  readonly readsFromWriter: number;
  /** When its pools did not serve again in time: the read-only processes' last log lines (what PgBouncer said). */
  readonly poolLog?: string;
}

/**
 * Stops replica `reader` (default the last one; a clean fast shutdown, as Aurora restarts an instance) for
 * `outageMs` while `clients` read through `host`'s read-only listener on connections they keep, and a prober
 * opens a new connection for every read (as a client without a pool does), then starts the reader again and
 * waits until a read is served by it. Each read says which instance served it (its cluster_name).
 */
export async function poolerReaderLostDrill(r: Rehearsal, host: PoolerHost, login: DrillLogin, options: { readonly reader?: string; readonly clients?: number; readonly outageMs?: number } = {}): Promise<ReaderLostDrillFigures> {
  const replicas = r.endpoints.replicas.map((e) => e.name);
  const reader = options.reader ?? replicas[replicas.length - 1];
  if (reader === undefined || !replicas.includes(reader) || replicas.length < 2) throw new RehearsalOperationError(`reader-lost drill: reader ${String(reader)} of replicas [${replicas.join(', ')}]: name a replica of a rehearsal with at least 2 (the others serve while it is down)`);
  const clients = options.clients ?? 4;
  const outageMs = options.outageMs ?? 5000;
  const served: Array<{ readonly at: number; readonly by: string; readonly writer: boolean; readonly prober: boolean }> = [];
  const servedBy = new WeakMap<Client, string>();
  const read = (prober: boolean) => async (c: Client): Promise<void> => {
    const row = (await c.query<{ n: string; r: boolean }>("SELECT current_setting('cluster_name') AS n, pg_is_in_recovery() AS r")).rows[0]!;
    served.push({ at: Date.now(), by: row.n, writer: !row.r, prober });
    servedBy.set(c, row.n);
  };
  const connect = (): Promise<Client> => connectTo(r, host.host, FLEET_PORTS.readOnly, login);
  // The steady clients reconnect now and then until the drill begins (spreading them over the processes), then keep their connections.
  let keep = false;
  const steady = load(clients, connect, read(false), () => (keep ? undefined : 10));
  const prober = load(1, connect, read(true), 1);
  const servedAgainBoundMs = readerBackBoundMs();
  try {
    // Every reader serving first, and some steady client connected to another reader's process as the drill begins.
    const ready = await waitUntil(() => {
      keep = replicas.every((n) => served.some((s) => s.by === n)) && steady.connections.some((c) => c !== undefined && servedBy.has(c) && servedBy.get(c) !== reader);
      return keep;
    }, 15_000, 20);
    if (ready === undefined) throw new RehearsalOperationError(`reader-lost drill: not every reader served through ${host.name}'s read-only listener within 15 s (served by: ${[...new Set(served.map((s) => s.by))].join(', ') || 'none'})`);
    const stoppedAt = Date.now();
    await r.stopInstance(reader);
    await sleep(outageMs);
    await r.startInstance(reader);
    const backAt = Date.now();
    const again = await waitUntil(() => served.some((s) => s.by === reader && s.at > backAt), servedAgainBoundMs + 5000, 50);
    const againAt = again === undefined ? undefined : backAt + again;
    await sleep(1000);
    const during = served.filter((s) => s.at >= stoppedAt && s.at <= backAt);
    const times = [stoppedAt, ...during.map((s) => s.at), backAt];
    const errors = [...steady.errors, ...prober.errors];
    const kinds: Record<string, number> = { ...steady.messages };
    for (const [k, n] of Object.entries(prober.messages)) kinds[k] = (kinds[k] ?? 0) + n;
    const inOutage = (at: number): boolean => at >= stoppedAt && at <= backAt;
    return {
      reader,
      clients,
      outageMs: backAt - stoppedAt,
      reads: served.length,
      readsDuringOutage: during.reduce<Record<string, number>>((acc, s) => ({ ...acc, [s.by]: (acc[s.by] ?? 0) + 1 }), {}),
      longestGapMs: Math.max(...times.slice(1).map((t, i) => t - times[i]!)),
      gapBoundMs: READER_LOST_GAP_BOUND_MS,
      errors: errors.filter((at) => at >= stoppedAt).length,
      errorKinds: kinds,
      proberAttemptsDuringOutage: served.filter((s) => s.prober && inOutage(s.at)).length + prober.errors.filter(inOutage).length,
      proberErrorsDuringOutage: prober.errors.filter(inOutage).length,
      servedAgainAfterMs: again,
      servedAgainBoundMs,
      errorsAfterServedAgain: againAt === undefined ? errors.length : errors.filter((at) => at > againAt).length,
      readsFromWriter: served.filter((s) => s.writer).length,
      ...(again === undefined ? { poolLog: await readOnlyLog(host) } : {}),
    };
  } finally {
    await Promise.all([steady.stop(), prober.stop()]);
    // A drill that failed halfway leaves the reader running for what comes next (while the rehearsal still runs).
    if (r.pidOf(reader) === undefined && r.pidOf(replicas.find((n) => n !== reader)!) !== undefined) await r.startInstance(reader).catch(() => undefined);
  }
}

/** The last lines the host's read-only PgBouncer processes logged (their units' journal). */
async function readOnlyLog(host: PoolerHost): Promise<string> {
  const units = readFileSync(fleetPath(host.root, `${FLEET_PATHS.dir}/processes`), 'utf8').trim().split(/\s+/).filter((n) => n.startsWith(`${FLEET_LISTENER_SHORT.readOnly}-`)).flatMap((n) => ['-u', `apk-pgbouncer@${n}.service`]);
  const out = await execInHost(host.booted, ['journalctl', '--no-pager', '-o', 'short-precise', '-n', '40', ...units]);
  return `${out.stdout}${out.stderr}`;
}
