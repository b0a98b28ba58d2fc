/**
 * The PgBouncer processes of both endpoints ("pooler hosts"), as groups: an endpoint runs
 * `processesPerTarget` processes for each server it pools for (the read/write endpoint for the
 * writer, the read-only endpoint for each live replica), all on the endpoint's address:port.
 * The process table lists each with its place; a record leaves it before its process is stopped, so the
 * supervisor (health-supervisor.ts, which restarts a listed process that exited) never restarts what the checker stops.
 */
import type { PgBouncerPaths, WorkDirLayout } from './layout';
import type { OsUser } from './os-user';
import { fleetProcessName } from '../model/pgbouncer-fleet-files';
import { PGBOUNCER_MAX_PEER_ID } from '../model/pgbouncer-ini';
import { endpointListener, launchPooler, reloadPooler, standInFiles, standInProcess, waitPoolerReady, writeStandInFiles, type PoolerLaunch } from './pgbouncer';
import { isOurs, readProcesses, stopProcess, updateProcesses, type PoolerEndpoint, type PoolerPlacement, type TrackedProcess } from './processes';
import type { Secrets } from './secrets';
import type { PgBouncerState } from './state';

export type { PoolerEndpoint } from './processes';

/** A PgBouncer process of the table, with its place. */
export type PooledProcess = TrackedProcess & { readonly pooler: PoolerPlacement };

export function readPoolers(layout: WorkDirLayout): PooledProcess[] {
  return readProcesses(layout.processesFile).filter((p): p is PooledProcess => p.pooler !== undefined);
}

/** What managing the poolers needs; start.ts and the health checker build it from the state. */
export interface PoolerContext {
  readonly layout: WorkDirLayout;
  readonly pgbouncer: PgBouncerState;
  readonly secrets: Secrets;
  readonly user: OsUser | undefined;
}

/** A process's files, by its name in the fleet model (its endpoint's listener, its peer id). */
function poolerPaths(layout: WorkDirLayout, pgbouncer: PgBouncerState, at: Pick<PoolerPlacement, 'endpoint' | 'peerId'>): PgBouncerPaths {
  return layout.pgbouncer(fleetProcessName({ listener: endpointListener(pgbouncer[at.endpoint]), peerId: at.peerId }));
}

/** Where a process's admin console listens (TCP lands on any process of the endpoint). */
export function poolerSocketDir(layout: WorkDirLayout, pgbouncer: PgBouncerState, p: PooledProcess): string {
  return poolerPaths(layout, pgbouncer, p.pooler).socketDir;
}

/** Starts a placed process (the checker's new groups and the supervisor's restarts alike). */
function launchPlaced(layout: WorkDirLayout, pgbouncer: PgBouncerState, user: OsUser | undefined, pooler: PoolerPlacement): PooledProcess {
  const name = `pgbouncer-${pooler.endpoint === 'readWrite' ? 'rw' : 'ro'}-${pooler.peerId}`;
  const launch: PoolerLaunch = { spec: pgbouncer[pooler.endpoint], paths: poolerPaths(layout, pgbouncer, pooler), name, program: pgbouncer.program, cwd: layout.pgbouncerDir, user, cgroupProcsFiles: pgbouncer.cgroupProcsFiles ?? [] };
  return { ...launchPooler(launch), pooler };
}

/** SIGINT lets in-flight transactions finish; then SIGKILL. */
const POOLER_STOP_GRACE_MS = 2000;

/** Distinct values in first-seen order. */
const distinct = (values: ReadonlyArray<string>): string[] => [...new Set(values)];

/** RDS Proxy's re-pointing on the PgBouncer processes: groups started, stopped and re-pointed, the table kept in step. */
export class Poolers {
  constructor(private readonly ctx: PoolerContext) {}

  of(endpoint: PoolerEndpoint): PooledProcess[] {
    return readPoolers(this.ctx.layout).filter((p) => p.pooler.endpoint === endpoint);
  }

  /** The servers an endpoint pools for, in the order their groups started. */
  hosts(endpoint: PoolerEndpoint): string[] {
    return distinct(this.of(endpoint).map((p) => p.pooler.host));
  }

  private port(endpoint: PoolerEndpoint): number {
    return this.ctx.pgbouncer[endpoint].listenPort;
  }

  /** Takes the endpoint's processes `which` picks out of the table (before stopping them: the supervisor restarts only what is listed). */
  private unlist(which: (p: PooledProcess) => boolean): PooledProcess[] {
    const picked = (p: TrackedProcess): p is PooledProcess => p.pooler !== undefined && which(p as PooledProcess);
    return updateProcesses(this.ctx.layout.processesFile, (ps) => ps.filter((p) => !picked(p))).filter(picked);
  }

