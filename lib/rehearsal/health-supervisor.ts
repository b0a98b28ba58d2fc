/**
 * The rehearsal's stand-in for systemd: one small process (spawned by Rehearsal.up, tracked by pid, stopped
 * first by down) that keeps every supervised child alive by one restart policy, a PgBouncer engine host's
 * units' own (pgbouncer-host-units.ts: Restart=always, RestartSec=, the start limit):
 * - the health checker, its child in its process group (stopping the supervisor's group stops it too);
 * - every PgBouncer process of the pooler registry (poolers.ts), started detached by `up` or the checker,
 *   so their exits are seen by polling /proc rather than by SIGCHLD.
 * A child that exits is started again RESTART_SECONDS later; one started more than `burst` times within
 * `intervalSeconds` stays failed, as a unit past its start limit. The supervisor itself keeps running for the
 * others (no host to power off here). Every exit, restart and failure goes to its log and to the supervisor
 * file, which `status` reads (with the health file, it tells a fresh checker from a stale one).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { FLEET_RESTART_SECONDS, FLEET_START_LIMIT } from '../model/pgbouncer-host-units';
import { WorkDirLayout } from './layout';
import { serverOsUser } from './os-user';
import { readPoolers, restartListed, type PoolerRecord } from './poolers';
import { cleanEnv, isOurs, spawnDaemon, type TrackedProcess } from './processes';
import { readState, writeAtomic } from './state';

/** systemd's RestartSec= and start limit, as a PgBouncer engine host's units set them. */
export interface RestartPolicy {
  readonly restartDelayMs: number;
  readonly startLimitIntervalMs: number;
  /** Starts allowed within the interval; the next one fails the unit. */
  readonly startLimitBurst: number;
}

export const UNIT_RESTART_POLICY: RestartPolicy = { restartDelayMs: FLEET_RESTART_SECONDS * 1000, startLimitIntervalMs: FLEET_START_LIMIT.intervalSeconds * 1000, startLimitBurst: FLEET_START_LIMIT.burst };

/** How often the PgBouncer processes are looked at: they are not the supervisor's children, so no SIGCHLD tells it. */
export const POOLER_POLL_MS = 100;

/** systemd's start rate limit: a window opens at a start and counts starts until it has passed. */
export class StartLimit {
  private windowStart: number | undefined;
  private starts = 0;

  constructor(private readonly policy: RestartPolicy) {}

  /** Counts a start at `now`; false when it would pass the limit (the unit has failed). */
  allow(now: number): boolean {
    if (this.windowStart === undefined || now - this.windowStart >= this.policy.startLimitIntervalMs) {
      this.windowStart = now;
      this.starts = 0;
    }
    if (this.starts >= this.policy.startLimitBurst) return false;
    this.starts++;
    return true;
  }

  describe(): string {
    return `start limit hit: ${this.policy.startLimitBurst} starts within ${this.policy.startLimitIntervalMs / 1000} s`;
  }
}

/** What the supervisor last did; written by it to WorkDirLayout.healthSupervisorFile. */
export interface SupervisorReport {
  readonly pid: number;
  /** The running checker's pid (undefined between an exit and the restart, and after giving up). */
  readonly checkerPid: number | undefined;
  /** Times the checker was started again. */
  readonly restarts: number;
  readonly lastExit?: { readonly at: string; readonly pid: number; readonly code: number | null; readonly signal: string | null; readonly ranMs: number };
  /** Why it stopped restarting the checker (its start limit); absent while it supervises it. */
  readonly gaveUp?: string;
  /** Times a PgBouncer process was started again. */
  readonly poolerRestarts?: number;
  /** PgBouncer processes past their start limit, by name, with why. */
  readonly failedPoolers?: Readonly<Record<string, string>>;
}

export function readSupervisorReport(path: string): SupervisorReport | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as SupervisorReport;
  } catch {
    return undefined;
  }
}

/** How a script of the kit runs as its own node process: compiled JS as is, TypeScript through ts-node. */
export function nodeScriptCommand(script: string): { program: string; args: string[]; env: Record<string, string> } {
  if (extname(script) !== '.ts') return { program: process.execPath, args: [script], env: {} };
  // ts-node looks for tsconfig.json from the working directory (the work dir): point it at the kit's.
  return {
    program: process.execPath,
    args: ['-r', require.resolve('ts-node/register/transpile-only'), script],
    env: { TS_NODE_PROJECT: join(__dirname, '..', '..', 'tsconfig.json'), TS_NODE_TRANSPILE_ONLY: 'true' },
  };
}

