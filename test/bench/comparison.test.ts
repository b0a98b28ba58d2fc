/**
 * The side-by-side table of the engines scenario without a rehearsal: runs combined into each cell's median and
 * range, the markdown, and the helpers the scenario's figures come from (the rotated path order, each client's
 * downtime at a failover).
 */
import { combineRuns } from '../../lib/bench/combine';
import { combineComparisons, renderComparison, type Comparison } from '../../lib/bench/comparison';
import { renderMarkdown } from '../../lib/bench/report';
import { summarize } from '../../lib/bench/runner';
import { clientDowntimes, rotate } from '../../lib/bench/scenarios/engines';
import type { BenchResult, ScenarioResult } from '../../lib/bench/types';

const columns = ['direct', 'analog', 'engine'];

function table(query: [number, number, number], lost: [number | null, number, number]): Comparison {
  return {
    columns,
    seedColumn: 'RDS Proxy (seed)',
    rows: [
      { metric: 'query', unit: 'ms', values: query, seed: '0.50 -> 1.24 ms' },
      { metric: 'writes lost', unit: 'writes', values: lost, seed: 'not measured' },
    ],
  };
}

function run(c: Comparison): ScenarioResult {
  return { name: 'engines', title: 'Both engines', seedSource: 's', startedAt: '2026-11-26T00:00:00Z', durationSeconds: 10, environment: {}, figures: {}, ratios: {}, comparison: c, checks: [], notes: [] };
}

describe('side-by-side comparisons', () => {
  test('GIVEN three runs WHEN their tables are combined THEN each cell is its median with its range, and a path without the load stays empty', () => {
    // GIVEN: three runs, the direct path never failing over.
    const runs = [table([0.2, 0.5, 0.7], [null, 0, 0]), table([0.3, 0.4, 0.9], [null, 0, 1]), table([0.25, 0.6, 0.8], [null, 0, 0])];
    // WHEN
    const c = combineComparisons(runs)!;
    // THEN
    expect(c.columns).toEqual(columns);
    expect(c.rows[0]).toMatchObject({ metric: 'query', values: [0.25, 0.5, 0.8] });
    expect(c.rows[0]!.spreads![2]).toEqual({ median: 0.8, min: 0.7, max: 0.9, values: [0.7, 0.9, 0.8] });
    expect(c.rows[1]).toMatchObject({ values: [null, 0, 0] });
    expect(c.rows[1]!.spreads![0]).toBeNull();
    expect(renderComparison(c)).toEqual([
      '| metric | unit | direct | analog | engine | RDS Proxy (seed) |',
      '|---|---|---|---|---|---|',
      '| query | ms | 0.25 (0.2–0.3) | 0.5 (0.4–0.6) | 0.8 (0.7–0.9) | 0.50 -> 1.24 ms |',
      '| writes lost | writes | – | 0 (0–0) | 0 (0–1) | not measured |',
    ]);
  });

  test('GIVEN runs measuring other paths WHEN combined THEN it is refused naming both column lists', () => {
    const other: Comparison = { ...table([1, 2, 3], [null, 0, 0]), columns: ['direct', 'engine', 'analog'] };
    expect(() => combineComparisons([table([1, 2, 3], [null, 0, 0]), other])).toThrow(/run 2 has columns \["direct","engine","analog"\], the first run \["direct","analog","engine"\]/);
    expect(combineComparisons([])).toBeUndefined();
  });

  test('GIVEN a scenario run twice with a table WHEN combined and rendered THEN the markdown carries every column beside the seed', () => {
    // GIVEN
    const combined = combineRuns('engines', [run(table([0.2, 0.5, 0.7], [null, 0, 0])), run(table([0.4, 0.7, 0.9], [null, 0, 0]))]);
    const result: BenchResult = {
      tool: 'aurora-proxy-kit bench',
      mode: 'quick',
      repeat: 2,
      startedAt: '2026-11-26T00:00:00Z',
      durationSeconds: 20,
      environment: { host: { cores: 2, cpuModel: 'cpu', memoryGiB: 24, kernel: '6', node: 'v20', rehearsal: 'namespaces' }, versions: {}, scaling: { read_only_endpoint: '', reader_added: '', connect_overhead: '', read_write_split: '', transaction_pooling: '', pgbouncer_engine: '', engines: 'scaled' } },
      scenarios: { engines: combined },
      summary: summarize({ engines: combined }),
    };
    // WHEN
    const md = renderMarkdown(result);
    // THEN
    expect(combined.comparison?.rows[0]?.values).toEqual([0.3, 0.6, 0.8]);
    expect(md).toContain('## Side by side: Both engines');
    expect(md).toContain('| query | ms | 0.3 (0.2–0.4) | 0.6 (0.5–0.7) | 0.8 (0.7–0.9) | 0.50 -> 1.24 ms |');
  });
});

describe('the engines scenario\'s figures', () => {
  test('GIVEN four paths WHEN rotated per round THEN each round starts with the next path and keeps every path once', () => {
    expect(rotate(['a', 'b', 'c', 'd'], 0)).toEqual(['a', 'b', 'c', 'd']);
    expect(rotate(['a', 'b', 'c', 'd'], 1)).toEqual(['b', 'c', 'd', 'a']);
    expect(rotate(['a', 'b', 'c', 'd'], 5)).toEqual(['b', 'c', 'd', 'a']);
    expect(rotate([], 3)).toEqual([]);
  });

  test('GIVEN acknowledgements of three clients around a failover WHEN downtimes are taken THEN each is that client\'s longest stretch without one, the window\'s ends included', () => {
    // GIVEN: client 0 stalls 400 ms, client 1 stalls 900 ms, client 2 never writes again after 100.
    const acks = [
      { client: 0, id: 1, at: 100 }, { client: 0, id: 2, at: 500 }, { client: 0, id: 3, at: 900 },
      { client: 1, id: 4, at: 50 }, { client: 1, id: 5, at: 950 }, { client: 1, id: 6, at: 1000 },
      { client: 2, id: 7, at: 100 },
      // Outside the window: not counted.
      { client: 2, id: 8, at: 1500 },
    ];
    // WHEN
    const d = clientDowntimes(acks, 3, 0, 1000);
    // THEN
    expect(d).toEqual([400, 900, 900]);
    expect(clientDowntimes([], 2, 0, 250)).toEqual([250, 250]);
  });
});
