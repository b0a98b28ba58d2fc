/**
 * The local rehearsal's CLI (commands and options: lib/rehearsal/cli.ts).
 *
 *   npx ts-node --transpile-only bin/rehearse.ts up|status|outputs|down|drill|block|topology [options]
 *
 * Exit codes: 0 ok, 1 failure, 2 bad usage or settings (nothing was started).
 */
import { isUsageProblem, runRehearseCommand } from '../lib/rehearsal';

runRehearseCommand(process.argv.slice(2)).then(
  ({ output, failed }) => {
    process.stdout.write(`${output}\n`);
    if (failed) process.exitCode = 1;
  },
  (err: unknown) => {
    process.stderr.write(`rehearse: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = isUsageProblem(err) ? 2 : 1;
  },
);
