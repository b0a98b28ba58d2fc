/**
 * The rehearsal's stand-in for systemd's `Restart=always` with the engine's start limit
 * (FLEET_RESTART_SECONDS, FLEET_START_LIMIT of pgbouncer-host-units.ts): a bash loop that runs a program,
 * runs it again RestartSec after each exit, and gives up, as systemd marks the unit failed, when the
 * program was started `burst` times within `intervalSeconds` and exits once more. A stop signal to the
 * loop is passed on to the program, which the loop waits for before it exits.
 */
import { FLEET_RESTART_SECONDS, FLEET_START_LIMIT } from '../model/pgbouncer-host-units';

export interface RestartPolicy {
  /** Seconds between an exit and the next start (RestartSec). */
  readonly restartSeconds: number;
  /** StartLimitIntervalSec. */
  readonly intervalSeconds: number;
  /** StartLimitBurst. */
  readonly burst: number;
}

/** The PgBouncer units' policy. */
export const FLEET_RESTART_POLICY: RestartPolicy = { restartSeconds: FLEET_RESTART_SECONDS, ...FLEET_START_LIMIT };
/** The agent's unit: StartLimitIntervalSec=0, no limit. */
export const UNLIMITED_RESTART_POLICY: RestartPolicy = { restartSeconds: FLEET_RESTART_SECONDS, intervalSeconds: 0, burst: 0 };

/** Exit status of a loop that hit the start limit (systemd's unit state "failed", result "start-limit-hit"). */
export const START_LIMIT_HIT_EXIT = 3;

// Arguments ($0 on): name, stop signal, restart delay, interval, burst, program and its arguments. systemd's
// rate limit (ratelimit_below): a window opens at a start and lasts the interval; within it at most `burst`
// starts pass, and the next window opens at the first start after it. An interval of 0 turns the limit off.
// Microseconds from EPOCHREALTIME, in bash, without a date(1) per start.
const LOOP = [
  'name=$0 sig=$1 delay=$2 interval=$3 burst=$4; shift 4; begin=0 num=0',
  'trap \'kill -"$sig" "$child" 2>/dev/null; wait "$child"; exit 0\' INT TERM',
  'while :; do',
  '  now=${EPOCHREALTIME/./}',
  '  if (( interval > 0 )); then',
  '    if (( begin == 0 || now - begin > interval * 1000000 )); then begin=$now num=0; fi',
  '    if (( num >= burst )); then echo "$name: start request repeated too quickly ($num starts within ${interval} s), refusing to start" >&2; exit ' + String(START_LIMIT_HIT_EXIT) + '; fi',
  '    num=$((num + 1))',
  '  fi',
  '  "$@" & child=$!; wait "$child"; echo "$name: exited with status $?, restarting in ${delay} s" >&2',
  '  sleep "$delay" & wait $!',
  'done',
].join('\n');

/** `bash` arguments that run `program args…` under the loop. */
export function restartLoopArgs(name: string, stopSignal: string, program: string, args: ReadonlyArray<string>, policy: RestartPolicy = FLEET_RESTART_POLICY): string[] {
  return ['-c', LOOP, name, stopSignal, String(policy.restartSeconds), String(policy.intervalSeconds), String(policy.burst), program, ...args];
}
