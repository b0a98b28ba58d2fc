/**
 * The entry point of `npx aurora-proxy-kit` (bin/aurora-proxy-kit.js loads it; dispatch.ts does the work).
 */
import { runCli } from './dispatch';

/**
 * A reader that stopped reading (`| head -1`) is not a failure of the command: as Unix tools do, the
 * output ends quietly instead of with an EPIPE stack trace. Node ignores SIGPIPE, so the write fails
 * with EPIPE; the rest of the output goes nowhere, and a running command (a demo) still finishes and
 * stops what it started.
 */
const closed = { stdout: false, stderr: false };
function quietOnClosedPipe(stream: NodeJS.WriteStream, name: keyof typeof closed): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    closed[name] = true;
  });
}
quietOnClosedPipe(process.stdout, 'stdout');
quietOnClosedPipe(process.stderr, 'stderr');

runCli(process.argv.slice(2), {
  out: (text) => void (closed.stdout || process.stdout.write(`${text}\n`)),
  err: (text) => void (closed.stderr || process.stderr.write(`${text}\n`)),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (!closed.stderr) process.stderr.write(`aurora-proxy-kit: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
