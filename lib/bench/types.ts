/** The bench's result model: what latest.json holds and the markdown / SVG writers read. */

export const SCENARIO_NAMES = ['read_only_endpoint', 'reader_added', 'connect_overhead', 'read_write_split', 'transaction_pooling', 'pgbouncer_engine'] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

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
  readonly met: boolean;
  /** For the markdown: how the ratio reads, e.g. "9.1x fewer". */
  readonly reads: string;
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
  /** Everything measured, per side (baseline / ours / ...). */
  readonly figures: Record<string, unknown>;
  /** ours / baseline for each compared figure. */
  readonly ratios: Record<string, number>;
  readonly checks: ReadonlyArray<TargetCheck>;
  readonly notes: ReadonlyArray<string>;
  /** Set when the scenario failed; figures then hold what was measured before. */
  readonly error?: string;
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
  readonly startedAt: string;
  readonly durationSeconds: number;
  readonly environment: BenchEnvironment;
  readonly scenarios: Partial<Record<ScenarioName, ScenarioResult>>;
  readonly summary: { readonly targets: number; readonly met: number; readonly missed: ReadonlyArray<string>; readonly failedScenarios: ReadonlyArray<string> };
}
