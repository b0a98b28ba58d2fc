/**
 * `synth summary` and `plan summary`: what a synthesized cloud assembly or a Terraform plan would
 * deploy. They read files only, so they run anywhere, the npm package's CLI included.
 */
import * as fs from 'fs';
import { estimateCost } from '../model/cost-estimate';
import { CostOptionError, type CostEstimateOptions, DEFAULT_ESTIMATE_REGION } from '../model/cost-pricing';
import { PRICES_READ_ON, pricedRegions } from '../model/prices';
import { AssemblyInputError } from '../cloud-assembly';
import { formatSummary, stackCost, summarizeAssembly } from '../reference-app/synth-summary';
import { inventoryOfPlan, parsePlan, planCounts, PlanInputError, summarizePlan } from './plan-summary';
import { CliUsageError, parseOptions, type CliCommand, type CliOption, type ParsedOptions } from './spec';

const INPUT_EXIT_CODES: CliCommand['exitCodes'] = [
  [0, 'printed'],
  [1, 'failure (the message says what failed)'],
  [2, 'bad usage, or the input is missing or not what the command reads'],
];

/** The cost estimate's inputs, shared by both summaries. */
const COST_OPTIONS: ReadonlyArray<CliOption> = [
  { name: '--region', value: 'REGION', default: `the deployment's, else ${DEFAULT_ESTIMATE_REGION}`, description: `price in this Region (the table has ${pricedRegions().join(', ')}; prices as of ${PRICES_READ_ON})` },
  { name: '--instance-price', value: 'CLASS=USD', description: 'I/O-Optimized on-demand USD per hour of a DB instance class the table has no price for (repeatable), e.g. db.r6gd.xlarge=0.9' },
  { name: '--storage-gb', value: 'N', description: 'the cluster volume\'s size, to price storage (it grows with the data)' },
  { name: '--io-millions', value: 'N', description: 'Aurora Standard I/O requests a month, in millions, for the I/O-Optimized against Standard comparison' },
  { name: '--json', description: 'print JSON: the summary with its cost estimate' },
];

/** The cost options given, as the estimate takes them; a bad value names the option, the value and the fix. */
export function costOptions(parsed: ParsedOptions): CostEstimateOptions {
  const number = (name: string): number | undefined => {
    const raw = parsed.values.get(name);
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(n) || n < 0) throw new CliUsageError(`${name} ${raw} is not a number of 0 or more: pass e.g. ${name} 100`);
    return n;
  };
  const instanceHourlyUsd: Record<string, number> = {};
  for (const raw of parsed.repeated.get('--instance-price') ?? []) {
    const m = /^(db\.[a-z0-9-]+\.[a-z0-9]+)=([0-9]*\.?[0-9]+)$/.exec(raw);
    if (!m || Number(m[2]) <= 0) throw new CliUsageError(`--instance-price ${raw} is not CLASS=USD: pass e.g. --instance-price db.r6gd.xlarge=0.9 (USD per instance-hour, I/O-Optimized)`);
    instanceHourlyUsd[m[1]!] = Number(m[2]);
  }
  const region = parsed.values.get('--region');
  if (region !== undefined && !/^[a-z]{2}(-[a-z]+)+-\d$/.test(region)) throw new CliUsageError(`--region ${region} is not a Region name: pass e.g. --region ${DEFAULT_ESTIMATE_REGION}`);
  return { region, instanceHourlyUsd, storageGb: number('--storage-gb'), ioMillionsPerMonth: number('--io-millions') };
}

export const SYNTH_SUMMARY_COMMAND: CliCommand = {
  name: 'synth summary',
  summary: 'Prints what a synthesized cloud assembly deploys: per stack, resources per type, instance classes, the Optimized Reads sizing outputs, each proxy endpoint with its role and VPC, and a monthly cost estimate (RDS Proxy against the PgBouncer fleet, I/O-Optimized against Standard).',
  options: COST_OPTIONS,
  operands: [{ name: '[cdk.out]', description: 'the cloud assembly directory `cdk synth` wrote (default: cdk.out)' }],
  exitCodes: INPUT_EXIT_CODES,
};

export const PLAN_SUMMARY_COMMAND: CliCommand = {
  name: 'plan summary',
  summary: 'Prints what a Terraform plan creates: resources per type, the Optimized Reads sizing among its planned outputs, and a monthly cost estimate (RDS Proxy against the PgBouncer fleet, I/O-Optimized against Standard).',
  options: COST_OPTIONS,
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
  const parsed = parseOptions(argv, { options: SYNTH_SUMMARY_COMMAND.options, commandName: SYNTH_SUMMARY_COMMAND.name, maxOperands: 1 });
  const [dir = 'cdk.out'] = parsed.operands;
  const cost = costOptions(parsed);
  try {
    const stacks = summarizeAssembly(dir);
    if (parsed.flags.has('--json')) return JSON.stringify({ stacks: stacks.map((s) => ({ ...s, cost: stackCost(s, cost) })) }, null, 2);
    return formatSummary(stacks, cost).trimEnd();
  } catch (err) {
    if (err instanceof CostOptionError) throw new CliUsageError(err.message);
    throw err instanceof AssemblyInputError ? new CliUsageError(err.message) : err;
  }
}

/** `stdin` is read only when no file is named (or `-`). */
export function runPlanSummary(argv: ReadonlyArray<string>, stdin: () => string = readStdin): string {
  const parsed = parseOptions(argv, { options: PLAN_SUMMARY_COMMAND.options, commandName: PLAN_SUMMARY_COMMAND.name, maxOperands: 1 });
  const [file = '-'] = parsed.operands;
  const cost = costOptions(parsed);
  if (file !== '-' && !fs.existsSync(file)) throw new CliUsageError(`${file} not found: write it with \`terraform show -json <planfile> > ${file}\`, or pipe that into \`plan summary\``);
  try {
    const plan = parsePlan(file === '-' ? stdin() : fs.readFileSync(file, 'utf8'), file === '-' ? 'stdin' : file);
    if (parsed.flags.has('--json')) {
      const inventory = inventoryOfPlan(plan);
      return JSON.stringify({ creates: Object.fromEntries(planCounts(plan)), inventory, cost: estimateCost(inventory, cost) }, null, 2);
    }
    return summarizePlan(plan, cost);
  } catch (err) {
    if (err instanceof CostOptionError) throw new CliUsageError(err.message);
    throw err instanceof PlanInputError ? new CliUsageError(err.message) : err;
  }
}
