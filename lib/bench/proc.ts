/**
 * What the kernel says a PostgreSQL instance costs, read from /proc (Linux only):
 * - CPU seconds: the postmaster's own utime+stime, plus its reaped children (cutime+cstime: every
 *   backend that already exited, which is what a connection-per-transaction storm consists of), plus
 *   the live children's utime+stime. Deltas of this over a window are the instance's CPU in it.
 * - Memory: the PSS (proportional set size, /proc/<pid>/smaps_rollup) of the postmaster's live
 *   children (backends and background processes), summed: shared pages (shared_buffers, the binary)
 *   are divided among the processes that map them, so the sum is the instance's real footprint.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let ticks: number | undefined;

/** Clock ticks per second (USER_HZ) that /proc/<pid>/stat times are counted in. */
export function clockTicks(): number {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

export interface ProcStat {
  readonly pid: number;
  readonly ppid: number;
  readonly state: string;
  /** Fields 14-17 of proc(5), in ticks. */
  readonly utime: number;
  readonly stime: number;
  readonly cutime: number;
  readonly cstime: number;
}

export function parseProcStat(pid: number, text: string): ProcStat {
  // The command name is parenthesised and may contain spaces; field 3 (state) follows the last ')'.
  const rest = text.slice(text.lastIndexOf(')') + 2).trim().split(/\s+/);
  const field = (n: number): number => Number(rest[n - 3]);
  return { pid, ppid: field(4), state: rest[0] ?? '?', utime: field(14), stime: field(15), cutime: field(16), cstime: field(17) };
}

export function readProcStat(pid: number): ProcStat | undefined {
  try {
    return parseProcStat(pid, readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Live children of `pid` (their stat lines). */
export function childrenOf(pid: number): ProcStat[] {
  const out: ProcStat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProcStat(Number(entry));
    if (stat !== undefined && stat.ppid === pid) out.push(stat);
  }
  return out;
}

/** CPU seconds a process tree rooted at `pid` has used so far (see the file comment); undefined if it is gone. */
export function treeCpuSeconds(pid: number): number | undefined {
  const root = readProcStat(pid);
  if (root === undefined) return undefined;
  let total = root.utime + root.stime + root.cutime + root.cstime;
  for (const child of childrenOf(pid)) total += child.utime + child.stime + child.cutime + child.cstime;
  return total / clockTicks();
}

/** PSS in KiB of one process (smaps_rollup), 0 if it is gone. */
export function pssKiB(pid: number): number {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Summed PSS (MiB) of the live children of `pid`, and how many there were. */
export function childrenPssMiB(pid: number): { mib: number; processes: number } {
  const children = childrenOf(pid);
  const kib = children.reduce((sum, c) => sum + pssKiB(c.pid), 0);
  return { mib: kib / 1024, processes: children.length };
}
