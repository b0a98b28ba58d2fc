/**
 * One result per scenario from its repeated runs: each check's ours, baseline and ratio are the runs'
 * medians, with their spread, and a target is met only when the median meets it AND every run does (a
 * single run on a busy machine is not a measurement; a median alone would hide a run that missed).
 */
import { holds, readsAs } from './checks';
import { combineComparisons } from './comparison';
import { round, spread, type Spread } from './stats';
import type { CheckRuns, LoadSummary, RunLoad, ScenarioName, ScenarioResult, TargetCheck } from './types';

function combineCheck(id: string, measured: ReadonlyArray<TargetCheck>, planned: number): TargetCheck {
  const first = measured[0]!;
  const ratio = spread(measured.map((c) => c.ratio));
  const ours = spread(measured.map((c) => c.ours));
  const baseline = spread(measured.map((c) => c.baseline));
  const medianMeets = holds(first.rule, { ours: ours.median, ratio: ratio.median });
  const met = measured.filter((c) => c.met).length;
  const runs: CheckRuns = { planned, met, medianMeets, ratio, ours, baseline };
  return {
    ...first,
    id,
    ours: round(ours.median, 4),
    baseline: round(baseline.median, 4),
    ratio: round(ratio.median, 4),
    met: medianMeets && met === planned,
    reads: readsAs(first.rule, { ours: ours.median, baseline: baseline.median, ratio: ratio.median, unit: first.unit }),
    runs,
  };
}

function loadSummary(loads: ReadonlyArray<RunLoad>): LoadSummary | undefined {
  if (loads.length === 0) return undefined;
  const outside = loads.map((l) => l.outsideCores).filter((n): n is number => n !== undefined);
  return {
    loadAverage1Before: spread(loads.map((l) => l.before.one)),
    loadAverage1After: spread(loads.map((l) => l.after.one)),
    ...(outside.length > 0 ? { outsideCores: spread(outside) } : {}),
  };
}

function runLoadOf(run: ScenarioResult): RunLoad | undefined {
  return run.environment.load as RunLoad | undefined;
}

/**
 * Combines `runs` (in run order, failed ones included) of scenario `name` that was asked to run `planned` times.
 * A failed run makes the combined result failed too, and no check can be met in every run.
 */
export function combineRuns(name: ScenarioName, runs: ReadonlyArray<ScenarioResult>, planned = runs.length): ScenarioResult {
  if (runs.length === 0) throw new Error(`combineRuns: no runs of ${name} to combine`);
  const measured = runs.filter((r) => r.error === undefined);
  const source = measured[0] ?? runs[0]!;
  const ids = [...new Set(runs.flatMap((r) => r.checks.map((c) => c.id)))];
  const checks = ids.map((id) => combineCheck(id, runs.flatMap((r) => r.checks.filter((c) => c.id === id)), planned));
  const ratioNames = [...new Set(measured.flatMap((r) => Object.keys(r.ratios)))];
  const ratioSpreads: Record<string, Spread> = Object.fromEntries(ratioNames.map((k) => [k, spread(measured.map((r) => r.ratios[k]).filter((v): v is number => v !== undefined))]));
  const errors = runs.flatMap((r, i) => (r.error === undefined ? [] : [`run ${i + 1} of ${planned}: ${r.error}`]));
  const comparison = combineComparisons(measured.flatMap((r) => (r.comparison === undefined ? [] : [r.comparison])));
  const load = loadSummary(runs.map(runLoadOf).filter((l): l is RunLoad => l !== undefined));
  // Each run's load stays with its run; the combined result carries the summary instead.
  const environment = Object.fromEntries(Object.entries(source.environment).filter(([k]) => k !== 'load'));
  return {
    name,
    title: source.title,
    seedSource: source.seedSource,
    startedAt: runs[0]!.startedAt,
    durationSeconds: round(runs.reduce((sum, r) => sum + r.durationSeconds, 0), 1),
    environment,
    figures: {},
    ratios: Object.fromEntries(Object.entries(ratioSpreads).map(([k, s]) => [k, round(s.median, 4)])),
    ratioSpreads,
    ...(comparison !== undefined ? { comparison } : {}),
    checks,
    notes: [...new Set(measured.flatMap((r) => r.notes))],
    ...(errors.length > 0 ? { error: errors.join('; ') } : {}),
    runs,
    ...(load !== undefined ? { load } : {}),
  };
}
