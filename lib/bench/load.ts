/**
 * The machine's load around a run, so a figure measured while other work shared the cores can be told
 * from one measured on a quiet machine: /proc/loadavg before and after, and the CPU time the machine
 * spent outside the bench's own process tree (/proc/stat's busy time minus the tree's, from proc.ts's
 * per-process times). Processes a descendant orphaned (re-parented to init) escape the tree and count as
 * outside, so the outside figure is an upper bound.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { clockTicks, readProcStat, type ProcStat } from './proc';
import { round } from './stats';
import type { LoadAverage, RunLoad } from './types';

/** The first three fields of /proc/loadavg. */
export function parseLoadAverage(text: string): LoadAverage {
  const [one, five, fifteen] = text.trim().split(/\s+/).map(Number);
  if (![one, five, fifteen].every((n) => n !== undefined && Number.isFinite(n))) throw new Error(`unreadable /proc/loadavg: ${JSON.stringify(text)}`);
  return { one: one!, five: five!, fifteen: fifteen! };
}

/** Busy ticks of all cores from /proc/stat's "cpu" line: everything but idle and iowait (guest time is already in user). */
export function parseBusyTicks(text: string): number {
  const line = text.split('\n').find((l) => l.startsWith('cpu '));
  if (line === undefined) throw new Error('no "cpu" line in /proc/stat');
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return [user, nice, system, irq, softirq, steal].reduce<number>((sum, n) => sum + (n ?? 0), 0);
}

/** CPU ticks of the tree rooted at `root` in `stats`: each live member's own time and the time of the children it reaped. */
export function treeTicks(root: number, stats: ReadonlyArray<ProcStat>): number {
  const children = new Map<number, ProcStat[]>();
  for (const s of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s]);
  const rootStat = stats.find((s) => s.pid === root);
  if (rootStat === undefined) return 0;
  let total = 0;
  const queue = [rootStat];
  while (queue.length > 0) {
    const s = queue.pop()!;
    total += s.utime + s.stime + s.cutime + s.cstime;
    queue.push(...(children.get(s.pid) ?? []));
  }
  return total;
}

function allProcStats(): ProcStat[] {
  return readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map((e) => readProcStat(Number(e))).filter((s): s is ProcStat => s !== undefined);
}

function tryRead(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** A reading of the machine at one instant. */
export interface LoadSnapshot {
  readonly at: number;
  readonly loadAverage: LoadAverage;
  /** Undefined where /proc/stat cannot be read (not Linux). */
  readonly machineTicks?: number;
  readonly benchTicks?: number;
}

export function loadSnapshot(root = process.pid): LoadSnapshot {
  const loadavg = tryRead('/proc/loadavg');
  const stat = tryRead('/proc/stat');
  return {
    at: Date.now(),
    loadAverage: loadavg === undefined ? { one: Number.NaN, five: Number.NaN, fifteen: Number.NaN } : parseLoadAverage(loadavg),
    ...(stat === undefined ? {} : { machineTicks: parseBusyTicks(stat), benchTicks: treeTicks(root, allProcStats()) }),
  };
}

/** The load between two snapshots, in seconds and cores. */
export function runLoad(before: LoadSnapshot, after: LoadSnapshot, ticksPerSecond = clockTicks()): RunLoad {
  const wallSeconds = Math.max(0, (after.at - before.at) / 1000);
  const base: RunLoad = { before: before.loadAverage, after: after.loadAverage, wallSeconds: round(wallSeconds, 2) };
  if (before.machineTicks === undefined || after.machineTicks === undefined || before.benchTicks === undefined || after.benchTicks === undefined) return base;
  const machine = (after.machineTicks - before.machineTicks) / ticksPerSecond;
  const bench = (after.benchTicks - before.benchTicks) / ticksPerSecond;
  // Ticks are sampled, not exact: a quiet machine can read a hair below zero.
  const outside = Math.max(0, machine - bench);
  return { ...base, machineCpuSeconds: round(machine, 2), benchCpuSeconds: round(bench, 2), outsideCpuSeconds: round(outside, 2), outsideCores: round(wallSeconds > 0 ? outside / wallSeconds : 0, 2) };
}
