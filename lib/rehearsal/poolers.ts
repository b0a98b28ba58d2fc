/**
 * The PgBouncer processes of both endpoints ("pooler hosts"), as groups: an endpoint runs
 * `processesPerTarget` processes for each server it pools for (the read/write endpoint for the
 * writer, the read-only endpoint for each live replica), all on the endpoint's address:port.
 *
 * Which processes exist lives in the pooler registry (WorkDirLayout.poolersFile), not in state.json:
 * after `up`, the health checker is the one that starts a group for a replica that joined, stops the
 * group of one that died, and restarts a process that crashed, each tracked by pid at once. `down`
 * and `status` read the registry alongside the state.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { PgBouncerPaths, WorkDirLayout } from './layout';
import type { OsUser } from './os-user';
import { fleetProcessName } from '../model/pgbouncer-fleet-files';
import { PGBOUNCER_MAX_PEER_ID } from '../model/pgbouncer-ini';
import { endpointListener, launchPooler, reloadPooler, restartPooler, standInFiles, standInProcess, stopPooler, waitPoolerReady, writeStandInFiles, type PoolerLaunch } from './pgbouncer';
import { isOurs, type TrackedProcess } from './processes';
import type { Secrets } from './secrets';
import { writeAtomic, type PgBouncerEndpointSpec, type RehearsalState } from './state';

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

/** What a rehearsal tracks: the state's processes, then the PgBouncer processes of the registry. */
export function trackedProcesses(layout: WorkDirLayout, state: RehearsalState): TrackedProcess[] {
  const listed = new Set(state.processes.map((p) => p.pid));
  return [...state.processes, ...readPoolers(layout).map((r) => r.process).filter((p) => !listed.has(p.pid))];
}

/** What managing the poolers needs; start.ts and the health checker build it from the state. */
export interface PoolerContext {
  readonly layout: WorkDirLayout;
  readonly endpoints: Readonly<Record<PoolerEndpoint, PgBouncerEndpointSpec>>;
  /** The PgBouncer 1.25.2 binary (binaries.ts). */
  readonly program: string;
  readonly secrets: Secrets;
  readonly user: OsUser | undefined;
  /** The pooler host's CPU budget (PgBouncerState.cgroupProcsFiles). */
  readonly cgroupProcsFiles: ReadonlyArray<string>;
}

/** The context from a rehearsal's state (start.ts and the health checker both build it so). */
export function poolerContext(state: RehearsalState, layout: WorkDirLayout, secrets: Secrets, user: OsUser | undefined): PoolerContext {
  return { layout, endpoints: { readWrite: state.pgbouncer.readWrite, readOnly: state.pgbouncer.readOnly }, program: state.pgbouncer.program, secrets, user, cgroupProcsFiles: state.pgbouncer.cgroupProcsFiles ?? [] };
}

export function poolerName(endpoint: PoolerEndpoint, peerId: number): string {
  return `pgbouncer-${endpoint === 'readWrite' ? 'rw' : 'ro'}-${peerId}`;
}

/** A process's files, by its name in the fleet model (its endpoint's listener, its peer id). */
export function poolerPaths(layout: WorkDirLayout, spec: PgBouncerEndpointSpec, peerId: number): PgBouncerPaths {
  return layout.pgbouncer(fleetProcessName({ listener: endpointListener(spec), peerId }));
}

/** Distinct values in first-seen order. */
const distinct = (values: ReadonlyArray<string>): string[] => [...new Set(values)];

export class Poolers {
  private records: PoolerRecord[];

  constructor(private readonly ctx: PoolerContext) {
    this.records = readPoolers(ctx.layout);
  }

  get all(): ReadonlyArray<PoolerRecord> {
    return this.records;
  }

  of(endpoint: PoolerEndpoint): PoolerRecord[] {
    return this.records.filter((r) => r.endpoint === endpoint);
  }

  /** The servers an endpoint pools for, in the order their groups started. */
  hosts(endpoint: PoolerEndpoint): string[] {
    return distinct(this.of(endpoint).map((r) => r.host));
  }

  private save(): void {
    writeAtomic(this.ctx.layout.poolersFile, `${JSON.stringify({ poolers: this.records } satisfies PoolerRegistry, null, 2)}\n`, 0o644);
  }

  private socketDir(endpoint: PoolerEndpoint, peerId: number): string {
    return poolerPaths(this.ctx.layout, this.ctx.endpoints[endpoint], peerId).socketDir;
  }

  private launchOf(record: Omit<PoolerRecord, 'process'>): PoolerLaunch {
    const paths = poolerPaths(this.ctx.layout, this.ctx.endpoints[record.endpoint], record.peerId);
    return { spec: this.ctx.endpoints[record.endpoint], paths, name: poolerName(record.endpoint, record.peerId), program: this.ctx.program, cwd: this.ctx.layout.pgbouncerDir, user: this.ctx.user, cgroupProcsFiles: this.ctx.cgroupProcsFiles };
  }

  private port(endpoint: PoolerEndpoint): number {
    return this.ctx.endpoints[endpoint].listenPort;
  }

