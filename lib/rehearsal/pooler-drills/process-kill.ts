/**
 * `kill -9` of one PgBouncer process under load: when systemd had it running and serving again, the client
 * errors.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { FLEET_LISTENER_SHORT, FLEET_PORTS, type FleetListener } from '../../model/pgbouncer-fleet';
import { FLEET_RESTART_SECONDS } from '../../model/pgbouncer-host-units';
import { RehearsalOperationError } from '../errors';
import { pgbouncerPid } from '../pooler-host';
import type { PoolerHost } from '../pooler-host-types';
import type { Rehearsal } from '../rehearsal';
import { sleep } from '../sql';
import { connectTo, load, waitUntil, type DrillLogin } from './clients';

/**
 * What a killed PgBouncer process may take beyond systemd's RestartSec= (FLEET_RESTART_SECONDS) to serve
 * again: its start (Type=notify: ready once it listens), then a client of the load landing on it (they
 * reconnect every 10 queries, the kernel spreading new connections over the listener's processes).
 */
export const PROCESS_RESTART_ALLOWANCE_SECONDS = 4;

/** How long after a `kill -9` the process may take to serve a client again: RestartSec= plus the allowance. */
export function processRestartBoundMs(): number {
  return (FLEET_RESTART_SECONDS + PROCESS_RESTART_ALLOWANCE_SECONDS) * 1000;
}

export interface ProcessKillDrillFigures {
  readonly process: string;
  readonly clients: number;
  /** When systemd had started it again (a new pid), after the kill (undefined: not within the bound + 5 s). */
  readonly restartedAfterMs: number | undefined;
  /** When the restarted process had carried a client's query (on a server connection of its own), after the kill. */
  readonly servingAgainAfterMs: number | undefined;
  readonly boundMs: number;
  /** Client errors of attempts begun from the kill on (each a client whose connection was on the killed process). */
  readonly errors: number;
  readonly errorKinds: Readonly<Record<string, number>>;
  /** Client errors of attempts begun after the restarted process served. */
  readonly errorsAfterServing: number;
  /** Queries the listener's other processes served between the kill and the restarted process's first. */
  readonly servedMeanwhile: number;
}

/**
 * SIGKILLs PgBouncer process `process` of `host` (default rw-1) while `clients` query through its listener,
 * reconnecting every 10 queries; waits until systemd has restarted it (Restart=always) and it has served a
 * client, then 1 s more.
 */
export async function poolerProcessKillDrill(r: Rehearsal, host: PoolerHost, login: DrillLogin, options: { readonly process?: string; readonly clients?: number } = {}): Promise<ProcessKillDrillFigures> {
  const name = options.process ?? `${FLEET_LISTENER_SHORT.readWrite}-1`;
  const listener = (Object.keys(FLEET_LISTENER_SHORT) as FleetListener[]).find((l) => FLEET_LISTENER_SHORT[l] === name.split('-')[0]);
  const oldPid = pgbouncerPid(host, name);
  if (listener === undefined || oldPid === undefined) throw new RehearsalOperationError(`kill drill: no PgBouncer process ${name} runs on ${host.name}: name one of its processes (rw-1, ro-1, ...)`);
  const clients = options.clients ?? 8;
  // Each query says which server connection carried it (its local port on the host): a process's own are its sockets.
  const served: Array<{ readonly at: number; readonly port: number }> = [];
  const traffic = load(clients, () => connectTo(r, host.host, FLEET_PORTS[listener], login), async (c) => {
    const row = (await c.query<{ p: number }>('SELECT inet_client_port() AS p')).rows[0]!;
    served.push({ at: Date.now(), port: row.p });
  }, 10);
  const boundMs = processRestartBoundMs();
  try {
    await sleep(1500);
    const killedAt = Date.now();
    process.kill(oldPid, 'SIGKILL');
    let newPid: number | undefined;
    const restarted = await waitUntil(() => {
      newPid = pgbouncerPid(host, name);
      return newPid !== undefined && newPid !== oldPid;
    }, boundMs + 5000, 20);
    const restartedAt = killedAt + (restarted ?? 0);
    let servingAt: number | undefined;
    if (restarted !== undefined) {
      await waitUntil(() => {
        const own = localPortsOf(newPid!);
        servingAt = served.find((q) => q.at >= restartedAt && own.has(q.port))?.at;
        return servingAt !== undefined;
      }, boundMs + 5000, 50);
    }
    await sleep(1000);
    return {
      process: name,
      clients,
      restartedAfterMs: restarted,
      servingAgainAfterMs: servingAt === undefined ? undefined : servingAt - killedAt,
      boundMs,
      // Every error of the drill: the load ran clean before the kill, and an attempt begun just before it may fail by it.
      errors: traffic.errors.length,
      errorKinds: { ...traffic.messages },
      errorsAfterServing: servingAt === undefined ? traffic.errors.length : traffic.errors.filter((at) => at > servingAt!).length,
      servedMeanwhile: served.filter((q) => q.at > killedAt && q.at <= (servingAt ?? Date.now())).length,
    };
  } finally {
    await traffic.stop();
  }
}

/** The local TCP ports of a process's sockets (its own file descriptors, looked up in its namespace's TCP tables). */
function localPortsOf(pid: number): Set<number> {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m !== null) inodes.add(m[1]!);
      } catch {
        // Closed in between.
      }
    }
  } catch {
    return new Set();
  }
  const ports = new Set<number>();
  for (const table of ['tcp', 'tcp6']) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && inodes.has(f[9]!)) ports.add(parseInt(f[1]!.split(':')[1]!, 16));
    }
  }
  return ports;
}
