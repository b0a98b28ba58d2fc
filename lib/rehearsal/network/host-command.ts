/**
 * How a process is started on a simulated host: inside its namespace (`ip netns exec`), in its CPU
 * budget (joining the cgroups before anything runs), as its user (`setpriv`). Each wrapper replaces
 * itself with the next (ip netns exec and setpriv exec without forking; the shell ends in `exec`), so
 * the pid spawn() returns is the program's own, and tracking by pid (processes.ts) keeps working.
 *
 *   /bin/sh -c '<join cgroups>; exec "$@"' ... ip netns exec <ns> setpriv --reuid .. --regid .. --init-groups <program> <args>
 *
 * The cgroups are joined first, in this mount namespace: `ip netns exec` remounts /sys, hiding them.
 *
 * The wrappers need root (entering a namespace, writing cgroup.procs), so a wrapped command is spawned
 * as root and drops to the user last; an unwrapped one is spawned as the user directly.
 */
import { IsolationUnavailableError } from '../errors';
import type { OsUser } from '../os-user';
import { ipProgram, systemProgram } from './iproute';

export interface HostCommandOptions {
  readonly program: string;
  readonly args: ReadonlyArray<string>;
  /** Network namespace to run in (NetworkPlan namespaces). */
  readonly namespace?: string;
  /** cgroup.procs files to join before the program runs (CpuBudget.procsFiles), so all its children are inside. */
  readonly cgroupProcsFiles?: ReadonlyArray<string>;
  /** The user the program runs as. */
  readonly user?: OsUser;
}

export interface HostCommand {
  /** What to spawn. */
  readonly program: string;
  readonly args: ReadonlyArray<string>;
  /** uid/gid for spawn(): the user when nothing wraps the program, otherwise none (root; setpriv drops). */
  readonly spawnAs?: OsUser;
  /** What /proc/<pid>/exe shows once the wrappers have exec'd: TrackedProcess.program. */
  readonly finalProgram: string;
}

// $1 is the number of cgroup.procs files that follow; the rest is the command. `echo $$` is a builtin,
// so the shell itself (and so the program it execs into) joins each cgroup.
const JOIN_CGROUPS = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n - 1)); done; exec "$@"';

export function hostCommand(o: HostCommandOptions): HostCommand {
  const cgroups = o.cgroupProcsFiles ?? [];
  if (o.namespace === undefined && cgroups.length === 0) {
    return { program: o.program, args: [...o.args], finalProgram: o.program, ...(o.user ? { spawnAs: o.user } : {}) };
  }
  let command: string[] = [o.program, ...o.args];
  if (o.user !== undefined) {
    const setpriv = systemProgram('setpriv');
    if (setpriv === undefined) throw new IsolationUnavailableError('network namespaces', 'setpriv (util-linux) is not installed: `apt-get install -y util-linux`');
    command = [setpriv, `--reuid=${o.user.uid}`, `--regid=${o.user.gid}`, '--init-groups', ...command];
  }
  if (o.namespace !== undefined) command = [ipProgram(), 'netns', 'exec', o.namespace, ...command];
  // Outermost: `ip netns exec` mounts a fresh /sys for the namespace, which hides the cgroup filesystem.
  if (cgroups.length > 0) command = ['/bin/sh', '-c', JOIN_CGROUPS, 'join-cgroups', String(cgroups.length), ...cgroups, ...command];
  const [program, ...args] = command as [string, ...string[]];
  return { program, args, finalProgram: o.program };
}