/** A start limit other than the units' (a test's). */
export type StartLimitOverride = Pick<RestartPolicy, 'startLimitBurst' | 'startLimitIntervalMs'>;

/** Spawns the supervisor as a tracked daemon (its own process group: the checker it starts joins it). */
export function launchHealthSupervisor(layout: WorkDirLayout, intervalMs: number, limit?: StartLimitOverride): TrackedProcess {
  const { program, args, env } = nodeScriptCommand(require.resolve('./health-supervisor'));
  const extra = limit === undefined ? [] : [String(limit.startLimitBurst), String(limit.startLimitIntervalMs)];
  return spawnDaemon({ name: 'health-supervisor', kind: 'health-supervisor', program, args: [...args, layout.workDir, String(intervalMs), ...extra], logFile: layout.healthSupervisorLog, cwd: layout.workDir, env: cleanEnv(env) });
}

/** A supervised PgBouncer process: its start limit, a restart pending, or its failure. */
interface PoolerUnit {
  readonly limit: StartLimit;
  timer?: NodeJS.Timeout;
  failed?: string;
}

export class HealthSupervisor {
  private child: ChildProcess | undefined;
  private childStartedAt = 0;
  private restarts = 0;
  private lastExit: SupervisorReport['lastExit'];
  private gaveUp: string | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private readonly checkerLimit: StartLimit;
  private readonly poolers = new Map<string, PoolerUnit>();
  private poolerRestarts = 0;
  private readonly layout: WorkDirLayout;

  constructor(
    workDir: string,
    private readonly intervalMs: number,
    private readonly policy: RestartPolicy = UNIT_RESTART_POLICY,
  ) {
    this.layout = new WorkDirLayout(workDir);
    this.checkerLimit = new StartLimit(policy);
  }

  private log(line: string): void {
    process.stdout.write(`${new Date().toISOString()} ${line}\n`);
  }

  private report(): void {
    const failedPoolers = Object.fromEntries([...this.poolers].filter(([, u]) => u.failed !== undefined).map(([name, u]) => [name, u.failed!]));
    const report: SupervisorReport = {
      pid: process.pid,
      checkerPid: this.child?.pid,
      restarts: this.restarts,
      ...(this.lastExit ? { lastExit: this.lastExit } : {}),
      ...(this.gaveUp ? { gaveUp: this.gaveUp } : {}),
      poolerRestarts: this.poolerRestarts,
      ...(Object.keys(failedPoolers).length > 0 ? { failedPoolers } : {}),
    };
    writeAtomic(this.layout.healthSupervisorFile, `${JSON.stringify(report, null, 2)}\n`, 0o644);
  }

  start(): void {
    this.startChecker();
    this.pollPoolers();
  }

  private startChecker(again = false): void {
    if (!this.checkerLimit.allow(Date.now())) {
      const how = this.lastExit === undefined ? '' : `, the last exit with ${this.lastExit.signal !== null ? `signal ${this.lastExit.signal}` : `code ${this.lastExit.code}`}`;
      this.gaveUp = `${this.checkerLimit.describe()}${how}`;
      this.log(`health checker: giving up: ${this.gaveUp}. Nothing re-points the endpoints now; see ${this.layout.healthCheckerLog}`);
      this.report();
      return;
    }
    if (again) this.restarts++;
    const { program, args, env } = nodeScriptCommand(require.resolve('./health-checker'));
    const logFd = openSync(this.layout.healthCheckerLog, 'a');
    try {
      // Not detached: the checker stays in the supervisor's process group.
      const child = spawn(program, [...args, this.layout.workDir, String(this.intervalMs)], { cwd: this.layout.workDir, env: { ...process.env, ...env }, stdio: ['ignore', logFd, logFd] });
      this.child = child;
      this.childStartedAt = Date.now();
      child.on('error', (err) => {
        this.log(`health checker could not start: ${err.message}`);
        this.exited(child, null, null);
      });
      child.on('exit', (code, signal) => this.exited(child, code, signal));
    } finally {
      closeSync(logFd);
    }
    this.log(`health checker started, pid ${this.child?.pid ?? '?'}`);
    this.report();
  }

