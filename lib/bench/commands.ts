/**
 * The bench's and the demo's command specs (`npx aurora-proxy-kit bench|demo`): their options, which
 * their parsers and `--help` both read. Apart from the commands themselves, so `--help` loads no
 * rehearsal.
 */
import { CliUsageError, type CliCommand } from '../cli/spec';
import { SCENARIO_NAMES, type ScenarioName } from './types';

export class BenchUsageError extends CliUsageError {}

export const DEFAULT_BENCH_OUT = 'bench-results';

/** Bounds of --repeat: one run is a smoke run; past 20 a full bench would take hours on 2 cores. */
export const MIN_REPEAT = 1;
export const MAX_REPEAT = 20;

/** `--repeat N`, checked; undefined = the mode's default (runner.ts defaultRepeat). */
export function repeatOption(given: string | undefined): { repeat?: number } {
  if (given === undefined) return {};
  const n = /^\d+$/.test(given.trim()) ? Number(given.trim()) : Number.NaN;
  if (!(n >= MIN_REPEAT && n <= MAX_REPEAT)) {
    throw new BenchUsageError(`--repeat ${JSON.stringify(given)} is not a whole number of runs from ${MIN_REPEAT} to ${MAX_REPEAT}: give e.g. --repeat 3 (a median of three runs, the full bench's default) or --repeat 1 (one run, --quick's default)`);
  }
  return { repeat: n };
}

export const BENCH_COMMAND: CliCommand = {
  name: 'bench',
  summary: 'The seed articles\' experiments on the local rehearsal, each against the local analog of its baseline; each scenario --repeat times, each target judged on the median of the runs and their spread; writes DIR/latest.json, latest.md and latest.svg. About 10 minutes per run of every scenario on 2 cores, so about 30 for the default three.',
  options: [
    { name: '--quick', description: 'shorter runs: fewer waves and loops (default: the full runs)' },
    { name: '--scenario', value: 'NAME[,NAME...]', default: `all: ${SCENARIO_NAMES.join(', ')}`, description: 'the scenarios to run; repeatable' },
    { name: '--repeat', value: 'N', default: '3, or 1 with --quick', description: `runs of each scenario, one after another (${MIN_REPEAT}-${MAX_REPEAT}); each target is judged on the runs' median and met only when every run meets it` },
    { name: '--out', value: 'DIR', default: DEFAULT_BENCH_OUT, description: 'where the reports are written' },
  ],
  notes: ['Needs what `rehearse up` needs (`make deps`, `make pgbouncer`) and pgbench; each scenario runs its own rehearsal on a loopback block of its own.'],
  exitCodes: [
    [0, 'the bench ran (targets met or missed: see the summary)'],
    [1, 'a scenario failed'],
    [2, 'bad usage: nothing was started'],
  ],
};

/** `--scenario a,b --scenario c`, each name checked; none given = every scenario (runBench's default). */
export function scenarioList(given: ReadonlyArray<string> = []): { scenarios?: ScenarioName[] } {
  const scenarios = given.flatMap((v) => v.split(','));
  const unknown = scenarios.find((s) => !(SCENARIO_NAMES as readonly string[]).includes(s));
  if (unknown !== undefined) throw new BenchUsageError(`unknown scenario ${unknown}: use one of ${SCENARIO_NAMES.join(', ')}`);
  return scenarios.length > 0 ? { scenarios: scenarios as ScenarioName[] } : {};
}

export const DEMO_SCENARIOS: ScenarioName[] = ['read_only_endpoint', 'connect_overhead'];

/** `aurora-proxy-kit demo`: its options, which runDemo parses and `--help` prints. */
export const DEMO_COMMAND: CliCommand = {
  name: 'demo',
  summary: 'Rehearses what was synthesized (or planned) on its own loopback block: the deployment\'s consumers run their shipped bundles under the Lambda runtime interface emulator on Node.js 24 through each endpoint (cold and warm invocations timed apart), then a short bench (--quick), the rehearsal down (always), and a summary. `make demo` synthesizes first and runs it.',
  options: [
    { name: '--from', value: 'PATH', default: 'cdk.out, then cdk.out/pgbouncer-engine when it exists', description: 'a cdk.out directory, or a plan\'s JSON (terraform show -json <planfile> > plan.json); repeatable: each is rehearsed in turn' },
    { name: '--out', value: 'DIR', default: 'bench-results/demo', description: 'where the bench reports are written' },
    { name: '--scenario', value: 'NAME[,NAME...]', default: DEMO_SCENARIOS.join(', '), description: `bench scenarios to run (${SCENARIO_NAMES.join(', ')}); repeatable` },
  ],
  exitCodes: [
    [0, 'the demo ran'],
    [1, 'a step or a bench scenario failed'],
    [2, 'bad usage: nothing was started'],
  ],
};