  /** (Re)writes the endpoint's files from the records: its processes' pools, their [peers]. */
  private writeFiles(endpoint: PoolerEndpoint, records: ReadonlyArray<Omit<PoolerRecord, 'process'>> = this.of(endpoint)): void {
    const spec = this.ctx.endpoints[endpoint];
    const processes = records.map((r) => standInProcess(spec, r.peerId, r.host, r.slot));
    const writer = this.hosts('readWrite')[0] ?? records[0]?.host ?? spec.listenAddress;
    writeStandInFiles(this.ctx.layout.pgbouncerDir, standInFiles(spec, processes, this.ctx.layout.pgbouncerDir, { serverUser: this.ctx.secrets.readOnlyServerUser, writer }), this.ctx.user);
  }

  /** Rewrites the endpoint's files (host, peers) and RELOADs its live processes; all are tried. */
  private async refresh(endpoint: PoolerEndpoint, skip: ReadonlySet<number> = new Set()): Promise<void> {
    this.writeFiles(endpoint);
    const failures: string[] = [];
    for (const r of this.of(endpoint)) {
      // restartDead() starts a dead one with the new files.
      if (skip.has(r.peerId) || !isOurs(r.process)) continue;
      await reloadPooler(this.socketDir(endpoint, r.peerId), this.port(endpoint), this.ctx.secrets).catch((err: Error) => failures.push(`${r.process.name}: ${err.message}`));
    }
    if (failures.length > 0) throw new Error(`RELOAD failed: ${failures.join('; ')}`);
  }

  /** Starts `processesPerTarget` processes for `host` on the endpoint, then tells the others about their new peers. */
  async startGroup(endpoint: PoolerEndpoint, host: string, timeoutMs: number): Promise<void> {
    const count = this.ctx.endpoints[endpoint].processesPerTarget;
    const used = new Set(this.of(endpoint).map((r) => r.peerId));
    const fresh: Array<Omit<PoolerRecord, 'process'>> = [];
    for (let id = 1; fresh.length < count; id++) {
      if (id > PGBOUNCER_MAX_PEER_ID) throw new Error(`no free peer_id left on the ${endpoint} endpoint`);
      if (!used.has(id)) fresh.push({ endpoint, peerId: id, host, slot: fresh.length });
    }
    // The listener's [peers] names the whole endpoint, the new group included; the others RELOAD it below.
    this.writeFiles(endpoint, [...this.of(endpoint), ...fresh]);
    const started: PoolerRecord[] = [];
    try {
      for (const f of fresh) {
        const record = { ...f, process: launchPooler(this.launchOf(f)) };
        this.records.push(record);
        started.push(record);
        // Tracked by pid at once: whoever stops the rehearsal finds it even if this round dies here.
        this.save();
      }
      await Promise.all(started.map((r) => waitPoolerReady(r.process, this.socketDir(endpoint, r.peerId), this.port(endpoint), this.ctx.secrets, timeoutMs)));
    } catch (err) {
      await Promise.all(started.map((r) => stopPooler(r.process)));
      const ids = new Set(fresh.map((f) => f.peerId));
      this.records = this.records.filter((r) => !(r.endpoint === endpoint && ids.has(r.peerId)));
      this.save();
      this.writeFiles(endpoint);
      throw err;
    }
    await this.refresh(endpoint, new Set(fresh.map((f) => f.peerId)));
  }

  /** Stops the endpoint's group for `host` (a replica that died or became the writer). */
  async stopGroup(endpoint: PoolerEndpoint, host: string): Promise<void> {
    const group = this.of(endpoint).filter((r) => r.host === host);
    await Promise.all(group.map((r) => stopPooler(r.process)));
    this.records = this.records.filter((r) => !group.includes(r));
    this.save();
    await this.refresh(endpoint);
  }

  /** Points every process of the endpoint at `host` (the read/write endpoint after a failover). */
  async repoint(endpoint: PoolerEndpoint, host: string): Promise<void> {
    this.records = this.records.map((r) => (r.endpoint === endpoint ? { ...r, host } : r));
    this.save();
    await this.refresh(endpoint);
  }

  /** Restarts every process that is gone, with its own ini; returns their names. */
  async restartDead(timeoutMs = 5000): Promise<string[]> {
    const restarted: string[] = [];
    const failures: string[] = [];
    for (const r of [...this.records]) {
      if (isOurs(r.process)) continue;
      try {
        const launch = this.launchOf(r);
        // restartPooler tracks nothing itself: record the pid as soon as the process exists.
        const process = await restartPooler(launch, this.ctx.secrets, timeoutMs, (p) => this.replace(r, p));
        this.replace(r, process);
        restarted.push(r.process.name);
      } catch (err) {
        failures.push(`${r.process.name}: ${(err as Error).message}`);
      }
    }
    if (failures.length > 0) throw new Error(`restart failed: ${failures.join('; ')}`);
    return restarted;
  }

  private replace(old: PoolerRecord, process: TrackedProcess): void {
    this.records = this.records.map((r) => (r.endpoint === old.endpoint && r.peerId === old.peerId ? { ...r, process } : r));
    this.save();
  }

  /** Stops every process (a failed start); the registry keeps them listed as gone. */
  async stopAll(): Promise<number[]> {
    const leftover = await Promise.all(this.records.map((r) => stopPooler(r.process)));
    return leftover.flat();
  }
}
