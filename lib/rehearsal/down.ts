/**
 * `down`: stops every tracked process by pid (newest first, with its process group), checks that
 * nothing is left, and removes the data (logs stay for a post-mortem). Idempotent: a second `down`,
 * or one in a work dir with no rehearsal, stops nothing and says so instead of failing, so scripts
 * and teardown stages can always call it.
 */
import { existsSync, rmSync } from 'node:fs';
import { RehearsalOperationError } from './errors';
import { removeNodeBudgets } from './cpu-budgets';
import { WorkDirLayout } from './layout';
import { rehearsalNetwork } from './network/rehearsal-network';
import { groupMembers, isOurs, readProcesses, stopProcess, type TrackedProcess } from './processes';
import { readState, type RehearsalState } from './state';

export interface DownReport {
  readonly workDir: string;
  /** Names of the tracked processes that were running and were stopped, in start order. */
  readonly stopped: ReadonlyArray<string>;
  /** Whether the work dir held a state file (false: no work dir, never started there, or already down). */
  readonly hadState: boolean;
}

/** Running = still the program it was started as, or its group still has members (orphaned children). */
function isRunning(proc: TrackedProcess): boolean {
  return isOurs(proc) || groupMembers(proc.pid).length > 0;
}

/**
 * Stops the processes: the supervisor first (with its group, the checker; it would restart the PgBouncer
 * processes meanwhile), then the rest newest first; returns the pids that survived SIGKILL (none on success).
 */
export async function stopTracked(processes: ReadonlyArray<TrackedProcess>): Promise<number[]> {
  const leftover: number[] = [];
  const watchers = processes.filter((p) => p.kind === 'health-supervisor');
  for (const proc of [...watchers, ...[...processes].reverse().filter((p) => !watchers.includes(p))]) leftover.push(...(await stopProcess(proc)));
  return leftover;
}


/** Stops what `state` tracks and removes the work dir's data; `state` undefined = nothing to stop. */
export async function downState(layout: WorkDirLayout, state: RehearsalState | undefined): Promise<DownReport> {
  const hadState = existsSync(layout.stateFile);
  if (state === undefined) return { workDir: layout.workDir, stopped: [], hadState };
  const processes = readProcesses(layout.processesFile);
  const running = processes.filter(isRunning).map((p) => p.name);
  const leftover = await stopTracked(processes);
  const stillRunning = processes.filter(isRunning);
  if (leftover.length > 0 || stillRunning.length > 0) {
    throw new RehearsalOperationError(`down: processes still running after SIGKILL: ${[...new Set([...leftover, ...stillRunning.map((p) => p.pid)])].join(', ')}`);
  }
  // Only once no server is left in them: namespaces and links go the way the processes went.
  // A state file from before settings were recorded (or a hand-made one) has no network to remove.
  const settings = state.settings as RehearsalState['settings'] | undefined;
  if (settings !== undefined) {
    await rehearsalNetwork(settings, state.deployment).tearDown();
    removeNodeBudgets(settings);
  }
  for (const path of layout.disposable) rmSync(path, { recursive: true, force: true });
  return { workDir: layout.workDir, stopped: running, hadState };
}

/** `down` for a work dir, whatever it holds: a running rehearsal, a stopped one, or nothing. */
export function downWorkDir(workDir: string): Promise<DownReport> {
  const layout = new WorkDirLayout(workDir);
  return downState(layout, readState(layout.workDir));
}

/** What `rehearse down` prints. */
export function formatDownReport(report: DownReport): string {
  if (report.stopped.length > 0) return `stopped ${report.stopped.join(', ')}; nothing left running`;
  return report.hadState
    ? `nothing to stop in ${report.workDir}: no process of its rehearsal was running (its state and data are removed)`
    : `nothing to stop in ${report.workDir}: no rehearsal there`;
}
