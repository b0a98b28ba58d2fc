/**
 * CPU budgets per simulated host, so an instance of the rehearsal has the CPU its instance class
 * would have, scaled down to this machine, and saturates under its own budget rather than the
 * machine's. One cgroup per host: `<mount>/aurora-proxy-kit/<rehearsal>/<host>`.
 *
 * Whatever the machine has: cgroup v2 (`cpu.max`, usage from `cpu.stat` usage_usec) when its unified
 * hierarchy carries the cpu controller, otherwise v1's `cpu` controller (cfs_quota_us / cfs_period_us)
 * with usage from `cpuacct.usage` (the two may be mounted apart; a budget then has a directory in each).
 *
 * Scaling (cpuCoresFor): cores = the class's vCPUs x coresPerVcpu, default 0.1. A 2-core machine holds
 * the writer, two readers, PgBouncer, HAProxy, pgpool-II and the bench's clients at once: three
 * db.r6gd.xlarge (4 vCPUs) get 0.4 core each, 1.2 cores in all, and the clients and poolers keep the
 * other 0.8, enough to drive an instance to its budget, so the database saturates under its budget as
 * the seeds' instances did under theirs, and not the machine under the clients.
 */
import { accessSync, constants, existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findInstanceClass } from '../model/instance-classes';
import { IsolationSetupError, IsolationUnavailableError, RehearsalConfigError } from './errors';

export const KIT_CGROUP = 'aurora-proxy-kit';
export const DEFAULT_CORES_PER_VCPU = 0.1;
/** The CFS period both versions default to; quotas are a share of it. */
export const CPU_PERIOD_US = 100_000;
/** The smallest quota the kernel accepts (1 ms per period). */
const MIN_QUOTA_US = 1000;

export type CgroupHierarchy = { readonly version: 2; readonly mount: string } | { readonly version: 1; readonly cpuMount: string; readonly cpuacctMount: string };

const NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/**
 * The hierarchy to use from /proc/self/mountinfo's text, or why there is none. `controllersOf` reads
 * a v2 mount's cgroup.controllers (a parameter, so the choice can be checked on other machines' text).
 */
export function chooseHierarchy(mountinfo: string, controllersOf: (mount: string) => string[]): CgroupHierarchy | string {
  let cpuMount: string | undefined;
  let cpuacctMount: string | undefined;
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (left === undefined || right === undefined) continue;
    // Mount points escape spaces and the like as octal (\040).
    const mount = (left.split(' ')[4] ?? '').replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));
    const [fstype, , superOptions = ''] = right.split(' ');
    if (fstype === 'cgroup2' && controllersOf(mount).includes('cpu')) return { version: 2, mount };
    if (fstype === 'cgroup') {
      const options = superOptions.split(',');
      if (options.includes('cpu')) cpuMount ??= mount;
      if (options.includes('cpuacct')) cpuacctMount ??= mount;
    }
  }
  if (cpuMount !== undefined && cpuacctMount !== undefined) return { version: 1, cpuMount, cpuacctMount };
  return 'no cgroup hierarchy carries the cpu controller (cgroup v2 with cpu in cgroup.controllers, or v1 cpu and cpuacct)';
}

