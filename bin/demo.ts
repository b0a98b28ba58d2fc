/**
 * `make demo`'s live part (lib/bench/demo.ts): the rehearsal, the real Lambda handlers through both
 * endpoints, a short bench, and a summary.
 *
 *   npx ts-node --transpile-only bin/demo.ts [--out DIR] [--scenario NAME ...]
 */
import { runDemo } from '../lib/bench/demo';

runDemo(process.argv.slice(2), (line = '') => void process.stdout.write(`${line}\n`)).then(
  (ok) => {
    if (!ok) process.exitCode = 1;
  },
  (err: unknown) => {
    process.stderr.write(`demo: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
