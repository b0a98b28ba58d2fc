/**
 * The PgBouncer processes of both endpoints ("pooler hosts"), as groups: an endpoint runs
 * `processesPerTarget` processes for each server it pools for (the read/write endpoint for the
 * writer, the read-only endpoint for each live replica), all on the endpoint's address:port.
 *
 * They are listed in the process table (processes.ts) with their placement. After `up`, the health checker
 * starts a group for a replica that joined and stops the group of one that died, and the supervisor
 * (health-supervisor.ts) starts again a process that exited; a record leaves the table before its process is
 * stopped, so the supervisor never restarts what the checker stops.
 */
import type { PgBouncerPaths, WorkDirLayout } from './layout';
import type { OsUser } from './os-user';
import { fleetProcessName } from '../model/pgbouncer-fleet-files';
import { PGBOUNCER_MAX_PEER_ID } from '../model/pgbouncer-ini';
import { endpointListener, launchPooler, reloadPooler, standInFiles, standInProcess, stopPooler, waitPoolerReady, writeStandInFiles, type PoolerLaunch } from './pgbouncer';
import { isOurs, readProcesses, updateProcesses, type PoolerEndpoint, type PoolerPlacement, type TrackedProcess } from './processes';
import type { Secrets } from './secrets';
import type { PgBouncerEndpointSpec, PgBouncerState } from './state';

export type { PoolerEndpoint } from './processes';

export interface PoolerRecord extends PoolerPlacement {
  readonly process: TrackedProcess;
}

const recordsOf = (processes: ReadonlyArray<TrackedProcess>): PoolerRecord[] => processes.flatMap((p) => (p.pooler === undefined ? [] : [{ ...p.pooler, process: p }]));

export function readPoolers(layout: WorkDirLayout): PoolerRecord[] {
  return recordsOf(readProcesses(layout.processesFile));
}

/** Changes the table's PgBouncer processes (under its lock), each in its place, new ones last; returns them as they were. */
export function updatePoolers(layout: WorkDirLayout, change: (records: PoolerRecord[]) => PoolerRecord[]): PoolerRecord[] {
  const placed = ({ process, ...pooler }: PoolerRecord): TrackedProcess => ({ ...process, pooler });
  return recordsOf(
    updateProcesses(layout.processesFile, (ps) => {
      const next = new Map(change(recordsOf(ps)).map((r) => [`${r.endpoint}/${r.peerId}`, r]));
      const kept = ps.flatMap((p) => {
        const r = p.pooler === undefined ? undefined : next.get(`${p.pooler.endpoint}/${p.pooler.peerId}`);
        if (r !== undefined) next.delete(`${r.endpoint}/${r.peerId}`);
        return p.pooler === undefined ? [p] : r === undefined ? [] : [placed(r)];
      });
      return [...kept, ...[...next.values()].map(placed)];
    }),
  );
}

/** What managing the poolers needs; start.ts and the health checker build it from the state. */
export interface PoolerContext {
  readonly layout: WorkDirLayout;
  readonly pgbouncer: PgBouncerState;
  readonly secrets: Secrets;
  readonly user: OsUser | undefined;
}

export function poolerName(endpoint: PoolerEndpoint, peerId: number): string {
  return `pgbouncer-${endpoint === 'readWrite' ? 'rw' : 'ro'}-${peerId}`;
}

/** A process's files, by its name in the fleet model (its endpoint's listener, its peer id). */
export function poolerPaths(layout: WorkDirLayout, spec: PgBouncerEndpointSpec, peerId: number): PgBouncerPaths {
  return layout.pgbouncer(fleetProcessName({ listener: endpointListener(spec), peerId }));
}

/** How a record's process is started (the checker's new groups and the supervisor's restarts alike). */
export function poolerLaunch(layout: WorkDirLayout, pgbouncer: PgBouncerState, user: OsUser | undefined, record: Pick<PoolerRecord, 'endpoint' | 'peerId'>): PoolerLaunch {
  const spec = pgbouncer[record.endpoint];
  return { spec, paths: poolerPaths(layout, spec, record.peerId), name: poolerName(record.endpoint, record.peerId), program: pgbouncer.program, cwd: layout.pgbouncerDir, user, cgroupProcsFiles: pgbouncer.cgroupProcsFiles ?? [] };
}

/** Distinct values in first-seen order. */
const distinct = (values: ReadonlyArray<string>): string[] => [...new Set(values)];

/** RDS Proxy's re-pointing on the PgBouncer processes: groups started, stopped and re-pointed, the registry kept in step. */
export class Poolers {
  constructor(private readonly ctx: PoolerContext) {}

  of(endpoint: PoolerEndpoint): PoolerRecord[] {
    return readPoolers(this.ctx.layout).filter((r) => r.endpoint === endpoint);
  }

  /** The servers an endpoint pools for, in the order their groups started. */
  hosts(endpoint: PoolerEndpoint): string[] {
    return distinct(this.of(endpoint).map((r) => r.host));
  }

  private socketDir(endpoint: PoolerEndpoint, peerId: number): string {
    return poolerPaths(this.ctx.layout, this.ctx.pgbouncer[endpoint], peerId).socketDir;
  }

  private port(endpoint: PoolerEndpoint): number {
    return this.ctx.pgbouncer[endpoint].listenPort;
  }

