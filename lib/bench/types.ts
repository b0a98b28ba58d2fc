/** The bench's result model: what latest.json holds and the markdown / SVG writers read. */
import type { Comparison } from './comparison';
import type { Spread } from './stats';

export const SCENARIO_NAMES = ['read_only_endpoint', 'reader_added', 'connect_overhead', 'read_write_split', 'transaction_pooling', 'pgbouncer_engine', 'engines'] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

/** A target in a form the bench can judge again (checks.ts `holds`), e.g. on the median of several runs. */
export interface TargetRule {
  /** ratio-at-most: ours / baseline <= bound ("Nx fewer"); ours-at-most: ours <= bound; and their mirrors. */
  readonly kind: 'ratio-at-most' | 'ratio-at-least' | 'ours-at-most' | 'ours-at-least';
  readonly bound: number;
  /** The word a ratio reads with ("fewer", "faster", "more"). */
  readonly word?: string;
}

/** A check over repeated runs: every run's figures and how many of them met the target. */
export interface CheckRuns {
  /** Runs the scenario was asked for (a failed run counts as one that did not meet the target). */
  readonly planned: number;
  /** Runs that measured this check and met its target. */
  readonly met: number;
  /** Whether the median figures alone meet the target (met also needs every run to). */
  readonly medianMeets: boolean;
  readonly ratio: Spread;
  readonly ours: Spread;
  readonly baseline: Spread;
}

/** One target of the issue, checked against a measured figure. */
export interface TargetCheck {
  readonly id: string;
  /** What is compared, e.g. "server connections per replica (avg)". */
  readonly metric: string;
  /** The seed's figure for the same comparison, as its article states it. */
  readonly seed: string;
  readonly baselineLabel: string;
  readonly oursLabel: string;
  readonly baseline: number;
  readonly ours: number;
  readonly unit: string;
  /** ours / baseline. */
  readonly ratio: number;
  /** Human form of the target, e.g. ">= 8x fewer". */
  readonly target: string;
  readonly rule: TargetRule;
  /** Over repeated runs: the target holds for the median AND for every run (the worst included). */
  readonly met: boolean;
  /** For the markdown: how the ratio reads, e.g. "9.1x fewer". */
  readonly reads: string;
  /** Set on a scenario's combined result: ours, baseline and ratio above are these runs' medians. */
  readonly runs?: CheckRuns;
}

/** /proc/loadavg: the run-queue averages over 1, 5 and 15 minutes. */
export interface LoadAverage {
  readonly one: number;
  readonly five: number;
  readonly fifteen: number;
}

/** The machine's load around one run of a scenario (load.ts). */
export interface RunLoad {
  readonly before: LoadAverage;
  readonly after: LoadAverage;
  readonly wallSeconds: number;
  /** CPU seconds every core of the machine spent busy during the run (/proc/stat); absent off Linux. */
  readonly machineCpuSeconds?: number;
  /** CPU seconds of the bench's own process tree during the run (its live and reaped descendants). */
  readonly benchCpuSeconds?: number;
  /** machineCpuSeconds - benchCpuSeconds: what other work on the machine took from the run. */
  readonly outsideCpuSeconds?: number;
  /** outsideCpuSeconds / wallSeconds: how many cores other work kept busy on average. */
  readonly outsideCores?: number;
}

/** The machine's load over a scenario's runs, each figure's median and range. */
export interface LoadSummary {
  readonly loadAverage1Before: Spread;
  readonly loadAverage1After: Spread;
  readonly outsideCores?: Spread;
}

export interface ScenarioResult {
  readonly name: ScenarioName;
  readonly title: string;
  /** Source article of the seed figures (work/shared/seeds/...). */
  readonly seedSource: string;
  readonly startedAt: string;
  readonly durationSeconds: number;
  /** Cores, versions, rehearsal settings, load and how it was scaled to this machine. */
  readonly environment: Record<string, unknown>;
  /** Everything measured, per side (baseline / ours / ...); on a combined result, empty (see runs). */
  readonly figures: Record<string, unknown>;
  /** ours / baseline for each compared figure; on a combined result, the runs' medians. */
  readonly ratios: Record<string, number>;
  /** On a combined result: each ratio's median, range and every run's value. */
  readonly ratioSpreads?: Record<string, Spread>;
  /** The same loads through several paths side by side (comparison.ts); on a combined result, each cell's median. */
  readonly comparison?: Comparison;
  readonly checks: ReadonlyArray<TargetCheck>;
  readonly notes: ReadonlyArray<string>;
  /** Set when the scenario failed; figures then hold what was measured before. */
  readonly error?: string;
  /** On a combined result: every run's own result, its environment with the machine's load (RunLoad). */
  readonly runs?: ReadonlyArray<ScenarioResult>;
  /** On a combined result: the machine's load over the runs. */
  readonly load?: LoadSummary;
}

export interface BenchEnvironment {
  readonly host: { readonly cores: number; readonly cpuModel: string; readonly memoryGiB: number; readonly kernel: string; readonly node: string; readonly rehearsal: string };
  readonly versions: Record<string, string>;
  /** One sentence per scenario: how the seed's load was scaled to this machine. */
  readonly scaling: Record<string, string>;
}

export interface BenchResult {
  readonly tool: 'aurora-proxy-kit bench';
  readonly mode: 'full' | 'quick';
  /** Runs of each scenario; each check is their median, met only when every run meets it. */
  readonly repeat: number;
  readonly startedAt: string;
  readonly durationSeconds: number;
  readonly environment: BenchEnvironment;
  readonly scenarios: Partial<Record<ScenarioName, ScenarioResult>>;
  readonly summary: { readonly targets: number; readonly met: number; readonly missed: ReadonlyArray<string>; readonly failedScenarios: ReadonlyArray<string> };
}
