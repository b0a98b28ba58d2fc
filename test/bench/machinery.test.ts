/**
 * The bench's machinery without a rehearsal: the /proc CPU reader against a real process tree, ratio
 * and target computation, pgbench output parsing, and the report writers on a fixture result.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchUsageError, parseBenchArgs } from '../../lib/bench/cli';
import { combineRuns } from '../../lib/bench/combine';
import { parseBusyTicks, parseLoadAverage, runLoad, treeTicks } from '../../lib/bench/load';
import { atLeastShare, atMost, fewerBy, moreBy } from '../../lib/bench/checks';
import { parsePgbenchOutput, readTransactionLog } from '../../lib/bench/pgbench';
import { parseProcStat, treeCpuSeconds, type ProcStat } from '../../lib/bench/proc';
import { renderMarkdown, renderSvg, writeReports, advantage, verdict } from '../../lib/bench/report';
import { runRepeated, summarize } from '../../lib/bench/runner';
import { windowStats, type Sample } from '../../lib/bench/sampler';
import { median, percentile, ratio, spread } from '../../lib/bench/stats';
import type { BenchResult, RunLoad, ScenarioResult } from '../../lib/bench/types';

const labels = { seed: 'seed says', baselineLabel: 'base', oursLabel: 'ours', unit: 'x' };

describe('ratios and targets', () => {
  test('GIVEN figures WHEN checks are built THEN the ratio is ours / baseline and the target decides met', () => {
    expect(ratio(10, 100)).toBe(0.1);
    expect(ratio(0, 0)).toBe(1);
    const fewer = fewerBy({ id: 'a', metric: 'm', ...labels, baseline: 100, ours: 10, factor: 8 });
    expect(fewer).toMatchObject({ ratio: 0.1, met: true, target: '>= 8x fewer', reads: '10x fewer' });
    expect(fewerBy({ id: 'b', metric: 'm', ...labels, baseline: 100, ours: 20, factor: 8 }).met).toBe(false);
    expect(moreBy({ id: 'c', metric: 'm', ...labels, baseline: 10, ours: 18.7, factor: 1.87 })).toMatchObject({ ratio: 1.87, met: true });
    expect(atMost({ id: 'd', metric: 'm', ...labels, baseline: 3, ours: 0, limit: 0 })).toMatchObject({ met: true, ratio: 0 });
    expect(atMost({ id: 'e', metric: 'm', ...labels, baseline: 0.5, ours: 0.12, limit: 0.1 }).met).toBe(false);
    expect(atLeastShare({ id: 'f', metric: 'm', ...labels, baseline: 0.3, ours: 0.33, min: 0.25 })).toMatchObject({ met: true, reads: '33%' });
    expect(advantage(fewer)).toEqual({ value: 10, target: 8 });
  });

  test('GIVEN samples WHEN a window is cut THEN per-instance and total figures come from that window only', () => {
    const samples: Sample[] = [
      { t: 0, values: { a: 100, b: 100 } },
      { t: 10, values: { a: 4, b: 6 } },
      { t: 20, values: { a: 6, b: 4, c: 5 } },
    ];
    const w = windowStats(samples, 5, 25, ['a', 'b', 'c']);
    expect(w).toMatchObject({ perInstancePeak: 6, totalPeak: 15, samples: 2, byInstance: { a: 5, b: 5, c: 2.5 } });
    expect(w.perInstanceAvg).toBeCloseTo(25 / 6);
    expect(percentile([5, 1, 4, 2, 3], 50)).toBe(3);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 100], 99)).toBe(100);
  });
});

describe('/proc CPU accounting', () => {
  test('GIVEN a stat line with spaces in the name WHEN parsed THEN fields 14-17 are read after the last paren', () => {
    const line = '42 (postgres: kit (x)) S 7 42 42 0 -1 4194560 1 0 0 0 11 22 33 44 20 0 1 0';
    expect(parseProcStat(42, line)).toEqual({ pid: 42, ppid: 7, state: 'S', utime: 11, stime: 22, cutime: 33, cstime: 44 });
  });

  test('GIVEN a parent whose child burns CPU and exits WHEN the tree is read THEN the reaped child time counts', async () => {
    // GIVEN: a shell (the "postmaster") that runs a busy child to completion, then sleeps.
    const parent = spawn('bash', ['-c', 'x=0; (while [ $x -lt 300000 ]; do x=$((x+1)); done); echo done; sleep 10'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      await new Promise<void>((resolve) => parent.stdout!.once('data', () => resolve()));
      // WHEN
      const seconds = treeCpuSeconds(parent.pid!);
      // THEN: the subshell's loop (well over 0.1 s of CPU) is in the parent's cutime+cstime.
      expect(seconds).toBeGreaterThan(0.1);
    } finally {
      parent.kill('SIGKILL');
    }
    expect(treeCpuSeconds(2 ** 22 + 12345)).toBeUndefined();
  }, 20000);
});

describe('pgbench output', () => {
  test('GIVEN pgbench 15 output and -l logs WHEN parsed THEN transactions, tps, errors and latencies come out', () => {
    const stdout = ['number of transactions actually processed: 1234', 'number of failed transactions: 2 (0.162%)', 'latency average = 3.500 ms', 'average connection time = 11.250 ms', 'tps = 88.123456 (including reconnection times)'].join('\n');
    expect(parsePgbenchOutput(stdout, 'pgbench: error: client 3 aborted while establishing connection\nclient 7 aborted in command 1')).toEqual({ transactions: 1234, failedTransactions: 2, abortedClients: 2, tps: 88.123456, latencyAvgMs: 3.5, connectAvgMs: 11.25 });
    const dir = mkdtempSync(join(tmpdir(), 'pgbench-log-'));
    try {
      writeFileSync(join(dir, 'w1.123'), '0 0 1500 0 1700000000 1\n0 1 failed 0 1700000000 2\n1 0 250 0 1700000000 3\n');
      writeFileSync(join(dir, 'w1.123.1'), '2 0 1000 0 1700000000 4\n');
      writeFileSync(join(dir, 'w10.9'), '2 0 99999 0 1700000000 4\n');
      expect(readTransactionLog(join(dir, 'w1')).sort((a, b) => a - b)).toEqual([0.25, 1, 1.5]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('report writers', () => {
  const scenario: ScenarioResult = {
    name: 'read_only_endpoint',
    title: 'fixture',
    seedSource: 'seed article',
    startedAt: '2025-01-01T00:00:00.000Z',
    durationSeconds: 1,
    environment: { cores: 2 },
    figures: { baseline: { tps: 10 }, ours: { tps: 12 } },
    ratios: { tps: 1.2 },
    checks: [
      fewerBy({ id: 'ro-server-connections', metric: 'server connections | per replica', ...labels, baseline: 100, ours: 10, factor: 8 }),
      moreBy({ id: 'ro-tps', metric: 'TPS', ...labels, baseline: 10, ours: 12, factor: 5 }),
    ],
    notes: ['a note'],
  };
  const result: BenchResult = {
    tool: 'aurora-proxy-kit bench',
    mode: 'quick',
    repeat: 1,
    startedAt: '2025-01-01T00:00:00.000Z',
    durationSeconds: 2,
    environment: { host: { cores: 2, cpuModel: 'cpu', memoryGiB: 24, kernel: '6', node: 'v20', rehearsal: 'loopback' }, versions: { postgresql: '15.18' }, scaling: { read_only_endpoint: 'scaled', reader_added: '', connect_overhead: '', read_write_split: '', transaction_pooling: '' } },
    scenarios: { read_only_endpoint: scenario, connect_overhead: { ...scenario, name: 'connect_overhead', checks: [], error: 'boom' } },
    summary: summarize({ read_only_endpoint: scenario, connect_overhead: { ...scenario, name: 'connect_overhead', checks: [], error: 'boom' } }),
  };

  test('GIVEN a fixture result WHEN summarized and rendered THEN the table shows seed, ours, ratio, target, met/missed', () => {
    expect(result.summary).toEqual({ targets: 2, met: 1, missed: ['ro-tps'], failedScenarios: ['connect_overhead'] });
    const md = renderMarkdown(result);
    expect(md).toContain('**1 of 2 targets met.** Missed: ro-tps.');
    expect(md).toContain('| read_only_endpoint | server connections \\| per replica | seed says | base: 100 x | ours: 10 x | 0.1 | 10x fewer | >= 8x fewer | met |');
    expect(md).toContain('| ro-tps'.slice(2));
    expect(md).toContain('**missed**');
    expect(md).toContain('FAILED: boom');
    expect(md).toContain('- **read_only_endpoint**: scaled');
    const svg = renderSvg(result);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain('10x (target 8x)');
    expect(svg).toContain('server connections | per replica'.slice(0, 20));
    expect((svg.match(/<rect /g) ?? []).length).toBe(3);
  });

  test('GIVEN a check with a long metric name WHEN the chart is drawn THEN the label column fits the longest label in full', () => {
    // GIVEN a label far longer than the old fixed 360 px column (and its 58-character cut) allowed
    const metric = 'server connections opened per replica during the connection storm (pgbench -C, 500 clients)';
    const long = fewerBy({ id: 'ro-server-connections-storm', metric, ...labels, baseline: 100, ours: 10, factor: 8 });
    const withLong: BenchResult = { ...result, scenarios: { read_only_endpoint: { ...scenario, checks: [...scenario.checks, long] } } };

    // WHEN
    const svg = renderSvg(withLong);

    // THEN every right-aligned label is whole and starts inside the chart, at 0.6 em per character
    const fontSize = Number(/<svg [^>]*font-size="(\d+)"/.exec(svg)?.[1]);
    const width = Number(/<svg [^>]*width="(\d+)"/.exec(svg)?.[1]);
    const unescape = (s: string): string => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&amp;/g, '&');
    const labelsDrawn = [...svg.matchAll(/<text x="([\d.]+)" y="[\d.]+" text-anchor="end">([^<]*)<\/text>/g)].map((m) => ({ x: Number(m[1]), text: unescape(m[2]!) }));
    expect(labelsDrawn.map((l) => l.text)).toEqual(['ro-server-connections: server connections | per replica', 'ro-tps: TPS', `ro-server-connections-storm: ${metric}`]);
    const longest = Math.max(...labelsDrawn.map((l) => l.text.length));
    for (const l of labelsDrawn) expect(l.x - longest * fontSize * 0.6).toBeGreaterThanOrEqual(0);
    // and the value labels right of the bars end inside the chart too
    const values = [...svg.matchAll(/<text x="([\d.]+)" y="[\d.]+">([^<]*x \(target [^<]*)<\/text>/g)].map((m) => Number(m[1]) + m[2]!.length * fontSize * 0.6);
    expect(values).toHaveLength(3);
    for (const end of values) expect(end).toBeLessThanOrEqual(width);
  });

  test('GIVEN an output directory WHEN reports are written THEN latest.json round-trips the result', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-report-'));
    try {
      const files = writeReports(result, dir);
      expect(files.map((f) => f.slice(dir.length + 1))).toEqual(['latest.json', 'latest.md', 'latest.svg']);
      expect(JSON.parse(readFileSync(join(dir, 'latest.json'), 'utf8'))).toEqual(JSON.parse(JSON.stringify(result)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('GIVEN CLI arguments WHEN parsed THEN scenarios, quick and out are taken and unknown ones refused', () => {
    expect(parseBenchArgs(['--quick', '--scenario', 'reader_added,connect_overhead', '--out=/tmp/x'])).toEqual({ quick: true, repeat: 1, outDir: '/tmp/x', scenarios: ['reader_added', 'connect_overhead'] });
    expect(() => parseBenchArgs(['--scenario', 'nope'])).toThrow(/unknown scenario nope/);
    expect(() => parseBenchArgs(['--fast'])).toThrow(/unknown option --fast/);
  });
});

describe('repeated runs', () => {
  const baseResult: BenchResult = {
    tool: 'aurora-proxy-kit bench',
    mode: 'full',
    repeat: 3,
    startedAt: '2025-01-01T00:00:00.000Z',
    durationSeconds: 30,
    environment: { host: { cores: 2, cpuModel: 'cpu', memoryGiB: 24, kernel: '6', node: 'v20', rehearsal: 'loopback' }, versions: { postgresql: '15.18' }, scaling: { read_only_endpoint: 'scaled', reader_added: '', connect_overhead: '', read_write_split: '', transaction_pooling: '', pgbouncer_engine: '' } },
    scenarios: {},
    summary: summarize({}),
  };
  /** A synthetic run of read_only_endpoint: connections fewer by 100 / conns, TPS more by tps / 10. */
  const run = (conns: number, tps: number, loadOne = 1): ScenarioResult => ({
    name: 'read_only_endpoint',
    title: 'fixture',
    seedSource: 'seed article',
    startedAt: '2025-01-01T00:00:00.000Z',
    durationSeconds: 10,
    environment: { cores: 2, load: { before: { one: loadOne, five: 1, fifteen: 1 }, after: { one: loadOne + 1, five: 1, fifteen: 1 }, wallSeconds: 10, outsideCores: loadOne / 2 } },
    figures: { ours: { connections: conns, tps } },
    ratios: { tps: tps / 10 },
    checks: [
      fewerBy({ id: 'ro-server-connections', metric: 'server connections per replica', ...labels, baseline: 100, ours: conns, factor: 8 }),
      moreBy({ id: 'ro-tps', metric: 'TPS', ...labels, baseline: 10, ours: tps, factor: 2 }),
    ],
    notes: ['a note'],
  });

  test('GIVEN unsorted values WHEN their median and spread are taken THEN the middle value and the range come out, run order kept', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
    expect(spread([0.12, 0.1, 0.11])).toEqual({ median: 0.11, min: 0.1, max: 0.12, values: [0.12, 0.1, 0.11] });
  });

  test('GIVEN three synthetic runs WHEN combined THEN each check is their median with its spread, and every run is kept', () => {
    // GIVEN
    const runs = [run(11, 25, 3), run(10, 21, 1), run(12, 30, 2)];

    // WHEN
    const combined = combineRuns('read_only_endpoint', runs);

    // THEN: 100/11, 100/10, 100/12 fewer -> ratios 0.11, 0.1, 0.12; median 0.11 (ours 11)
    const conns = combined.checks.find((c) => c.id === 'ro-server-connections')!;
    expect(conns).toMatchObject({ ours: 11, baseline: 100, ratio: 0.11, met: true, reads: '9.09x fewer' });
    expect(conns.runs).toEqual({
      planned: 3,
      met: 3,
      medianMeets: true,
      ratio: { median: 0.11, min: 0.1, max: 0.12, values: [0.11, 0.1, 0.12] },
      ours: { median: 11, min: 10, max: 12, values: [11, 10, 12] },
      baseline: { median: 100, min: 100, max: 100, values: [100, 100, 100] },
    });
    expect(combined.checks.find((c) => c.id === 'ro-tps')).toMatchObject({ ours: 25, ratio: 2.5, met: true });
    expect(combined.ratios).toEqual({ tps: 2.5 });
    expect(combined.ratioSpreads?.tps).toEqual({ median: 2.5, min: 2.1, max: 3, values: [2.5, 2.1, 3] });
    expect(combined.runs?.map((r) => r.figures)).toEqual(runs.map((r) => r.figures));
    expect(combined.durationSeconds).toBe(30);
    expect(combined.environment.load).toBeUndefined();
    expect(combined.load).toEqual({
      loadAverage1Before: { median: 2, min: 1, max: 3, values: [3, 1, 2] },
      loadAverage1After: { median: 3, min: 2, max: 4, values: [4, 2, 3] },
      outsideCores: { median: 1, min: 0.5, max: 1.5, values: [1.5, 0.5, 1] },
    });
    expect(combined.notes).toEqual(['a note']);
  });

  test('GIVEN a target whose median meets but whose worst run does not WHEN combined and rendered THEN it is not met, and the markdown says why', () => {
    // GIVEN: connections 10, 20, 11 -> 10x, 5x, 9.1x fewer against >= 8x: the median (11) meets, run 2 does not.
    const runs = [run(10, 25), run(20, 5), run(11, 24)];

    // WHEN
    const combined = combineRuns('read_only_endpoint', runs);
    const conns = combined.checks.find((c) => c.id === 'ro-server-connections')!;
    const tps = combined.checks.find((c) => c.id === 'ro-tps')!;

    // THEN
    expect(conns).toMatchObject({ ours: 11, met: false, runs: { met: 2, planned: 3, medianMeets: true } });
    expect(tps).toMatchObject({ ours: 24, met: false, runs: { met: 2, medianMeets: true } });
    const md = renderMarkdown({ ...baseResult, repeat: 3, scenarios: { read_only_endpoint: combined }, summary: summarize({ read_only_endpoint: combined }) });
    expect(md).toContain('Each scenario ran 3 times; each figure is the median of its runs');
    expect(md).toContain('| base: 100 x | ours: 11 x | 0.11 (0.1–0.2) | 9.09x fewer | >= 8x fewer | **missed**: median meets, spread does not (met in 2 of 3 runs) |');
    expect(md).toContain('**0 of 2 targets met.** Missed: ro-server-connections, ro-tps.');
    expect(md).toContain('- **read_only_endpoint**: tps 2.4 (0.5–2.5)');
    expect(md).toContain('## Machine load during the runs');
    expect(md).toContain('- **read_only_endpoint** (3 runs): load average (1 min) before 1 (1–1), after 2 (2–2); cores kept busy by work outside the bench 0.5 (0.5–0.5)');

    // and a target met in every run says so; one whose median misses says only how many runs met it
    const good = combineRuns('read_only_endpoint', [run(10, 25), run(9, 26), run(11, 24)]);
    expect(verdict(good.checks[0]!)).toBe('met in 3 of 3 runs');
    const bad = combineRuns('read_only_endpoint', [run(20, 25), run(9, 26), run(30, 24)]);
    expect(verdict(bad.checks[0]!)).toBe('**missed** (met in 1 of 3 runs)');
  });

  test('GIVEN a failed run among three WHEN combined THEN the scenario carries the error and no target counts as met in every run', () => {
    const failed: ScenarioResult = { ...run(10, 25), checks: [], ratios: {}, figures: {}, error: 'server gone' };
    const combined = combineRuns('read_only_endpoint', [run(10, 25), failed, run(10, 25)]);
    expect(combined.error).toBe('run 2 of 3: server gone');
    expect(combined.checks.find((c) => c.id === 'ro-server-connections')).toMatchObject({ met: false, runs: { planned: 3, met: 2, medianMeets: true } });
    expect(summarize({ read_only_endpoint: combined }).failedScenarios).toEqual(['read_only_endpoint']);
  });

  test('GIVEN --repeat WHEN parsed THEN it defaults to 3 for a full run and 1 for --quick, and a bad value is refused with the fix', () => {
    expect(parseBenchArgs([]).repeat).toBe(3);
    expect(parseBenchArgs(['--quick']).repeat).toBe(1);
    expect(parseBenchArgs(['--quick', '--repeat', '5']).repeat).toBe(5);
    expect(parseBenchArgs(['--repeat=1']).repeat).toBe(1);
    for (const bad of ['0', '21', '2.5', 'three', '-1', '']) {
      expect(() => parseBenchArgs(['--repeat', bad])).toThrow(BenchUsageError);
    }
    expect(() => parseBenchArgs(['--repeat', 'three'])).toThrow('--repeat "three" is not a whole number of runs from 1 to 20: give e.g. --repeat 3');
    expect(() => parseBenchArgs(['--repeat'])).toThrow(/--repeat needs a value/);
  });

  test('GIVEN /proc texts WHEN parsed THEN the load averages, the busy ticks and a process tree\'s ticks come out', () => {
    expect(parseLoadAverage('2.57 3.77 5.51 2/130 17445\n')).toEqual({ one: 2.57, five: 3.77, fifteen: 5.51 });
    expect(() => parseLoadAverage('')).toThrow(/unreadable \/proc\/loadavg/);
    // user nice system idle iowait irq softirq steal: idle and iowait are not busy
    expect(parseBusyTicks('cpu  100 10 50 9999 888 1 2 3 0 0\ncpu0 1 1 1 1 1 1 1 1 0 0\n')).toBe(166);
    const stat = (pid: number, ppid: number, own: number, reaped: number): ProcStat => ({ pid, ppid, state: 'S', utime: own, stime: 0, cutime: reaped, cstime: 0 });
    // 1 -> 2 -> 3, and 4 outside the tree
    expect(treeTicks(1, [stat(1, 0, 10, 5), stat(2, 1, 20, 1), stat(3, 2, 30, 0), stat(4, 0, 1000, 0)])).toBe(66);
    expect(runLoad({ at: 0, loadAverage: { one: 1, five: 1, fifteen: 1 }, machineTicks: 0, benchTicks: 0 }, { at: 10_000, loadAverage: { one: 2, five: 1, fifteen: 1 }, machineTicks: 1500, benchTicks: 500 }, 100)).toEqual({
      before: { one: 1, five: 1, fifteen: 1 },
      after: { one: 2, five: 1, fifteen: 1 },
      wallSeconds: 10,
      machineCpuSeconds: 15,
      benchCpuSeconds: 5,
      outsideCpuSeconds: 10,
      outsideCores: 1,
    });
  });

  test('GIVEN a scenario run three times, one run failing WHEN repeated THEN each run records the load around it', async () => {
    // GIVEN: runs that burn CPU in the bench's own process, the second of which fails
    let calls = 0;
    const lines: string[] = [];

    // WHEN
    const combined = await runRepeated({
      name: 'read_only_endpoint',
      repeat: 3,
      log: (l) => lines.push(l),
      run: async () => {
        calls++;
        if (calls === 2) throw new Error('synthetic failure');
        // The bench's own CPU: 150 ms of it, however busy the machine is.
        const from = process.cpuUsage();
        const burnt = (): number => { const u = process.cpuUsage(from); return u.user + u.system; };
        while (burnt() < 150_000);
        return run(10, 25);
      },
      failed: (t0, message) => ({ ...run(10, 25), startedAt: new Date(t0).toISOString(), checks: [], ratios: {}, error: message }),
    });

    // THEN
    expect(calls).toBe(3);
    expect(combined.runs).toHaveLength(3);
    for (const r of combined.runs!) {
      const load = r.environment.load as RunLoad;
      expect(load.before.one).toBeGreaterThanOrEqual(0);
      expect(load.after.one).toBeGreaterThanOrEqual(0);
      expect(load.outsideCores).toBeGreaterThanOrEqual(0);
      expect(load.machineCpuSeconds).toBeGreaterThanOrEqual(0);
    }
    // the busy runs' own CPU is the bench's, not the machine's other work
    expect((combined.runs![0]!.environment.load as RunLoad).benchCpuSeconds).toBeGreaterThanOrEqual(0.1);
    expect(combined.load?.loadAverage1Before.values).toHaveLength(3);
    expect(combined.error).toBe('run 2 of 3: synthetic failure');
    expect(lines.some((l) => /run 2\/3 FAILED/.test(l))).toBe(true);
    expect(lines.some((l) => /run 3\/3 done in .* \(loadavg [\d.]+ -> [\d.]+, [\d.]+ cores busy outside the bench\)/.test(l))).toBe(true);
  });
});
