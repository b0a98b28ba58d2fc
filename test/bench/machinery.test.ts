/**
 * The bench's machinery without a rehearsal: the /proc CPU reader against a real process tree, ratio
 * and target computation, pgbench output parsing, and the report writers on a fixture result.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseBenchArgs } from '../../lib/bench/cli';
import { atLeastShare, atMost, fewerBy, moreBy } from '../../lib/bench/checks';
import { parsePgbenchOutput, readTransactionLog } from '../../lib/bench/pgbench';
import { parseProcStat, treeCpuSeconds } from '../../lib/bench/proc';
import { renderMarkdown, renderSvg, writeReports, advantage } from '../../lib/bench/report';
import { summarize } from '../../lib/bench/runner';
import { windowStats, type Sample } from '../../lib/bench/sampler';
import { percentile, ratio } from '../../lib/bench/stats';
import type { BenchResult, ScenarioResult } from '../../lib/bench/types';

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
    expect(parseBenchArgs(['--quick', '--scenario', 'reader_added,connect_overhead', '--out=/tmp/x'])).toEqual({ quick: true, outDir: '/tmp/x', scenarios: ['reader_added', 'connect_overhead'] });
    expect(() => parseBenchArgs(['--scenario', 'nope'])).toThrow(/unknown scenario nope/);
    expect(() => parseBenchArgs(['--fast'])).toThrow(/unknown option --fast/);
  });
});
