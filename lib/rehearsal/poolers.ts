/**
 * The PgBouncer processes of both endpoints ("pooler hosts"), as groups: an endpoint runs
 * `processesPerTarget` processes for each server it pools for (the read/write endpoint for the
 * writer, the read-only endpoint for each live replica), all on the endpoint's address:port.
 *
 * Which processes exist lives in the pooler registry (WorkDirLayout.poolersFile), not in state.json:
 * after `up`, the health checker starts a group for a replica that joined and stops the group of one
 * that died, and the supervisor (health-supervisor.ts) starts again a process that exited; both write the
 * registry, so every change is a read-modify-write under its lock, and a record leaves the registry before
 * its process is stopped (the supervisor never restarts what the checker stops). `down` and `status` read it
 * alongside the state.
 */
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import type { PgBouncerPaths, WorkDirLayout } from './layout';
import type { OsUser } from './os-user';
import { fleetProcessName } from '../model/pgbouncer-fleet-files';
import { PGBOUNCER_MAX_PEER_ID } from '../model/pgbouncer-ini';
import { endpointListener, launchPooler, reloadPooler, standInFiles, standInProcess, stopPooler, waitPoolerReady, writeStandInFiles, type PoolerLaunch } from './pgbouncer';
import { isAlive, isOurs, type TrackedProcess } from './processes';
import type { Secrets } from './secrets';
import { writeAtomic, type PgBouncerEndpointSpec, type PgBouncerState, type RehearsalState } from './state';

export type PoolerEndpoint = 'readWrite' | 'readOnly';

export interface PoolerRecord {
  readonly endpoint: PoolerEndpoint;
  readonly peerId: number;
  /** The server the process pools for. */
  readonly host: string;
  /** Its place in the host's group: which share of the budget it has. */
  readonly slot: number;
  readonly process: TrackedProcess;
}

export interface PoolerRegistry {
  readonly poolers: ReadonlyArray<PoolerRecord>;
}

export function readPoolers(layout: WorkDirLayout): PoolerRecord[] {
  if (!existsSync(layout.poolersFile)) return [];
  return [...(JSON.parse(readFileSync(layout.poolersFile, 'utf8')) as PoolerRegistry).poolers];
}

const LOCK_TIMEOUT_MS = 5000;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Runs `change` on the registry's records and saves what it returns, under the registry's lock (a file made
 * with O_EXCL holding the owner's pid; one whose owner is gone is taken over). Synchronous, so the lock is
 * held for a read, a spawn at most, and a rename. Returns the records as they were.
 */
export function updatePoolers(layout: WorkDirLayout, change: (records: PoolerRecord[]) => PoolerRecord[]): PoolerRecord[] {
  const lock = `${layout.poolersFile}.lock`;
  const deadline = Date.now() + LOCK_TIMEOUT_MS;
  for (;;) {
    try {
      const fd = openSync(lock, 'wx', 0o644);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let owner = 0;
      try {
        owner = Number(readFileSync(lock, 'utf8')) || 0;
      } catch {
        continue; // Released in between.
      }
      // An owner that died with the lock held: take it over (the registry itself is only ever renamed into place).
      if (owner > 0 && !isAlive(owner)) rmSync(lock, { force: true });
      else if (Date.now() > deadline) throw new Error(`the pooler registry ${layout.poolersFile} stayed locked by pid ${owner} for ${LOCK_TIMEOUT_MS} ms`);
      else Atomics.wait(pause, 0, 0, 2);
    }
  }
  try {
    const before = readPoolers(layout);
    writeAtomic(layout.poolersFile, `${JSON.stringify({ poolers: change([...before]) } satisfies PoolerRegistry, null, 2)}\n`, 0o644);
    return before;
  } finally {
    rmSync(lock, { force: true });
  }
}

/** What a rehearsal tracks: the state's processes, then the PgBouncer processes of the registry. */
export function trackedProcesses(layout: WorkDirLayout, state: RehearsalState): TrackedProcess[] {
  const listed = new Set(state.processes.map((p) => p.pid));
  return [...state.processes, ...readPoolers(layout).map((r) => r.process).filter((p) => !listed.has(p.pid))];
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
