/** Builds TargetChecks: the ratio is always ours / baseline; the target says which way is better. */
import { ratio, round } from './stats';
import type { TargetCheck, TargetRule } from './types';

/** What a scenario measured; the builders below derive ratio, target, met and reads from it. */
type Common = Pick<TargetCheck, 'id' | 'metric' | 'seed' | 'baselineLabel' | 'oursLabel' | 'baseline' | 'ours' | 'unit'>;

/**
 * Whether the rule holds for one set of figures. The one place a target is judged, so a run's check and the
 * median of several runs (combine.ts) are judged alike.
 */
export function holds(rule: TargetRule, figures: { readonly ours: number; readonly ratio: number }): boolean {
  switch (rule.kind) {
    // The tolerance absorbs the float error of 1 / factor (e.g. 10 / 80 against 1 / 8).
    case 'ratio-at-most':
      return figures.ratio <= rule.bound + 1e-9;
    case 'ratio-at-least':
      return figures.ratio >= rule.bound - 1e-9;
    case 'ours-at-most':
      return figures.ours <= rule.bound;
    case 'ours-at-least':
      return figures.ours >= rule.bound;
  }
}

/** How the figures read in the markdown, e.g. "9.1x fewer", "0.3 ms", "33%". */
export function readsAs(rule: TargetRule, figures: { readonly ours: number; readonly baseline: number; readonly ratio: number; readonly unit: string }): string {
  const word = rule.word ?? '';
  switch (rule.kind) {
    case 'ratio-at-most':
      return figures.ours === 0 ? `none (baseline ${round(figures.baseline, 2)})` : `${round(1 / figures.ratio, 2)}x ${word}`;
    case 'ratio-at-least':
      return `${round(figures.ratio, 2)}x ${word}`;
    case 'ours-at-most':
      return `${round(figures.ours, 4)} ${figures.unit}`.trim();
    case 'ours-at-least':
      return `${round(figures.ours * 100, 1)}%`;
  }
}

function build(c: Common, rule: TargetRule, target: string, r: number): TargetCheck {
  return { ...base(c), ratio: round(r, 4), target, rule, met: holds(rule, { ours: c.ours, ratio: r }), reads: readsAs(rule, { ours: c.ours, baseline: c.baseline, ratio: r, unit: c.unit }) };
}

/** Ours must be at least `factor` times lower than the baseline (ratio <= 1/factor). */
export function fewerBy(c: Common & { readonly factor: number; readonly word?: string }): TargetCheck {
  const word = c.word ?? 'fewer';
  return build(c, { kind: 'ratio-at-most', bound: 1 / c.factor, word }, `>= ${c.factor}x ${word}`, ratio(c.ours, c.baseline));
}

/** Ours must be at least `factor` times the baseline (ratio >= factor). */
export function moreBy(c: Common & { readonly factor: number; readonly word?: string }): TargetCheck {
  const word = c.word ?? 'more';
  return build(c, { kind: 'ratio-at-least', bound: c.factor, word }, `>= ${c.factor}x ${word}`, ratio(c.ours, c.baseline));
}

/** An absolute bound on ours (e.g. 0 errors, <= 0.1 ms added); the ratio is still ours / baseline. */
export function atMost(c: Common & { readonly limit: number; readonly what?: string }): TargetCheck {
  return build(c, { kind: 'ours-at-most', bound: c.limit }, `<= ${c.limit} ${c.unit}`.trim(), ratio(c.ours, c.baseline));
}

/** A share (0..1) that must reach `min`. */
export function atLeastShare(c: Common & { readonly min: number }): TargetCheck {
  return build(c, { kind: 'ours-at-least', bound: c.min }, `>= ${Math.round(c.min * 100)}%`, ratio(c.ours, c.baseline));
}

function base(c: Common): Omit<TargetCheck, 'ratio' | 'target' | 'rule' | 'met' | 'reads'> {
  return { id: c.id, metric: c.metric, seed: c.seed, baselineLabel: c.baselineLabel, oursLabel: c.oursLabel, baseline: round(c.baseline, 4), ours: round(c.ours, 4), unit: c.unit };
}
