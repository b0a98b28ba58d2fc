/** Small statistics helpers of the bench. */

/** Nearest-rank percentile (p in 0..100) of unsorted values; NaN when empty. */
export function percentile(values: ReadonlyArray<number>, p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export function mean(values: ReadonlyArray<number>): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

export function round(n: number, digits = 3): number {
  if (!Number.isFinite(n)) return n;
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** Our figure divided by the baseline's (the definition of every `ratios` entry). */
export function ratio(ours: number, baseline: number): number {
  if (baseline === 0) return ours === 0 ? 1 : Number.POSITIVE_INFINITY;
  return ours / baseline;
}

/** Middle value of unsorted values (the mean of the two middle ones for an even count); NaN when empty. */
export function median(values: ReadonlyArray<number>): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A figure over repeated runs: its median, its range, and every run's value in run order. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly values: ReadonlyArray<number>;
}

/** The median and range of `values` (kept in run order); NaN figures when empty. */
export function spread(values: ReadonlyArray<number>): Spread {
  return { median: median(values), min: values.length === 0 ? Number.NaN : Math.min(...values), max: values.length === 0 ? Number.NaN : Math.max(...values), values: [...values] };
}
