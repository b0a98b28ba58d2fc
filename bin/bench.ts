/**
 * The bench: the seeds' experiments on the local rehearsal, side by side with the seeds' figures.
 *
 *   npx ts-node --transpile-only bin/bench.ts [--quick] [--scenario NAME ...] [--out DIR]
 *
 * Scenarios: read_only_endpoint, reader_added, connect_overhead, read_write_split (default: all).
 * Writes DIR/latest.json, latest.md, latest.svg (default DIR: bench-results). Exit codes: 0 ran (targets
 * met or not: see the summary), 1 a scenario failed, 2 bad usage.
 */
import { resolve } from 'node:path';
import { runBench } from '../lib/bench/runner';
import { SCENARIO_NAMES, type ScenarioName } from '../lib/bench/types';

class UsageError extends Error {}

export function parseBenchArgs(argv: string[]): { quick: boolean; scenarios?: ScenarioName[]; outDir: string } {
  let quick = false;
  let outDir = 'bench-results';
  const scenarios: ScenarioName[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [name, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new UsageError(`${name} needs a value`);
      return v;
    };
    if (name === '--quick') quick = true;
    else if (name === '--out') outDir = value();
    else if (name === '--scenario') {
      for (const s of value().split(',')) {
        if (!(SCENARIO_NAMES as readonly string[]).includes(s)) throw new UsageError(`unknown scenario ${s}: use one of ${SCENARIO_NAMES.join(', ')}`);
        scenarios.push(s as ScenarioName);
      }
    } else throw new UsageError(`unknown option ${arg}; options: --quick, --scenario NAME, --out DIR`);
  }
  return { quick, outDir: resolve(outDir), ...(scenarios.length > 0 ? { scenarios } : {}) };
}

async function main(argv: string[]): Promise<void> {
  const options = parseBenchArgs(argv);
  const { result, files } = await runBench(options);
  const s = result.summary;
  process.stdout.write(`\nbench (${result.mode}) finished in ${result.durationSeconds} s: ${s.met}/${s.targets} targets met${s.missed.length > 0 ? `; missed: ${s.missed.join(', ')}` : ''}${s.failedScenarios.length > 0 ? `; FAILED scenarios: ${s.failedScenarios.join(', ')}` : ''}\n`);
  process.stdout.write(`wrote ${files.join(', ')}\n`);
  if (s.failedScenarios.length > 0) process.exitCode = 1;
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  });
}