  /** (Re)writes the endpoint's files from the records: its processes' pools, their [peers]. */
  private writeFiles(endpoint: PoolerEndpoint, records: ReadonlyArray<Omit<PoolerRecord, 'process'>> = this.of(endpoint)): void {
    const spec = this.ctx.pgbouncer[endpoint];
    const processes = records.map((r) => standInProcess(spec, r.peerId, r.host, r.slot));
    const writer = this.hosts('readWrite')[0] ?? records[0]?.host ?? spec.listenAddress;
    writeStandInFiles(this.ctx.layout.pgbouncerDir, standInFiles(spec, processes, this.ctx.layout.pgbouncerDir, { serverUser: this.ctx.secrets.readOnlyServerUser, writer }), this.ctx.user);
  }

  /** Rewrites the endpoint's files (host, peers) and RELOADs its live processes; all are tried. */
  private async refresh(endpoint: PoolerEndpoint, skip: ReadonlySet<number> = new Set()): Promise<void> {
    this.writeFiles(endpoint);
    const failures: string[] = [];
    for (const r of this.of(endpoint)) {
      // A dead one is the supervisor's: it starts with the new files.
      if (skip.has(r.peerId) || !isOurs(r.process)) continue;
      await reloadPooler(this.socketDir(endpoint, r.peerId), this.port(endpoint), this.ctx.secrets).catch((err: Error) => failures.push(`${r.process.name}: ${err.message}`));
    }
    if (failures.length > 0) throw new Error(`RELOAD failed: ${failures.join('; ')}`);
  }

  /** Starts `processesPerTarget` processes for `host` on the endpoint, then tells the others about their new peers. */
  async startGroup(endpoint: PoolerEndpoint, host: string, timeoutMs: number): Promise<void> {
    const count = this.ctx.pgbouncer[endpoint].processesPerTarget;
    const used = new Set(this.of(endpoint).map((r) => r.peerId));
    const fresh: Array<Omit<PoolerRecord, 'process'>> = [];
    for (let id = 1; fresh.length < count; id++) {
      if (id > PGBOUNCER_MAX_PEER_ID) throw new Error(`no free peer_id left on the ${endpoint} endpoint`);
      if (!used.has(id)) fresh.push({ endpoint, peerId: id, host, slot: fresh.length });
    }
    // The listener's [peers] names the whole endpoint, the new group included; the others RELOAD it below.
    this.writeFiles(endpoint, [...this.of(endpoint), ...fresh]);
    const ids = new Set(fresh.map((f) => f.peerId));
    try {
      // Tracked by pid at once: whoever stops the rehearsal finds it even if this round dies here.
      const started = fresh.map((f) => {
        const record = { ...f, process: launchPooler(poolerLaunch(this.ctx.layout, this.ctx.pgbouncer, this.ctx.user, f)) };
        updatePoolers(this.ctx.layout, (rs) => [...rs, record]);
        return record;
      });
      await Promise.all(started.map((r) => waitPoolerReady(r.process, this.socketDir(endpoint, r.peerId), this.port(endpoint), this.ctx.secrets, timeoutMs)));
    } catch (err) {
      const gone = updatePoolers(this.ctx.layout, (rs) => rs.filter((r) => !(r.endpoint === endpoint && ids.has(r.peerId)))).filter((r) => r.endpoint === endpoint && ids.has(r.peerId));
      await Promise.all(gone.map((r) => stopPooler(r.process)));
      this.writeFiles(endpoint);
      throw err;
    }
    await this.refresh(endpoint, ids);
  }

  /** Stops the endpoint's group for `host` (a replica that died or became the writer). */
  async stopGroup(endpoint: PoolerEndpoint, host: string): Promise<void> {
    const inGroup = (r: PoolerRecord): boolean => r.endpoint === endpoint && r.host === host;
    // Out of the registry first: the supervisor restarts only what is listed.
    const group = updatePoolers(this.ctx.layout, (rs) => rs.filter((r) => !inGroup(r))).filter(inGroup);
    await Promise.all(group.map((r) => stopPooler(r.process)));
    await this.refresh(endpoint);
  }

  /** Points every process of the endpoint at `host` (the read/write endpoint after a failover). */
  async repoint(endpoint: PoolerEndpoint, host: string): Promise<void> {
    updatePoolers(this.ctx.layout, (rs) => rs.map((r) => (r.endpoint === endpoint ? { ...r, host } : r)));
    await this.refresh(endpoint);
  }
}

/**
 * Starts a listed process again with its own ini (same peer_id, same share of the budget), if it is still
 * listed with the pid that died; returns the new process, or undefined when there is nothing to restart (its
 * group was stopped, or it runs). The others of its endpoint kept serving meanwhile (so_reuseport drops a dead
 * listener from the group).
 */
export function restartListed(layout: WorkDirLayout, pgbouncer: PgBouncerState, user: OsUser | undefined, dead: PoolerRecord): TrackedProcess | undefined {
  let started: TrackedProcess | undefined;
  updatePoolers(layout, (rs) =>
    rs.map((r) => {
      if (r.endpoint !== dead.endpoint || r.peerId !== dead.peerId || r.process.pid !== dead.process.pid || isOurs(r.process)) return r;
      started = launchPooler(poolerLaunch(layout, pgbouncer, user, r));
      return { ...r, process: started };
    }),
  );
  return started;
}
