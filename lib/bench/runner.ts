/**
 * Runs the scenarios one after another (each on its own rehearsal and address block), each `repeat` times
 * in a row with the machine's load recorded around every run, combines each scenario's runs (combine.ts),
 * then writes latest.json, latest.md and latest.svg into the result directory.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchEnvironment } from './environment';
import { combineRuns } from './combine';
import { loadSnapshot, runLoad } from './load';
import { writeReports } from './report';
import { connectOverhead } from './scenarios/connect-overhead';
import type { ScenarioContext } from './scenarios/context';
import { readOnlyEndpoint } from './scenarios/read-only-endpoint';
import { readWriteSplit } from './scenarios/read-write-split';
import { readerAdded } from './scenarios/reader-added';
import { transactionPooling } from './scenarios/transaction-pooling';
import { pgbouncerEngine } from './scenarios/pgbouncer-engine';
import { engines } from './scenarios/engines';
import { SEED_SOURCES } from './seed-figures';
import { round } from './stats';
import { SCENARIO_NAMES, type BenchResult, type ScenarioName, type ScenarioResult } from './types';

export const SCENARIOS: Record<ScenarioName, (ctx: ScenarioContext) => Promise<ScenarioResult>> = {
  read_only_endpoint: readOnlyEndpoint,
  reader_added: readerAdded,
  connect_overhead: connectOverhead,
  read_write_split: readWriteSplit,
  transaction_pooling: transactionPooling,
  pgbouncer_engine: pgbouncerEngine,
  engines,
};

/** Runs of each scenario when --repeat is not given: one for --quick (a smoke run), three for a full run. */
export function defaultRepeat(quick: boolean): number {
  return quick ? 1 : 3;
}

export interface BenchOptions {
  readonly quick?: boolean;
  /** @default defaultRepeat(quick) */
  readonly repeat?: number;
  readonly scenarios?: ReadonlyArray<ScenarioName>;
  readonly outDir: string;
  readonly log?: (line: string) => void;
}

export function summarize(scenarios: BenchResult['scenarios']): BenchResult['summary'] {
  const all = Object.values(scenarios).flatMap((s) => s?.checks ?? []);
  return {
    targets: all.length,
    met: all.filter((c) => c.met).length,
    missed: all.filter((c) => !c.met).map((c) => c.id),
    failedScenarios: Object.values(scenarios).filter((s) => s?.error !== undefined).map((s) => s!.name),
  };
}

/**
 * Runs one scenario `repeat` times, one run after another, each run's environment carrying the machine's
 * load around it (RunLoad under `load`); a run that throws becomes a failed run (`failed`) and the next
 * one still runs. Returns the runs combined.
 */
export async function runRepeated(options: {
  readonly name: ScenarioName;
  readonly repeat: number;
  readonly run: () => Promise<ScenarioResult>;
  readonly failed: (startedAt: number, message: string) => ScenarioResult;
  readonly log: (line: string) => void;
}): Promise<ScenarioResult> {
  const { name, repeat, log } = options;
  const runs: ScenarioResult[] = [];
  for (let i = 1; i <= repeat; i++) {
    const t0 = Date.now();
    const before = loadSnapshot();
    let result: ScenarioResult;
    try {
      result = await options.run();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      log(`bench: ${name} run ${i}/${repeat} FAILED after ${round((Date.now() - t0) / 1000, 1)} s: ${message}`);
      result = options.failed(t0, message);
    }
    const load = runLoad(before, loadSnapshot());
    runs.push({ ...result, environment: { ...result.environment, load } });
    const outside = load.outsideCores !== undefined ? `, ${load.outsideCores} cores busy outside the bench` : '';
    if (result.error === undefined) {
      log(`bench: ${name} run ${i}/${repeat} done in ${round((Date.now() - t0) / 1000, 1)} s (loadavg ${load.before.one} -> ${load.after.one}${outside}): ${result.checks.map((c) => `${c.id} ${c.reads} (${c.met ? 'met' : 'missed'})`).join('; ')}`);
    }
  }
  return combineRuns(name, runs, repeat);
}

export async function runBench(options: BenchOptions): Promise<{ result: BenchResult; files: string[] }> {
  const quick = options.quick ?? false;
  const repeat = options.repeat ?? defaultRepeat(quick);
  const log = options.log ?? ((line: string): void => void process.stdout.write(`${line}\n`));
  const names = options.scenarios ?? SCENARIO_NAMES;
  mkdirSync(options.outDir, { recursive: true });
  const scratchDir = mkdtempSync(join(tmpdir(), 'bench-scratch-'));
  const started = Date.now();
  const environment = benchEnvironment(quick);
  const scenarios: Partial<Record<ScenarioName, ScenarioResult>> = {};
  try {
    for (const [index, name] of names.entries()) {
      log(`bench: [${index + 1}/${names.length}] ${name}, ${repeat} run${repeat === 1 ? '' : 's'} ...`);
      const s = await runRepeated({
        name,
        repeat,
        log,
        run: () => SCENARIOS[name]({ quick, outDir: options.outDir, scratchDir, environment, log }),
        failed: (t0, message) => ({
          name,
          title: name,
          seedSource: SEED_SOURCES[name],
          startedAt: new Date(t0).toISOString(),
          durationSeconds: round((Date.now() - t0) / 1000, 1),
          environment: { ...environment, scaling: environment.scaling[name] },
          figures: {},
          ratios: {},
          checks: [],
          notes: [],
          error: message,
        }),
      });
      scenarios[name] = s;
      log(`bench: ${name}: ${s.checks.map((c) => `${c.id} ${c.reads} (${c.met ? 'met' : 'missed'}; met in ${c.runs?.met ?? 0} of ${repeat} runs)`).join('; ')}`);
    }
  } finally {
    rmSync(scratchDir, { recursive: true, force: true });
  }
  const result: BenchResult = {
    tool: 'aurora-proxy-kit bench',
    mode: quick ? 'quick' : 'full',
    repeat,
    startedAt: new Date(started).toISOString(),
    durationSeconds: round((Date.now() - started) / 1000, 1),
    environment,
    scenarios,
    summary: summarize(scenarios),
  };
  return { result, files: writeReports(result, options.outDir) };
}