  /** (Re)writes the endpoint's files from the placements: its processes' pools, their [peers]. */
  private writeFiles(endpoint: PoolerEndpoint, placements: ReadonlyArray<PoolerPlacement> = this.of(endpoint).map((p) => p.pooler)): void {
    const spec = this.ctx.pgbouncer[endpoint];
    const processes = placements.map((r) => standInProcess(spec, r.peerId, r.host, r.slot));
    const writer = this.hosts('readWrite')[0] ?? placements[0]?.host ?? spec.listenAddress;
    writeStandInFiles(this.ctx.layout.pgbouncerDir, standInFiles(spec, processes, this.ctx.layout.pgbouncerDir, { serverUser: this.ctx.secrets.readOnlyServerUser, writer }), this.ctx.user);
  }

  /** Rewrites the endpoint's files (host, peers) and RELOADs its live processes; all are tried. */
  private async refresh(endpoint: PoolerEndpoint, skip: ReadonlySet<number> = new Set()): Promise<void> {
    this.writeFiles(endpoint);
    const failures: string[] = [];
    for (const p of this.of(endpoint)) {
      // A dead one is the supervisor's: it starts with the new files.
      if (skip.has(p.pooler.peerId) || !isOurs(p)) continue;
      await reloadPooler(poolerSocketDir(this.ctx.layout, this.ctx.pgbouncer, p), this.port(endpoint), this.ctx.secrets).catch((err: Error) => failures.push(`${p.name}: ${err.message}`));
    }
    if (failures.length > 0) throw new Error(`RELOAD failed: ${failures.join('; ')}`);
  }

  /** Starts `processesPerTarget` processes for `host` on the endpoint, then tells the others about their new peers. */
  async startGroup(endpoint: PoolerEndpoint, host: string, timeoutMs: number): Promise<void> {
    const count = this.ctx.pgbouncer[endpoint].processesPerTarget;
    const used = new Set(this.of(endpoint).map((p) => p.pooler.peerId));
    const fresh: PoolerPlacement[] = [];
    for (let id = 1; fresh.length < count; id++) {
      if (id > PGBOUNCER_MAX_PEER_ID) throw new Error(`no free peer_id left on the ${endpoint} endpoint`);
      if (!used.has(id)) fresh.push({ endpoint, peerId: id, host, slot: fresh.length });
    }
    // The listener's [peers] names the whole endpoint, the new group included; the others RELOAD it below.
    this.writeFiles(endpoint, [...this.of(endpoint).map((p) => p.pooler), ...fresh]);
    const ids = new Set(fresh.map((f) => f.peerId));
    try {
      // Tracked by pid at once: whoever stops the rehearsal finds it even if this round dies here.
      const started = fresh.map((f) => {
        const proc = launchPlaced(this.ctx.layout, this.ctx.pgbouncer, this.ctx.user, f);
        updateProcesses(this.ctx.layout.processesFile, (ps) => [...ps, proc]);
        return proc;
      });
      await Promise.all(started.map((p) => waitPoolerReady(p, poolerSocketDir(this.ctx.layout, this.ctx.pgbouncer, p), this.port(endpoint), this.ctx.secrets, timeoutMs)));
    } catch (err) {
      await Promise.all(this.unlist((p) => p.pooler.endpoint === endpoint && ids.has(p.pooler.peerId)).map((p) => stopProcess(p, POOLER_STOP_GRACE_MS)));
      this.writeFiles(endpoint);
      throw err;
    }
    await this.refresh(endpoint, ids);
  }

  /** Stops the endpoint's group for `host` (a replica that died or became the writer). */
  async stopGroup(endpoint: PoolerEndpoint, host: string): Promise<void> {
    await Promise.all(this.unlist((p) => p.pooler.endpoint === endpoint && p.pooler.host === host).map((p) => stopProcess(p, POOLER_STOP_GRACE_MS)));
    await this.refresh(endpoint);
  }

  /** Points every process of the endpoint at `host` (the read/write endpoint after a failover). */
  async repoint(endpoint: PoolerEndpoint, host: string): Promise<void> {
    updateProcesses(this.ctx.layout.processesFile, (ps) => ps.map((p) => (p.pooler?.endpoint === endpoint ? { ...p, pooler: { ...p.pooler, host } } : p)));
    await this.refresh(endpoint);
  }
}

/**
 * Starts a listed process again with its own ini (same peer_id, same share of the budget), if the table still
 * lists `pid` and it is gone; returns the new process, or undefined when there is nothing to restart (its group
 * was stopped). The others of its endpoint kept serving meanwhile (so_reuseport drops a dead listener).
 */
export function restartListed(layout: WorkDirLayout, pgbouncer: PgBouncerState, user: OsUser | undefined, pid: number): PooledProcess | undefined {
  let started: PooledProcess | undefined;
  updateProcesses(layout.processesFile, (ps) => ps.map((p) => (p.pid !== pid || p.pooler === undefined || isOurs(p) ? p : (started = launchPlaced(layout, pgbouncer, user, p.pooler)))));
  return started;
}
