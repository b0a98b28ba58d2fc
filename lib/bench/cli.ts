/**
 * The bench command (`npx aurora-proxy-kit bench`): its options (BENCH_COMMAND in commands.ts, which the parser and
 * `--help` both read), its parser and its run. Progress (per scenario, per side) goes to stderr; the
 * closing summary to stdout.
 */
import { resolve } from 'node:path';
import { parseOptions } from '../cli/spec';
import { BENCH_COMMAND, BenchUsageError, DEFAULT_BENCH_OUT, repeatOption, scenarioList } from './commands';
import { defaultRepeat, runBench } from './runner';
import type { ScenarioName } from './types';

export { BENCH_COMMAND, BenchUsageError, DEFAULT_BENCH_OUT, repeatOption, scenarioList } from './commands';

export function parseBenchArgs(argv: string[]): { quick: boolean; repeat: number; scenarios?: ScenarioName[]; outDir: string } {
  const { values, repeated, flags } = parseOptions(argv, { options: BENCH_COMMAND.options, commandName: 'bench' }, BenchUsageError);
  const quick = flags.has('--quick');
  return { quick, repeat: repeatOption(values.get('--repeat')).repeat ?? defaultRepeat(quick), outDir: resolve(values.get('--out') ?? DEFAULT_BENCH_OUT), ...scenarioList(repeated.get('--scenario')) };
}

/** Runs the bench, its progress through `log`; returns the closing summary and whether a scenario failed. */
export async function runBenchCommand(argv: string[], log?: (line: string) => void): Promise<{ output: string; failed: boolean }> {
  const { result, files } = await runBench({ ...parseBenchArgs(argv), ...(log !== undefined ? { log } : {}) });
  const s = result.summary;
  return {
    output:
      `bench (${result.mode}, ${result.repeat} run${result.repeat === 1 ? '' : 's'} of each scenario) finished in ${result.durationSeconds} s: ${s.met}/${s.targets} targets met${s.missed.length > 0 ? `; missed: ${s.missed.join(', ')}` : ''}${s.failedScenarios.length > 0 ? `; FAILED scenarios: ${s.failedScenarios.join(', ')}` : ''}\n` +
      `wrote ${files.join(', ')}`,
    failed: s.failedScenarios.length > 0,
  };
}
