/**
 * Is the health checker actually watching? Its report says what it saw, not that it still looks: a
 * checker that died leaves its last report behind, which would read as healthy. So `status` judges the
 * report: stale when older than a few intervals, or when the pid that wrote it is no longer a running
 * health checker; and it says what the supervisor did (restarts, giving up, on the checker and the PgBouncer processes).
 */
import { CHECKER_UNIT, readSupervisorReport, type SupervisorReport } from './health-supervisor';
import { isAlive, isOurs } from './processes';
import type { RunningRehearsal } from './running';
import type { HealthReport } from './state';
import type { HealthCheckerStatus } from './types';

/** A round is one interval apart; four missed ones is no jitter any more. */
export const HEALTH_STALE_AFTER_INTERVALS = 4;
/** What one round may take on top (a probe of a hung node times out after 1 s; then a RELOAD). */
export const HEALTH_ROUND_ALLOWANCE_MS = 2000;

export function healthStaleAfterMs(intervalMs: number): number {
  return HEALTH_STALE_AFTER_INTERVALS * intervalMs + HEALTH_ROUND_ALLOWANCE_MS;
}

export interface HealthEvidence {
  readonly report: HealthReport | undefined;
  readonly supervisor: SupervisorReport | undefined;
  readonly supervisorRunning: boolean;
  /** Whether `pid` is a running health checker of this rehearsal. */
  readonly checkerRunning: (pid: number) => boolean;
  readonly intervalMs: number;
  readonly now: number;
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** The verdict on the health checker from what the files and /proc say. */
export function assessHealthChecker(e: HealthEvidence): HealthCheckerStatus {
  const staleAfterMs = healthStaleAfterMs(e.intervalMs);
  const problems: string[] = [];
  const ageMs = e.report === undefined ? undefined : Math.max(0, e.now - Date.parse(e.report.checkedAt));
  if (e.report === undefined) problems.push('no health report yet');
  else {
    if (ageMs! > staleAfterMs) problems.push(`last report ${seconds(ageMs!)} old (stale after ${seconds(staleAfterMs)})`);
    if (!e.checkerRunning(e.report.pid)) problems.push(`checker pid ${e.report.pid} that wrote it is not running`);
  }
  const state: HealthCheckerStatus['state'] = e.report === undefined ? 'missing' : problems.length > 0 ? 'stale' : 'fresh';
  if (!e.supervisorRunning) problems.push('the supervisor is not running: nothing restarts the checker if it exits');
  for (const [name, why] of Object.entries(e.supervisor?.failed ?? {})) problems.push(`the supervisor gave up restarting ${name === CHECKER_UNIT ? 'it' : name}: ${why}`);
  return {
    state,
    ...(problems.length > 0 ? { problems } : {}),
    ...(ageMs === undefined ? {} : { reportAgeMs: ageMs }),
    staleAfterMs,
    ...(e.report === undefined ? {} : { checkerPid: e.report.pid }),
    ...(e.supervisor === undefined ? {} : { supervisorPid: e.supervisor.pid }),
    supervisorRunning: e.supervisorRunning,
    restarts: e.supervisor?.restarts ?? 0,
    poolerRestarts: e.supervisor?.poolerRestarts ?? 0,
  };
}

export function healthCheckerStatus(run: RunningRehearsal, now = Date.now()): HealthCheckerStatus {
  const supervisorProc = [...run.allProcesses()].reverse().find((p) => p.kind === 'health-supervisor');
  const supervisor = readSupervisorReport(run.layout.healthSupervisorFile);
  return assessHealthChecker({
    report: run.health(),
    supervisor,
    supervisorRunning: supervisorProc !== undefined && isOurs(supervisorProc),
    // The child the supervisor started and still has: a pid it no longer names is an exited checker's.
    checkerRunning: (pid) => supervisor?.checkerPid === pid && isAlive(pid),
    intervalMs: run.state.settings.healthCheckIntervalMs,
    now,
  });
}
