/**
 * The bench CLI (bin/bench.ts is the entry point):
 *
 *   bench [--quick] [--scenario NAME[,NAME...]] [--out DIR]
 *
 * Scenarios: read_only_endpoint, reader_added, connect_overhead, read_write_split (default: all).
 * Writes DIR/latest.json, latest.md, latest.svg (default DIR: bench-results). Exit codes: 0 ran (targets
 * met or not: see the summary), 1 a scenario failed, 2 bad usage.
 */
import { resolve } from 'node:path';
import { runBench } from './runner';
import { SCENARIO_NAMES, type ScenarioName } from './types';

export class BenchUsageError extends Error {}

export function parseBenchArgs(argv: string[]): { quick: boolean; scenarios?: ScenarioName[]; outDir: string } {
  let quick = false;
  let outDir = 'bench-results';
  const scenarios: ScenarioName[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [name, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new BenchUsageError(`${name} needs a value`);
      return v;
    };
    if (name === '--quick') quick = true;
    else if (name === '--out') outDir = value();
    else if (name === '--scenario') {
      for (const s of value().split(',')) {
        if (!(SCENARIO_NAMES as readonly string[]).includes(s)) throw new BenchUsageError(`unknown scenario ${s}: use one of ${SCENARIO_NAMES.join(', ')}`);
        scenarios.push(s as ScenarioName);
      }
    } else throw new BenchUsageError(`unknown option ${arg}; options: --quick, --scenario NAME, --out DIR`);
  }
  return { quick, outDir: resolve(outDir), ...(scenarios.length > 0 ? { scenarios } : {}) };
}

/** Runs the bench; returns the closing summary and whether a scenario failed. */
export async function runBenchCommand(argv: string[]): Promise<{ output: string; failed: boolean }> {
  const { result, files } = await runBench(parseBenchArgs(argv));
  const s = result.summary;
  return {
    output:
      `\nbench (${result.mode}) finished in ${result.durationSeconds} s: ${s.met}/${s.targets} targets met${s.missed.length > 0 ? `; missed: ${s.missed.join(', ')}` : ''}${s.failedScenarios.length > 0 ? `; FAILED scenarios: ${s.failedScenarios.join(', ')}` : ''}\n` +
      `wrote ${files.join(', ')}`,
    failed: s.failedScenarios.length > 0,
  };
}
