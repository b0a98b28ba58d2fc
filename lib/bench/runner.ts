/**
 * Runs the scenarios one after another (each on its own rehearsal and address block), then writes
 * latest.json, latest.md and latest.svg into the result directory.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchEnvironment } from './environment';
import { writeReports } from './report';
import { connectOverhead } from './scenarios/connect-overhead';
import type { ScenarioContext } from './scenarios/context';
import { readOnlyEndpoint } from './scenarios/read-only-endpoint';
import { readWriteSplit } from './scenarios/read-write-split';
import { readerAdded } from './scenarios/reader-added';
import { transactionPooling } from './scenarios/transaction-pooling';
import { pgbouncerEngine } from './scenarios/pgbouncer-engine';
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
};

export interface BenchOptions {
  readonly quick?: boolean;
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

export async function runBench(options: BenchOptions): Promise<{ result: BenchResult; files: string[] }> {
  const quick = options.quick ?? false;
  const log = options.log ?? ((line: string): void => void process.stdout.write(`${line}\n`));
  const names = options.scenarios ?? SCENARIO_NAMES;
  mkdirSync(options.outDir, { recursive: true });
  const scratchDir = mkdtempSync(join(tmpdir(), 'bench-scratch-'));
  const started = Date.now();
  const environment = benchEnvironment(quick);
  const scenarios: Partial<Record<ScenarioName, ScenarioResult>> = {};
  try {
    for (const [index, name] of names.entries()) {
      const t0 = Date.now();
      log(`bench: [${index + 1}/${names.length}] ${name} ...`);
      try {
        scenarios[name] = await SCENARIOS[name]({ quick, outDir: options.outDir, scratchDir, environment, log });
        const s = scenarios[name]!;
        log(`bench: ${name} done in ${round((Date.now() - t0) / 1000, 1)} s: ${s.checks.map((c) => `${c.id} ${c.reads} (${c.met ? 'met' : 'missed'})`).join('; ')}`);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        log(`bench: ${name} FAILED after ${round((Date.now() - t0) / 1000, 1)} s: ${message}`);
        scenarios[name] = {
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
        };
      }
    }
  } finally {
    rmSync(scratchDir, { recursive: true, force: true });
  }
  const result: BenchResult = {
    tool: 'aurora-proxy-kit bench',
    mode: quick ? 'quick' : 'full',
    startedAt: new Date(started).toISOString(),
    durationSeconds: round((Date.now() - started) / 1000, 1),
    environment,
    scenarios,
    summary: summarize(scenarios),
  };
  return { result, files: writeReports(result, options.outDir) };
}