function readControllers(mount: string): string[] {
  try {
    return readFileSync(join(mount, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
  } catch {
    return [];
  }
}

/** This machine's hierarchy and whether the kit may write to it; a reason when budgets are not possible. */
export function cpuBudgetsUnavailable(): string | undefined {
  const found = detectHierarchy();
  if (typeof found === 'string') return found;
  for (const mount of roots(found)) {
    try {
      accessSync(mount, constants.W_OK);
    } catch {
      return `${mount} is not writable: CPU budgets need root and a writable cgroup filesystem`;
    }
  }
  return undefined;
}

export function detectHierarchy(): CgroupHierarchy | string {
  try {
    return chooseHierarchy(readFileSync('/proc/self/mountinfo', 'utf8'), readControllers);
  } catch (err) {
    return `cannot read /proc/self/mountinfo (${(err as Error).message})`;
  }
}

function roots(h: CgroupHierarchy): string[] {
  return h.version === 2 ? [h.mount] : [...new Set([h.cpuMount, h.cpuacctMount])];
}

/** Cores a host of `instanceClass` gets: its vCPUs (lib/model catalog) x coresPerVcpu. */
export function cpuCoresFor(instanceClass: string, coresPerVcpu = DEFAULT_CORES_PER_VCPU): number {
  const spec = findInstanceClass(instanceClass);
  if (spec === undefined) throw new RehearsalConfigError([`instanceClass ${instanceClass} is not in the Optimized Reads catalog: use e.g. db.r6gd.xlarge (lib/model/instance-classes.ts)`]);
  if (!(coresPerVcpu > 0 && coresPerVcpu <= 1)) throw new RehearsalConfigError([`coresPerVcpu ${coresPerVcpu} is out of range: use more than 0 and at most 1 core of this machine per vCPU (default ${DEFAULT_CORES_PER_VCPU})`]);
  return spec.vcpu * coresPerVcpu;
}

function write(file: string, value: string): void {
  writeFileSync(file, value);
}

/** The kit's directories of one rehearsal, in every hierarchy root. */
function rehearsalDirs(h: CgroupHierarchy, rehearsal: string): string[] {
  return roots(h).map((r) => join(r, KIT_CGROUP, rehearsal));
}

export interface CpuBudgetOptions {
  /** The rehearsal's name (its namespace prefix, e.g. apk31, or its block user). */
  readonly rehearsal: string;
  /** The simulated host: writer, replica1, ... */
  readonly host: string;
  readonly cores: number;
  readonly hierarchy?: CgroupHierarchy;
}

export class CpuBudget {
  /** The host's cgroup directories (one, or a cpu and a cpuacct one on v1 mounted apart). */
  readonly dirs: ReadonlyArray<string>;
  readonly quotaUs: number;
  readonly periodUs = CPU_PERIOD_US;

  private constructor(private readonly hierarchy: CgroupHierarchy, readonly rehearsal: string, readonly host: string, readonly cores: number) {
    this.dirs = rehearsalDirs(hierarchy, rehearsal).map((d) => join(d, host));
    this.quotaUs = Math.round(cores * CPU_PERIOD_US);
  }

  /** Makes the host's cgroup with its quota; IsolationUnavailableError when this machine allows none. */
  static create(o: CpuBudgetOptions): CpuBudget {
    const problems = [
      ...(NAME.test(o.rehearsal) ? [] : [`rehearsal ${JSON.stringify(o.rehearsal)} is not a cgroup name: use lower-case letters, digits and hyphens`]),
      ...(NAME.test(o.host) ? [] : [`host ${JSON.stringify(o.host)} is not a cgroup name: use lower-case letters, digits and hyphens`]),
      ...(Number.isFinite(o.cores) && o.cores * CPU_PERIOD_US >= MIN_QUOTA_US ? [] : [`cores ${o.cores} is below the kernel's smallest quota: use at least ${MIN_QUOTA_US / CPU_PERIOD_US} core`]),
    ];
    if (problems.length > 0) throw new RehearsalConfigError(problems);
    const hierarchy = o.hierarchy ?? detectHierarchy();
    if (typeof hierarchy === 'string') throw new IsolationUnavailableError('CPU budgets', hierarchy);
    const budget = new CpuBudget(hierarchy, o.rehearsal, o.host, o.cores);
    try {
      budget.make();
    } catch (err) {
      // Only what this call made: the host's directories, then its parents if nothing else is in them.
      for (const dir of budget.dirs) for (const d of [dir, join(dir, '..'), join(dir, '..', '..')]) if (existsSync(d)) tryRmdir(d);
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EACCES' || code === 'EROFS' || code === 'EPERM') {
        throw new IsolationUnavailableError('CPU budgets', `cannot write ${budget.dirs[0]} (${code}): run as root on a machine whose cgroup filesystem is writable, or without CPU budgets`);
      }
      throw err;
    }
    return budget;
  }

  private make(): void {
    const h = this.hierarchy;
    if (h.version === 2) {
      // v2 hands a controller down one level at a time: enable cpu for the children of each ancestor.
      const kit = join(h.mount, KIT_CGROUP);
      const rehearsal = join(kit, this.rehearsal);
      for (const [parent, child] of [[h.mount, kit], [kit, rehearsal], [rehearsal, this.dirs[0]!]] as const) {
        mkdirSync(child, { recursive: true });
        write(join(parent, 'cgroup.subtree_control'), '+cpu');
      }
      write(join(this.dirs[0]!, 'cpu.max'), `${this.quotaUs} ${this.periodUs}`);
      return;
    }
    for (const dir of this.dirs) mkdirSync(dir, { recursive: true });
    const cpu = join(h.cpuMount, KIT_CGROUP, this.rehearsal, this.host);
    write(join(cpu, 'cpu.cfs_period_us'), String(this.periodUs));
    write(join(cpu, 'cpu.cfs_quota_us'), String(this.quotaUs));
  }

  /** The cgroup.procs files a process joins (hostCommand's cgroupProcsFiles). */
  get procsFiles(): string[] {
    return this.dirs.map((d) => join(d, 'cgroup.procs'));
  }

  /** Moves a running process in; the processes it forks from now on are in too. */
  add(pid: number): void {
    for (const file of this.procsFiles) write(file, String(pid));
  }

  pids(): number[] {
    const all = this.procsFiles.flatMap((f) => (existsSync(f) ? readFileSync(f, 'utf8').split('\n') : []));
    return [...new Set(all.filter((l) => /^\d+$/.test(l)).map(Number))];
  }

  /** CPU time used by the host's processes since the budget was made, in microseconds. */
  usageUs(): number {
    const h = this.hierarchy;
    if (h.version === 2) {
      const line = /^usage_usec (\d+)$/m.exec(readFileSync(join(this.dirs[0]!, 'cpu.stat'), 'utf8'));
      return Number(line?.[1] ?? 0);
    }
    return Math.round(Number(readFileSync(join(h.cpuacctMount, KIT_CGROUP, this.rehearsal, this.host, 'cpuacct.usage'), 'utf8').trim()) / 1000);
  }

  /** Removes the host's cgroup; its processes must be gone (they are stopped by pid, not here). */
  remove(): void {
    const pids = this.pids();
    if (pids.length > 0) throw new IsolationSetupError(`CPU budget ${this.rehearsal}/${this.host} still holds processes ${pids.join(', ')}: stop them first`, this.dirs.filter((d) => existsSync(d)));
    for (const dir of this.dirs) if (existsSync(dir)) rmdirSync(dir);
  }
}

/** What is left of a rehearsal's budgets (directories), in every hierarchy root. */
export function budgetLeftovers(rehearsal: string, hierarchy: CgroupHierarchy | string = detectHierarchy()): string[] {
  if (typeof hierarchy === 'string') return [];
  return rehearsalDirs(hierarchy, rehearsal).filter((d) => existsSync(d));
}

/**
 * Removes every budget of `rehearsal`, then its directory and the kit's when empty (rmdir only: a
 * cgroup with processes stays, and is reported). Returns what is left.
 */
export function removeRehearsalBudgets(rehearsal: string, hierarchy: CgroupHierarchy | string = detectHierarchy()): string[] {
  if (typeof hierarchy === 'string') return [];
  for (const dir of rehearsalDirs(hierarchy, rehearsal)) {
    if (!existsSync(dir)) continue;
    for (const host of readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory())) tryRmdir(join(dir, host.name));
    tryRmdir(dir);
    const kit = join(dir, '..');
    if (existsSync(kit) && readdirSync(kit, { withFileTypes: true }).every((e) => !e.isDirectory())) tryRmdir(kit);
  }
  return budgetLeftovers(rehearsal, hierarchy);
}

function tryRmdir(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // Busy (processes inside) or already gone: budgetLeftovers reports what stays.
  }
}
