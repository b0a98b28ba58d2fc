/**
 * Keeps the health checker running. Without it nothing re-points the endpoints after a failure, so a
 * checker that crashed (or was killed) would leave the rehearsal silently unhealed. This small process
 * (spawned by Rehearsal.up, tracked by pid, stopped by down) runs the checker as its child, in its own
 * process group so stopping the supervisor's group stops the checker too, and restarts it when it exits:
 * - after a backoff that doubles with each quick exit (one within `stableAfterMs` of its start),
 *   from `initialDelayMs` up to `maxDelayMs`;
 * - a crash loop is bounded: after `maxQuickExits` quick exits in a row it gives up and exits.
 * Every exit, restart and the give-up go to its log and to the supervisor file, which `status` reads
 * (with the health file, it tells a fresh checker from a stale one).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { WorkDirLayout } from './layout';
import { cleanEnv, spawnDaemon, type TrackedProcess } from './processes';
import { writeAtomic } from './state';

export interface RestartPolicy {
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  /** A checker that ran at least this long before exiting was not crash-looping. */
  readonly stableAfterMs: number;
  /** Quick exits in a row tolerated; one more and the supervisor gives up. */
  readonly maxQuickExits: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = { initialDelayMs: 200, maxDelayMs: 5000, stableAfterMs: 30000, maxQuickExits: 8 };

/** Delay before the next start after `quickExits` quick exits in a row (0 = the last run was stable); undefined = give up. */
export function restartDelay(policy: RestartPolicy, quickExits: number): number | undefined {
  if (quickExits > policy.maxQuickExits) return undefined;
  return Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.max(0, quickExits - 1));
}

/** What the supervisor last did; written by it to WorkDirLayout.healthSupervisorFile. */
export interface SupervisorReport {
  readonly pid: number;
  /** The running checker's pid (undefined between an exit and the restart, and after giving up). */
  readonly checkerPid: number | undefined;
  readonly restarts: number;
  readonly lastExit?: { readonly at: string; readonly pid: number; readonly code: number | null; readonly signal: string | null; readonly ranMs: number };
  /** Why it stopped restarting (a crash loop); absent while it supervises. */
  readonly gaveUp?: string;
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

/**
 * Spawns the supervisor as a tracked daemon (its own process group: the checker it starts joins it).
 * `maxQuickExits` overrides the policy's crash-loop bound.
 */
export function launchHealthSupervisor(layout: WorkDirLayout, intervalMs: number, maxQuickExits?: number): TrackedProcess {
  const { program, args, env } = nodeScriptCommand(require.resolve('./health-supervisor'));
  const extra = maxQuickExits === undefined ? [] : [String(maxQuickExits)];
  return spawnDaemon({ name: 'health-supervisor', kind: 'health-supervisor', program, args: [...args, layout.workDir, String(intervalMs), ...extra], logFile: layout.healthSupervisorLog, cwd: layout.workDir, env: cleanEnv(env) });
}

export class HealthSupervisor {
  private child: ChildProcess | undefined;
  private childStartedAt = 0;
  private quickExits = 0;
  private restarts = 0;
  private lastExit: SupervisorReport['lastExit'];
  private restartTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private readonly layout: WorkDirLayout;

  constructor(
    workDir: string,
    private readonly intervalMs: number,
    private readonly policy: RestartPolicy = DEFAULT_RESTART_POLICY,
    private readonly onGiveUp: () => void = () => process.exit(1),
  ) {
    this.layout = new WorkDirLayout(workDir);
  }

  private log(line: string): void {
    process.stdout.write(`${new Date().toISOString()} ${line}\n`);
  }

  private report(gaveUp?: string): void {
    const report: SupervisorReport = { pid: process.pid, checkerPid: this.child?.pid, restarts: this.restarts, ...(this.lastExit ? { lastExit: this.lastExit } : {}), ...(gaveUp ? { gaveUp } : {}) };
    writeAtomic(this.layout.healthSupervisorFile, `${JSON.stringify(report, null, 2)}\n`, 0o644);
  }

  start(): void {
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
    this.quickExits = ranMs < this.policy.stableAfterMs ? this.quickExits + 1 : 0;
    const how = signal !== null ? `signal ${signal}` : `code ${code}`;
    const delay = restartDelay(this.policy, this.quickExits);
    if (delay === undefined) {
      const why = `${this.quickExits} quick exits in a row (each within ${this.policy.stableAfterMs} ms of its start), the last with ${how}`;
      this.log(`health checker pid ${child.pid} exited (${how}) after ${ranMs} ms; giving up: ${why}. Nothing re-points the endpoints now; see ${this.layout.healthCheckerLog}`);
      this.report(why);
      this.onGiveUp();
      return;
    }
    this.log(`health checker pid ${child.pid} exited (${how}) after ${ranMs} ms; restart ${this.restarts + 1} in ${delay} ms`);
    this.report();
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.stopping) return;
      this.restarts++;
      this.start();
    }, delay);
  }

  /** Stops the checker (SIGTERM, SIGKILL after `graceMs`) and resolves once it has exited. */
  stop(graceMs = 3000): Promise<void> {
    this.stopping = true;
    if (this.restartTimer !== undefined) clearTimeout(this.restartTimer);
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

/** Entry point: `node health-supervisor.js <workDir> <intervalMs> [maxQuickExits]`. */
export function main(argv: string[]): void {
  const [workDir, interval, maxQuickExits] = argv;
  if (workDir === undefined) throw new Error('usage: health-supervisor <workDir> [intervalMs] [maxQuickExits]');
  const policy = maxQuickExits === undefined ? DEFAULT_RESTART_POLICY : { ...DEFAULT_RESTART_POLICY, maxQuickExits: Number(maxQuickExits) };
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