  private exited(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child !== child) return;
    this.child = undefined;
    const ranMs = Date.now() - this.childStartedAt;
    this.lastExit = { at: new Date().toISOString(), pid: child.pid ?? -1, code, signal, ranMs };
    if (this.stopping) return;
    const how = signal !== null ? `signal ${signal}` : `code ${code}`;
    this.log(`health checker pid ${child.pid} exited (${how}) after ${ranMs} ms; restart ${this.restarts + 1} in ${this.policy.restartDelayMs} ms`);
    this.report();
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (!this.stopping) this.startChecker(true);
    }, this.policy.restartDelayMs);
  }

  /** Looks at every listed PgBouncer process; one that is gone is started again after the delay. */
  private pollPoolers(): void {
    if (this.stopping) return;
    try {
      const listed = readPoolers(this.layout);
      const names = new Set(listed.map((r) => r.process.name));
      for (const [name, unit] of this.poolers) {
        // Its group was stopped (the checker took it out of the registry): nothing to keep alive.
        if (!names.has(name)) {
          clearTimeout(unit.timer);
          this.poolers.delete(name);
        }
      }
      for (const record of listed) this.watch(record);
    } catch (err) {
      this.log(`pooler registry unreadable: ${(err as Error).message}`);
    }
    this.pollTimer = setTimeout(() => this.pollPoolers(), POOLER_POLL_MS);
  }

  private watch(record: PoolerRecord): void {
    const name = record.process.name;
    let unit = this.poolers.get(name);
    if (unit === undefined) {
      // Started by `up` or the checker: that start counts against its limit.
      unit = { limit: new StartLimit(this.policy) };
      unit.limit.allow(Date.now());
      this.poolers.set(name, unit);
    }
    if (unit.timer !== undefined || unit.failed !== undefined || isOurs(record.process)) return;
    this.log(`${name} pid ${record.process.pid} is gone; restart in ${this.policy.restartDelayMs} ms`);
    const pending = unit;
    pending.timer = setTimeout(() => {
      pending.timer = undefined;
      if (this.stopping || this.poolers.get(name) !== pending) return;
      if (!pending.limit.allow(Date.now())) {
        pending.failed = `${pending.limit.describe()}; see ${record.process.logFile}`;
        this.log(`${name}: giving up: ${pending.failed}`);
        this.report();
        return;
      }
      try {
        const state = readState(this.layout.workDir);
        if (state === undefined) throw new Error(`no rehearsal state in ${this.layout.workDir}`);
        const started = restartListed(this.layout, state.pgbouncer, serverOsUser(), record);
        if (started === undefined) return;
        this.poolerRestarts++;
        this.log(`${name} started again, pid ${started.pid}`);
      } catch (err) {
        // Still listed as gone: the next poll tries again, within the start limit.
        this.log(`${name} could not start: ${(err as Error).message}`);
      }
      this.report();
    }, this.policy.restartDelayMs);
  }

  /** Stops the checker (SIGTERM, SIGKILL after `graceMs`) and resolves once it has exited; the PgBouncer processes are `down`'s. */
  stop(graceMs = 3000): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    clearTimeout(this.pollTimer);
    for (const unit of this.poolers.values()) clearTimeout(unit.timer);
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
      child.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      child.kill('SIGTERM');
    });
  }
}

/** Entry point: `node health-supervisor.js <workDir> <intervalMs> [startLimitBurst startLimitIntervalMs]`. */
export function main(argv: string[]): void {
  const [workDir, interval, burst, window] = argv;
  if (workDir === undefined) throw new Error('usage: health-supervisor <workDir> [intervalMs] [startLimitBurst startLimitIntervalMs]');
  const policy = burst === undefined || window === undefined ? UNIT_RESTART_POLICY : { ...UNIT_RESTART_POLICY, startLimitBurst: Number(burst), startLimitIntervalMs: Number(window) };
  const supervisor = new HealthSupervisor(workDir, Number(interval ?? 500), policy);
  const stop = (): void => {
    void supervisor.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  supervisor.start();
}

if (require.main === module) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`health supervisor: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  }
}
