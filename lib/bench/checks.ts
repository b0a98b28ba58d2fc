/** Builds TargetChecks: the ratio is always ours / baseline; the target says which way is better. */
import { ratio, round } from './stats';
import type { TargetCheck } from './types';

/** What a scenario measured; the builders below derive ratio, target, met and reads from it. */
type Common = Pick<TargetCheck, 'id' | 'metric' | 'seed' | 'baselineLabel' | 'oursLabel' | 'baseline' | 'ours' | 'unit'>;

/** Ours must be at least `factor` times lower than the baseline (ratio <= 1/factor). */
export function fewerBy(c: Common & { readonly factor: number; readonly word?: string }): TargetCheck {
  const r = ratio(c.ours, c.baseline);
  const word = c.word ?? 'fewer';
  const reads = c.ours === 0 ? `none (baseline ${round(c.baseline, 2)})` : `${round(1 / r, 2)}x ${word}`;
  return { ...base(c), ratio: round(r, 4), target: `>= ${c.factor}x ${word}`, met: r <= 1 / c.factor + 1e-9, reads };
}

/** Ours must be at least `factor` times the baseline (ratio >= factor). */
export function moreBy(c: Common & { readonly factor: number; readonly word?: string }): TargetCheck {
  const r = ratio(c.ours, c.baseline);
  const word = c.word ?? 'more';
  return { ...base(c), ratio: round(r, 4), target: `>= ${c.factor}x ${word}`, met: r >= c.factor - 1e-9, reads: `${round(r, 2)}x ${word}` };
}

/** An absolute bound on ours (e.g. 0 errors, <= 0.1 ms added); the ratio is still ours / baseline. */
export function atMost(c: Common & { readonly limit: number; readonly what?: string }): TargetCheck {
  return { ...base(c), ratio: round(ratio(c.ours, c.baseline), 4), target: `<= ${c.limit} ${c.unit}`.trim(), met: c.ours <= c.limit, reads: `${round(c.ours, 4)} ${c.unit}`.trim() };
}

/** A share (0..1) that must reach `min`. */
export function atLeastShare(c: Common & { readonly min: number }): TargetCheck {
  return { ...base(c), ratio: round(ratio(c.ours, c.baseline), 4), target: `>= ${Math.round(c.min * 100)}%`, met: c.ours >= c.min, reads: `${round(c.ours * 100, 1)}%` };
}

function base(c: Common): Omit<TargetCheck, 'ratio' | 'target' | 'met' | 'reads'> {
  return { id: c.id, metric: c.metric, seed: c.seed, baselineLabel: c.baselineLabel, oursLabel: c.oursLabel, baseline: round(c.baseline, 4), ours: round(c.ours, 4), unit: c.unit };
}
