import type { BenchEnvironment } from '../types';

/** What every scenario gets from the runner. */
export interface ScenarioContext {
  readonly quick: boolean;
  /** Result directory (failed scenarios copy their rehearsal logs there). */
  readonly outDir: string;
  /** Scratch space for pgbench logs and scripts (removed by the runner). */
  readonly scratchDir: string;
  readonly environment: BenchEnvironment;
  readonly log: (line: string) => void;
}
