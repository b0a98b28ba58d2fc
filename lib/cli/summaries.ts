/**
 * `synth summary` and `plan summary`: what a synthesized cloud assembly or a Terraform plan would
 * deploy. They read files only, so they run anywhere, the npm package's CLI included.
 */
import * as fs from 'fs';
import { AssemblyInputError, formatSummary, summarizeAssembly } from '../reference-app/synth-summary';
import { parsePlan, PlanInputError, summarizePlan } from './plan-summary';
import { CliUsageError, parseOptions, type CliCommand } from './spec';

const INPUT_EXIT_CODES: CliCommand['exitCodes'] = [
  [0, 'printed'],
  [1, 'failure (the message says what failed)'],
  [2, 'bad usage, or the input is missing or not what the command reads'],
];

export const SYNTH_SUMMARY_COMMAND: CliCommand = {
  name: 'synth summary',
  summary: 'Prints what a synthesized cloud assembly deploys: per stack, resources per type, instance classes, the Optimized Reads sizing outputs, and each proxy endpoint with its role and VPC.',
  options: [],
  operands: [{ name: '[cdk.out]', description: 'the cloud assembly directory `cdk synth` wrote (default: cdk.out)' }],
  exitCodes: INPUT_EXIT_CODES,
};

export const PLAN_SUMMARY_COMMAND: CliCommand = {
  name: 'plan summary',
  summary: 'Prints what a Terraform plan creates: resources per type, and the Optimized Reads sizing among its planned outputs.',
  options: [],
  operands: [{ name: '[plan.json]', description: 'the output of `terraform show -json <planfile>` (default, or `-`: read it on stdin)' }],
  notes: ['Examples:\n  terraform show -json tf.plan | npx aurora-proxy-kit plan summary\n  terraform show -json tf.plan > plan.json && npx aurora-proxy-kit plan summary plan.json'],
  exitCodes: INPUT_EXIT_CODES,
};

function readStdin(): string {
  // A terminal would wait for input the user does not know is expected.
  if (process.stdin.isTTY) throw new CliUsageError('plan summary reads a plan\'s JSON on stdin or from a file: `terraform show -json tf.plan | npx aurora-proxy-kit plan summary`, or `plan summary plan.json`');
  // Read by hand, not readFileSync(0): a pipe handed over non-blocking (npx under make does) answers
  // EAGAIN until the writer has written; wait a moment and read on, up to end of file.
  const chunks: Buffer[] = [];
  const buffer = Buffer.alloc(64 * 1024);
  for (;;) {
    let read: number;
    try {
      read = fs.readSync(0, buffer, 0, buffer.length, null);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EOF') break;
      if (code !== 'EAGAIN') throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
      continue;
    }
    if (read === 0) break;
    chunks.push(Buffer.from(buffer.subarray(0, read)));
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function runSynthSummary(argv: ReadonlyArray<string>): string {
  const [dir = 'cdk.out'] = parseOptions(argv, { options: SYNTH_SUMMARY_COMMAND.options, commandName: SYNTH_SUMMARY_COMMAND.name, maxOperands: 1 }).operands;
  try {
    return formatSummary(summarizeAssembly(dir)).trimEnd();
  } catch (err) {
    throw err instanceof AssemblyInputError ? new CliUsageError(err.message) : err;
  }
}

/** `stdin` is read only when no file is named (or `-`). */
export function runPlanSummary(argv: ReadonlyArray<string>, stdin: () => string = readStdin): string {
  const [file = '-'] = parseOptions(argv, { options: PLAN_SUMMARY_COMMAND.options, commandName: PLAN_SUMMARY_COMMAND.name, maxOperands: 1 }).operands;
  if (file !== '-' && !fs.existsSync(file)) throw new CliUsageError(`${file} not found: write it with \`terraform show -json <planfile> > ${file}\`, or pipe that into \`plan summary\``);
  try {
    return summarizePlan(parsePlan(file === '-' ? stdin() : fs.readFileSync(file, 'utf8'), file === '-' ? 'stdin' : file));
  } catch (err) {
    throw err instanceof PlanInputError ? new CliUsageError(err.message) : err;
  }
}
