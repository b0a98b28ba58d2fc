/**
 * The bench: the seeds' experiments on the local rehearsal, side by side with the seeds' figures
 * (options and exit codes: lib/bench/cli.ts).
 *
 *   npx ts-node --transpile-only bin/bench.ts [--quick] [--scenario NAME ...] [--out DIR]
 */
import { BenchUsageError, runBenchCommand } from '../lib/bench/cli';

runBenchCommand(process.argv.slice(2)).then(
  ({ output, failed }) => {
    process.stdout.write(`${output}\n`);
    if (failed) process.exitCode = 1;
  },
  (err: unknown) => {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = err instanceof BenchUsageError ? 2 : 1;
  },
);
