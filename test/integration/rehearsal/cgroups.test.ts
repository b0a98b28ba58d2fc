/**
 * CPU budgets per simulated host: which hierarchy a machine's mounts give, how budgets scale with the
 * instance class, and (as root with a writable cpu controller; skipped otherwise) that a quota really
 * limits a busy process and that no cgroup is left afterwards.
 */
import { readFileSync } from 'node:fs';
import {
  CpuBudget,
  DEFAULT_CORES_PER_VCPU,
  IsolationSetupError,
  RehearsalConfigError,
  budgetLeftovers,
  chooseHierarchy,
  cpuBudgetsUnavailable,
  cpuCoresFor,
  removeRehearsalBudgets,
  sleep,
} from '../../../lib/rehearsal';
import { startNode, type Started } from './isolation';

// The lines that matter of three machines' /proc/self/mountinfo.
const V1_APART = [
  '25 24 0:22 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu',
  '26 24 0:23 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct',
  '35 24 0:32 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
].join('\n');
const V1_TOGETHER = '25 24 0:22 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct';
const V2 = '30 24 0:26 / /sys/fs/cgroup rw,nosuid,nodev - cgroup2 cgroup2 rw,nsdelegate';

describe('which cgroup hierarchy', () => {
  const controllers = (byMount: Record<string, string[]>) => (mount: string) => byMount[mount] ?? [];

  test.each<[string, string, Record<string, string[]>, unknown]>([
    ['v1 with cpu and cpuacct mounted apart (this kind of machine)', V1_APART, {}, { version: 1, cpuMount: '/sys/fs/cgroup/cpu', cpuacctMount: '/sys/fs/cgroup/cpuacct' }],
    ['v1 with cpu and cpuacct together', V1_TOGETHER, {}, { version: 1, cpuMount: '/sys/fs/cgroup/cpu,cpuacct', cpuacctMount: '/sys/fs/cgroup/cpu,cpuacct' }],
    ['v2 carrying the cpu controller', V2, { '/sys/fs/cgroup': ['cpuset', 'cpu', 'io', 'memory', 'pids'] }, { version: 2, mount: '/sys/fs/cgroup' }],
    ['v2 whose cpu controller is bound to v1', V1_APART, { '/sys/fs/cgroup/unified': [''] }, { version: 1, cpuMount: '/sys/fs/cgroup/cpu', cpuacctMount: '/sys/fs/cgroup/cpuacct' }],
  ])('GIVEN %s WHEN choosing THEN the hierarchy with the cpu controller is used', (_case, mountinfo, byMount, expected) => {
    expect(chooseHierarchy(mountinfo, controllers(byMount))).toEqual(expected);
  });

  test('GIVEN no cpu controller anywhere WHEN choosing THEN the reason says what is missing', () => {
    expect(chooseHierarchy(V2, controllers({ '/sys/fs/cgroup': ['memory', 'pids'] }))).toMatch(/^no cgroup hierarchy carries the cpu controller/);
  });
});

describe('budgets scaled from the instance class', () => {
  test('GIVEN the default factor WHEN sizing the default instance class THEN 4 vCPUs get 0.4 core', () => {
    expect(DEFAULT_CORES_PER_VCPU).toBe(0.1);
    expect(cpuCoresFor('db.r6gd.xlarge')).toBeCloseTo(0.4);
    expect(cpuCoresFor('db.r6id.2xlarge', 0.05)).toBeCloseTo(0.4);
  });

  test.each<[string, () => unknown, RegExp]>([
    ['an unknown class', () => cpuCoresFor('db.t3.micro'), /instanceClass db\.t3\.micro is not in the Optimized Reads catalog: use e\.g\. db\.r6gd\.xlarge/],
    ['a factor above one core per vCPU', () => cpuCoresFor('db.r6gd.xlarge', 2), /coresPerVcpu 2 is out of range/],
    ['a quota under 1 ms per period', () => CpuBudget.create({ rehearsal: 'x', host: 'writer', cores: 0.001 }), /cores 0\.001 is below the kernel's smallest quota: use at least 0\.01 core/],
    ['a host name with a slash', () => CpuBudget.create({ rehearsal: 'x', host: '../writer', cores: 0.4 }), /host "\.\.\/writer" is not a cgroup name/],
  ])('GIVEN %s WHEN sizing THEN RehearsalConfigError names the value and the fix', (_case, call, message) => {
    expect(call).toThrow(RehearsalConfigError);
    expect(call).toThrow(message);
  });
});

const unavailable = cpuBudgetsUnavailable() ?? (process.getuid?.() === 0 ? undefined : 'not root');
const live = unavailable === undefined ? describe : describe.skip;
if (unavailable !== undefined) console.warn(`CPU budget suite skipped: ${unavailable}`);

/** A process that spins for at most 20 s (bounded by itself). */
const BUSY_LOOP = "console.log('spinning'); const end = Date.now() + 20000; while (Date.now() < end) {}";
const REHEARSAL = 'cgroup-suite';

live('a CPU budget on this machine', () => {
  const busy: Started[] = [];

  afterAll(async () => {
    for (const b of busy) await b.stop();
    removeRehearsalBudgets(REHEARSAL);
  }, 30_000);

  /** CPU seconds the budget's processes use per wall second, over about a second. */
  async function coresUsed(budget: CpuBudget): Promise<number> {
    const [u0, t0] = [budget.usageUs(), performance.now()];
    await sleep(1000);
    return (budget.usageUs() - u0) / ((performance.now() - t0) * 1000);
  }

  test('GIVEN 0.2 core WHEN a busy process joins before it runs THEN it uses no more than the quota, and is really in the cgroup', async () => {
    const budget = CpuBudget.create({ rehearsal: REHEARSAL, host: 'joined', cores: 0.2 });
    const b = await startNode({ cgroupProcsFiles: budget.procsFiles, args: ['-e', BUSY_LOOP] }, /spinning/);
    busy.push(b);
    expect(budget.pids()).toEqual([b.pid]);
    expect(readFileSync(`/proc/${b.pid}/cgroup`, 'utf8')).toContain(`/aurora-proxy-kit/${REHEARSAL}/joined`);
    const used = await coresUsed(budget);
    expect(used).toBeLessThanOrEqual(0.2 * 1.3);
    // It did run: the measurement is of a live process, not of an empty cgroup.
    expect(used).toBeGreaterThan(0.05);
  }, 30_000);

  test('GIVEN a budget holding a process WHEN removed THEN it refuses and names the pid; once stopped, nothing is left', async () => {
    const budget = CpuBudget.create({ rehearsal: REHEARSAL, host: 'added', cores: 0.3 });
    const b = await startNode({ args: ['-e', BUSY_LOOP] }, /spinning/);
    busy.push(b);
    budget.add(b.pid);
    expect(await coresUsed(budget)).toBeLessThanOrEqual(0.3 * 1.3);
    expect(() => budget.remove()).toThrow(IsolationSetupError);
    expect(() => budget.remove()).toThrow(new RegExp(`still holds processes ${b.pid}: stop them first`));

    for (const started of busy) await started.stop();
    budget.remove();
    expect(removeRehearsalBudgets(REHEARSAL)).toEqual([]);
    expect(budgetLeftovers(REHEARSAL)).toEqual([]);
  }, 30_000);
});
