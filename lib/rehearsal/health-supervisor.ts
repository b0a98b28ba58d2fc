/**
 * The rehearsal's systemd: one process (spawned by `up`, stopped first by `down`) keeping the health checker (its
 * child, in its process group) and every PgBouncer process of the process table (detached: polled, no SIGCHLD)
 * running by the PgBouncer engine host units' restart policy (pgbouncer-host-units.ts): a child that is gone
 * starts again after RestartSec=; one past its start limit stays failed while the others are kept (no host to
 * power off here). Exits, restarts and failures go to its log and to the file `status` reads.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { extname, join } from 'node:path';
import { FLEET_RESTART_SECONDS, FLEET_START_LIMIT } from '../model/pgbouncer-host-units';
import { WorkDirLayout } from './layout';
import { serverOsUser } from './os-user';
import { readPoolers, restartListed } from './poolers';
import { cleanEnv, isOurs, spawnDaemon, type TrackedProcess } from './processes';
import { readJsonFile, readState, writeAtomic } from './state';

/** systemd's RestartSec= and start limit, as a PgBouncer engine host's units set them. */
export interface RestartPolicy {
  readonly restartDelayMs: number;
  readonly startLimitIntervalMs: number;
  /** Starts allowed within the interval; the next one fails the unit. */
  readonly startLimitBurst: number;
}

export const UNIT_RESTART_POLICY: RestartPolicy = { restartDelayMs: FLEET_RESTART_SECONDS * 1000, startLimitIntervalMs: FLEET_START_LIMIT.intervalSeconds * 1000, startLimitBurst: FLEET_START_LIMIT.burst };

/** A start limit other than the units' (a test's). */
export type StartLimitOverride = Pick<RestartPolicy, 'startLimitBurst' | 'startLimitIntervalMs'>;

/** How often the children are looked at. */
const POLL_MS = 100;
/** The checker's name among the supervised children (the PgBouncer processes go by theirs). */
export const CHECKER_UNIT = 'health-checker';

/** systemd's start rate limit: a window opens at a start and counts starts until it has passed. */
export class StartLimit {
  private windowStart = -Infinity;
  private starts = 0;

  constructor(private readonly policy: RestartPolicy) {}

  /** Counts a start at `now`; false when it would pass the limit (the unit has failed). */
  allow(now: number): boolean {
    if (now - this.windowStart >= this.policy.startLimitIntervalMs) [this.windowStart, this.starts] = [now, 0];
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
  /** The running checker's pid (undefined between an exit and the restart, and once failed). */
  readonly checkerPid: number | undefined;
  /** Times the checker was started again. */
  readonly restarts: number;
  /** Times a PgBouncer process was started again. */
  readonly poolerRestarts?: number;
  /** Children past their start limit, by name (CHECKER_UNIT or a PgBouncer process's), with why. */
  readonly failed?: Readonly<Record<string, string>>;
}

export const readSupervisorReport = (path: string): SupervisorReport | undefined => readJsonFile<SupervisorReport>(path);

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

/** Spawns the supervisor as a tracked daemon (its own process group: the checker it starts joins it). */
export function launchHealthSupervisor(layout: WorkDirLayout, intervalMs: number, limit?: StartLimitOverride): TrackedProcess {
  const { program, args, env } = nodeScriptCommand(require.resolve('./health-supervisor'));
  const extra = limit === undefined ? [] : [String(limit.startLimitBurst), String(limit.startLimitIntervalMs)];
  return spawnDaemon({ name: 'health-supervisor', kind: 'health-supervisor', program, args: [...args, layout.workDir, String(intervalMs), ...extra], logFile: layout.healthSupervisorLog, cwd: layout.workDir, env: cleanEnv(env) });
}

/** A supervised child: its start limit, a pending restart, restarts done, why it failed. */
interface Unit {
  readonly limit: StartLimit;
  timer?: NodeJS.Timeout;
  restarts: number;
  failed?: string;
}

export class HealthSupervisor {
  private checker: ChildProcess | undefined;
  private checkerExit = '';
  private readonly units = new Map<string, Unit>();
  private poolerRestarts = 0;
  private readonly layout: WorkDirLayout;

  constructor(
    workDir: string,
    private readonly intervalMs: number,
    private readonly policy: RestartPolicy = UNIT_RESTART_POLICY,
  ) {
    this.layout = new WorkDirLayout(workDir);
  }

  private log(line: string): void {
    process.stdout.write(`${new Date().toISOString()} ${line}\n`);
  }

  private report(): void {
    const failed = Object.fromEntries([...this.units].filter(([, u]) => u.failed !== undefined).map(([name, u]) => [name, u.failed!]));
    const report: SupervisorReport = {
      pid: process.pid,
      checkerPid: this.checker?.pid,
      restarts: this.units.get(CHECKER_UNIT)?.restarts ?? 0,
      poolerRestarts: this.poolerRestarts,
      ...(Object.keys(failed).length > 0 ? { failed } : {}),
    };
    writeAtomic(this.layout.healthSupervisorFile, `${JSON.stringify(report, null, 2)}\n`, 0o644);
  }

