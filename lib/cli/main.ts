/**
 * The entry point of `npx aurora-proxy-kit` (bin/aurora-proxy-kit.js loads it; dispatch.ts does the work).
 */
import { runCli } from './dispatch';

runCli(process.argv.slice(2), {
  out: (text) => void process.stdout.write(`${text}\n`),
  err: (text) => void process.stderr.write(`${text}\n`),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`aurora-proxy-kit: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
