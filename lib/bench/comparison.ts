/**
 * Side-by-side figures: the same loads through several paths, one column per path, the seeds' figure beside
 * each row. A run measures one table; repeated runs combine into each cell's median with its range, and the
 * markdown prints it as its own table (a check compares two figures only, this compares every path at once).
 */
import { round, spread, type Spread } from './stats';

export interface ComparisonRow {
  /** What the row measures, e.g. "query on an open connection". */
  readonly metric: string;
  readonly unit: string;
  /** One figure per column, null where the load does not apply to that path. */
  readonly values: ReadonlyArray<number | null>;
  /** The seeds' figure for the same measurement, as their article states it (or why there is none). */
  readonly seed: string;
  /** On a combined result: each cell's spread over the runs that measured it (null where none did). */
  readonly spreads?: ReadonlyArray<Spread | null>;
}

export interface Comparison {
  /** The paths, in column order. */
  readonly columns: ReadonlyArray<string>;
  /** The heading of the seeds' column, e.g. "RDS Proxy (seed)". */
  readonly seedColumn: string;
  readonly rows: ReadonlyArray<ComparisonRow>;
}

/**
 * Each cell's median and range over `runs` (in run order). Rows are matched by metric and columns by
 * position; a run whose columns differ from the first's is refused, since its cells would land under
 * another path's heading.
 */
export function combineComparisons(runs: ReadonlyArray<Comparison>): Comparison | undefined {
  const first = runs[0];
  if (first === undefined) return undefined;
  for (const [i, run] of runs.entries()) {
    if (run.columns.length !== first.columns.length || run.columns.some((c, k) => c !== first.columns[k])) {
      throw new Error(`combineComparisons: run ${i + 1} has columns ${JSON.stringify(run.columns)}, the first run ${JSON.stringify(first.columns)}: runs of one scenario must measure the same paths`);
    }
  }
  const metrics = [...new Set(runs.flatMap((r) => r.rows.map((row) => row.metric)))];
  const rows = metrics.map((metric): ComparisonRow => {
    const measured = runs.flatMap((r) => r.rows.filter((row) => row.metric === metric));
    const template = measured[0]!;
    const spreads = first.columns.map((_, k) => {
      const cells = measured.map((row) => row.values[k]).filter((v): v is number => v !== null && v !== undefined && Number.isFinite(v));
      return cells.length === 0 ? null : spread(cells);
    });
    return { metric, unit: template.unit, seed: template.seed, values: spreads.map((s) => (s === null ? null : round(s.median, 4))), spreads };
  });
  return { columns: first.columns, seedColumn: first.seedColumn, rows };
}

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const fmt = (n: number): string => (Number.isFinite(n) ? String(round(n, Math.abs(n) >= 100 ? 1 : 3)) : String(n));

function figure(value: number | null, s: Spread | null | undefined): string {
  if (value === null) return '–';
  if (s === null || s === undefined || s.values.length < 2) return fmt(value);
  return `${fmt(value)} (${fmt(s.min)}–${fmt(s.max)})`;
}

/** The markdown table: metric, unit, one column per path (median and range over the runs), the seeds' figure. */
export function renderComparison(c: Comparison): string[] {
  return [
    `| metric | unit | ${c.columns.map(cell).join(' | ')} | ${cell(c.seedColumn)} |`,
    `|---|---|${c.columns.map(() => '---|').join('')}---|`,
    ...c.rows.map((row) => `| ${cell(row.metric)} | ${cell(row.unit)} | ${row.values.map((v, k) => figure(v, row.spreads?.[k])).join(' | ')} | ${cell(row.seed)} |`),
  ];
}