  private unit(name: string): Unit {
    let unit = this.units.get(name);
    if (unit === undefined) {
      // Its first start (by `up` or the checker for a PgBouncer process) counts against its limit.
      unit = { limit: new StartLimit(this.policy), restarts: 0 };
      unit.limit.allow(Date.now());
      this.units.set(name, unit);
    }
    return unit;
  }

  start(): void {
    this.unit(CHECKER_UNIT);
    this.startChecker();
    this.poll();
  }

  private startChecker(): void {
    const { program, args, env } = nodeScriptCommand(require.resolve('./health-checker'));
    const logFd = openSync(this.layout.healthCheckerLog, 'a');
    try {
      // Not detached: the checker stays in the supervisor's process group.
      const child = spawn(program, [...args, this.layout.workDir, String(this.intervalMs)], { cwd: this.layout.workDir, env: { ...process.env, ...env }, stdio: ['ignore', logFd, logFd] });
      const startedAt = Date.now();
      const exited = (how: string): void => {
        if (this.checker !== child) return;
        this.checker = undefined;
        this.checkerExit = `health checker pid ${child.pid} exited (${how}) after ${Date.now() - startedAt} ms`;
      };
      child.on('error', (err) => exited(`could not start: ${err.message}`));
      child.on('exit', (code, signal) => exited(signal !== null ? `signal ${signal}` : `code ${code}`));
      this.checker = child;
    } finally {
      closeSync(logFd);
    }
    this.log(`health checker started, pid ${this.checker?.pid ?? '?'}`);
    this.report();
  }

  /** Every child that is gone gets its restart scheduled, by the one policy. */
  private poll(): void {
    try {
      if (this.checker === undefined) this.restartLater(CHECKER_UNIT, this.checkerExit, () => this.startChecker());
      const listed = readPoolers(this.layout);
      for (const name of this.units.keys()) {
        // Its group was stopped (the checker took it out of the table): nothing to keep running.
        if (name !== CHECKER_UNIT && !listed.some((p) => p.name === name)) {
          clearTimeout(this.units.get(name)!.timer);
          this.units.delete(name);
        }
      }
      for (const p of listed) {
        if (isOurs(p)) this.unit(p.name);
        else this.restartLater(p.name, `${p.name} pid ${p.pid} is gone`, () => this.startPooler(p.pid, p.name));
      }
    } catch (err) {
      this.log(`supervision round failed: ${(err as Error).message}`);
    }
    setTimeout(() => this.poll(), POLL_MS);
  }

  private restartLater(name: string, exit: string, start: () => void): void {
    const unit = this.unit(name);
    if (unit.timer !== undefined || unit.failed !== undefined) return;
    this.log(`${exit}; restart ${unit.restarts + 1} in ${this.policy.restartDelayMs} ms`);
    unit.timer = setTimeout(() => {
      unit.timer = undefined;
      if (this.units.get(name) !== unit) return;
      if (unit.limit.allow(Date.now())) {
        unit.restarts++;
        try {
          start();
        } catch (err) {
          // Still gone: the next poll schedules it again, within the start limit.
          this.log(`${name} could not start: ${(err as Error).message}`);
        }
      } else {
        unit.failed = `${unit.limit.describe()}, the last: ${exit}`;
        this.log(`${name}: giving up: ${unit.failed}`);
      }
      this.report();
    }, this.policy.restartDelayMs);
  }

  /** Starts a PgBouncer process again with its own ini, if the table still lists it with the pid that is gone. */
  private startPooler(pid: number, name: string): void {
    const state = readState(this.layout.workDir);
    if (state === undefined) throw new Error(`no rehearsal state in ${this.layout.workDir}`);
    const started = restartListed(this.layout, state.pgbouncer, serverOsUser(), pid);
    if (started === undefined) return;
    this.poolerRestarts++;
    this.log(`${name} started again, pid ${started.pid}`);
  }

  /** Stops with the checker (SIGTERM's default ends it at once); the PgBouncer processes are `down`'s, after the supervisor. */
  stop(): never {
    this.checker?.kill('SIGTERM');
    process.exit(0);
  }
}

/** Entry point: `node health-supervisor.js <workDir> <intervalMs> [startLimitBurst startLimitIntervalMs]`. */
export function main(argv: string[]): void {
  const [workDir, interval, burst, window] = argv;
  if (workDir === undefined) throw new Error('usage: health-supervisor <workDir> [intervalMs] [startLimitBurst startLimitIntervalMs]');
  const policy = burst === undefined || window === undefined ? UNIT_RESTART_POLICY : { ...UNIT_RESTART_POLICY, startLimitBurst: Number(burst), startLimitIntervalMs: Number(window) };
  const supervisor = new HealthSupervisor(workDir, Number(interval ?? 500), policy);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => supervisor.stop());
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
