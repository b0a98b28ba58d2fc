/**
 * CPU affinity of a rehearsal instance (every process of its group, and so every backend it forks
 * later): the 2-core analog of "each instance is its own host".
 */
import { execFileSync } from 'node:child_process';
import { groupMembers } from '../rehearsal';

export function pinGroup(pgid: number, cpuList: string): number {
  const pids = groupMembers(pgid);
  for (const pid of pids) {
    try {
      execFileSync('taskset', ['-a', '-p', '-c', cpuList, String(pid)], { stdio: 'ignore' });
    } catch {
      // Exited in between.
    }
  }
  return pids.length;
}
