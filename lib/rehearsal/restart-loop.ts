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

/** The engine's units' policy. */
export const FLEET_RESTART_POLICY: RestartPolicy = { restartSeconds: FLEET_RESTART_SECONDS, ...FLEET_START_LIMIT };

/** Exit status of a loop that hit the start limit (systemd's unit state "failed", result "start-limit-hit"). */
export const START_LIMIT_HIT_EXIT = 3;

// Arguments ($0 on): name, stop signal, restart delay, interval, burst, program and its arguments. `starts` holds
// the start times (epoch seconds) within the interval; EPOCHREALTIME keeps it in bash, without a date(1) per start.
const LOOP = [
  'name=$0 sig=$1 delay=$2 interval=$3 burst=$4; shift 4; starts=()',
  'trap \'kill -"$sig" "$child" 2>/dev/null; wait "$child"; exit 0\' INT TERM',
  'while :; do',
  '  now=${EPOCHREALTIME%.*}; kept=(); for t in "${starts[@]}"; do (( now - t < interval )) && kept+=("$t"); done; starts=("${kept[@]}")',
  '  if (( ${#starts[@]} >= burst )); then echo "$name: start request repeated too quickly (${#starts[@]} starts within ${interval} s), refusing to start" >&2; exit ' + String(START_LIMIT_HIT_EXIT) + '; fi',
  '  starts+=("$now"); "$@" & child=$!; wait "$child"; echo "$name: exited with status $?, restarting in ${delay} s" >&2',
  '  sleep "$delay" & wait $!',
  'done',
].join('\n');

/** `bash` arguments that run `program args…` under the loop. */
export function restartLoopArgs(name: string, stopSignal: string, program: string, args: ReadonlyArray<string>, policy: RestartPolicy = FLEET_RESTART_POLICY): string[] {
  return ['-c', LOOP, name, stopSignal, String(policy.restartSeconds), String(policy.intervalSeconds), String(policy.burst), program, ...args];
}
