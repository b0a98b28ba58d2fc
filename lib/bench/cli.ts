/**
 * The bench command (`npx aurora-proxy-kit bench`): its options (BENCH_COMMAND, which the parser and
 * `--help` both read), its parser and its run. Progress (per scenario, per side) goes to stderr; the
 * closing summary to stdout.
 */
import { resolve } from 'node:path';
import { CliUsageError, parseOptions, type CliCommand } from '../cli/spec';
import { runBench } from './runner';
import { SCENARIO_NAMES, type ScenarioName } from './types';

export class BenchUsageError extends CliUsageError {}

export const DEFAULT_BENCH_OUT = 'bench-results';

export const BENCH_COMMAND: CliCommand = {
  name: 'bench',
  summary: 'The seed articles\' experiments on the local rehearsal, each against the local analog of its baseline; writes DIR/latest.json, latest.md and latest.svg. About 10 minutes on 2 cores.',
  options: [
    { name: '--quick', description: 'shorter runs: fewer waves and loops (default: the full runs)' },
    { name: '--scenario', value: 'NAME[,NAME...]', default: `all: ${SCENARIO_NAMES.join(', ')}`, description: 'the scenarios to run; repeatable' },
    { name: '--out', value: 'DIR', default: DEFAULT_BENCH_OUT, description: 'where the reports are written' },
  ],
  notes: ['Needs what `rehearse up` needs (`make deps`, `make pgbouncer`) and pgbench; each scenario runs its own rehearsal on a loopback block of its own.'],
  exitCodes: [
    [0, 'the bench ran (targets met or missed: see the summary)'],
    [1, 'a scenario failed'],
    [2, 'bad usage: nothing was started'],
  ],
};

export function parseBenchArgs(argv: string[]): { quick: boolean; scenarios?: ScenarioName[]; outDir: string } {
  const { values, repeated, flags } = parseOptions(argv, { options: BENCH_COMMAND.options, commandName: 'bench' }, BenchUsageError);
  return { quick: flags.has('--quick'), outDir: resolve(values.get('--out') ?? DEFAULT_BENCH_OUT), ...scenarioList(repeated.get('--scenario')) };
}

/** `--scenario a,b --scenario c`, each name checked; none given = every scenario (runBench's default). */
export function scenarioList(given: ReadonlyArray<string> = []): { scenarios?: ScenarioName[] } {
  const scenarios = given.flatMap((v) => v.split(','));
  const unknown = scenarios.find((s) => !(SCENARIO_NAMES as readonly string[]).includes(s));
  if (unknown !== undefined) throw new BenchUsageError(`unknown scenario ${unknown}: use one of ${SCENARIO_NAMES.join(', ')}`);
  return scenarios.length > 0 ? { scenarios: scenarios as ScenarioName[] } : {};
}

/** Runs the bench, its progress through `log`; returns the closing summary and whether a scenario failed. */
export async function runBenchCommand(argv: string[], log?: (line: string) => void): Promise<{ output: string; failed: boolean }> {
  const { result, files } = await runBench({ ...parseBenchArgs(argv), ...(log !== undefined ? { log } : {}) });
  const s = result.summary;
  return {
    output:
      `bench (${result.mode}) finished in ${result.durationSeconds} s: ${s.met}/${s.targets} targets met${s.missed.length > 0 ? `; missed: ${s.missed.join(', ')}` : ''}${s.failedScenarios.length > 0 ? `; FAILED scenarios: ${s.failedScenarios.join(', ')}` : ''}\n` +
      `wrote ${files.join(', ')}`,
    failed: s.failedScenarios.length > 0,
  };
}
