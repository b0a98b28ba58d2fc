import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { BENCH_COMMAND } from '../../lib/bench/cli';
import { DEMO_COMMAND } from '../../lib/bench/demo';
import { runCli } from '../../lib/cli/dispatch';
import { optionsFor, type CliOption } from '../../lib/cli/spec';
import { PLAN_SUMMARY_COMMAND, SYNTH_SUMMARY_COMMAND } from '../../lib/cli/summaries';
import { REHEARSE_COMMANDS, REHEARSE_OPTIONS } from '../../lib/rehearsal';
import { removeFixtures, synthesizeReferenceApp } from '../rehearsal/topology-fixtures';

/**
 * `npx aurora-proxy-kit` as a user runs it: its stdout, stderr and exit code, from the repository root. What only
 * a process shows (the bin, stdin, closed pipes, the exit code reaching the shell) runs as a real node process on
 * the package's bin; the commands' own behaviour runs through the entry point's runCli in this process. No command
 * here starts a server.
 */
const ROOT = path.join(__dirname, '..', '..');
const BIN = path.join(ROOT, (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> }).bin['aurora-proxy-kit']!);
const PLAN_FIXTURE = path.join(__dirname, 'fixtures', 'plan.json');
/** The parts of `terraform show -json` of modules/examples/complete-pgbouncer's plan the cost estimate reads. */
const PGBOUNCER_PLAN_FIXTURE = path.join(__dirname, 'fixtures', 'plan-pgbouncer.json');

/** A pattern matching text that starts with `prefix`. */
const startsWith = (prefix: string): RegExp => new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The CLI as a process: for what only a process shows (its exit code, stdin, its pipes). */
function cliProcess(args: string[], input?: string): Run {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000, ...(input !== undefined ? { input } : { stdio: ['ignore', 'pipe', 'pipe'] }) });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * The CLI's commands in this process, through the entry point's own runCli with its output as lines (what
 * lib/cli/main.ts writes): a process per case was most of this suite's time, and the process itself is
 * covered by the cliProcess cases.
 */
async function cli(args: string[]): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { out: (t) => void out.push(`${t}\n`), err: (t) => void err.push(`${t}\n`) });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

/**
 * The CLI with its stdout piped into a reader that has already gone (`| true` exits without reading, long
 * before node has started): its exit code and stderr.
 */
function cliIntoClosedPipe(args: string[]): { code: number; stderr: string } {
  const r = spawnSync('bash', ['-c', '"$@" | true; exit "${PIPESTATUS[0]}"', 'bash', process.execPath, BIN, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, stderr: r.stderr };
}

/** What a help must show of each option of its table: the name, its value placeholder, its default. */
function expectOptionsListed(help: string, options: ReadonlyArray<CliOption>): void {
  for (const o of options) {
    const line = help.split('\n').find((l) => l.trimStart().startsWith(o.value === undefined ? `${o.name} ` : `${o.name} ${o.value} `));
    expect([o.name, line]).toEqual([o.name, expect.any(String)]);
    if (o.default !== undefined) expect(line).toContain(`(default: ${o.default})`);
  }
}

describe('aurora-proxy-kit help', () => {
  test('--help lists every command and the exit codes, on stdout, exit 0', () => {
    // WHEN
    const r = cliProcess(['--help']);
    // THEN
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: aurora-proxy-kit <command> \[options\]/);
    for (const command of [`rehearse ${REHEARSE_COMMANDS.join('|')}`, 'bench', 'demo', 'synth summary', 'plan summary']) expect(r.stdout).toContain(`\n  ${command} `);
    expect(r.stdout).toMatch(/Exit codes:\n {2}0 {2}ok\n {2}1 {2}failure.*\n {2}2 {2}bad usage or settings: nothing was started/);
    expect(r.stderr).toBe('');
  });

  test.each(REHEARSE_COMMANDS.map((c) => [c]))('rehearse %s --help lists its options from REHEARSE_OPTIONS with their defaults', async (command) => {
    // WHEN
    const r = await cli(['rehearse', command, '--help']);
    // THEN
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^Usage: aurora-proxy-kit rehearse ${command}`));
    expectOptionsListed(r.stdout, optionsFor(REHEARSE_OPTIONS, command));
    // and no option of another subcommand
    for (const o of REHEARSE_OPTIONS.filter((x) => !optionsFor(REHEARSE_OPTIONS, command).includes(x))) expect(r.stdout).not.toContain(`  ${o.name} `);
    expect(r.stdout).toContain('Exit codes:');
  });

  test.each([
    [['bench', '--help'], BENCH_COMMAND.options],
    [['demo', '--help'], DEMO_COMMAND.options],
    [['help', 'bench'], BENCH_COMMAND.options],
  ])('%j lists the options its parser reads, with their defaults', async (args, options) => {
    const r = await cli(args);
    expect(r.code).toBe(0);
    expectOptionsListed(r.stdout, options);
    expect(r.stdout).toMatch(/Exit codes:\n {2}0 {2}.*\n {2}1 {2}.*\n {2}2 {2}bad usage/);
  });

  test('rehearse, synth and plan --help list their commands', async () => {
    expect((await cli(['rehearse', '--help'])).stdout).toMatch(new RegExp(REHEARSE_COMMANDS.map((c) => `\n {2}${c} +\\S`).join('[\\s\\S]*')));
    expect((await cli(['synth', '--help'])).stdout).toMatch(/\n {2}summary +what a synthesized cloud assembly deploys/);
    const plan = await cli(['plan', 'summary', '--help']);
    expect([plan.code, plan.stdout]).toEqual([0, expect.stringMatching(/^Usage: aurora-proxy-kit plan summary \[options\] \[plan\.json\]/)]);
    // the cost estimate's options, in both summaries
    expectOptionsListed(plan.stdout, PLAN_SUMMARY_COMMAND.options);
    expectOptionsListed((await cli(['synth', 'summary', '--help'])).stdout, SYNTH_SUMMARY_COMMAND.options);
  });

  test('npx aurora-proxy-kit in the repository runs the repository\'s own bin', () => {
    // WHEN through npm, as the README says
    const r = spawnSync('npx', ['--no-install', 'aurora-proxy-kit', '--version'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    // THEN
    expect([r.status, r.stdout.trim()]).toEqual([0, (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version]);
  });
});

describe('output into a closed pipe (`| head -1`)', () => {
  test.each([
    [['--help']],
    [['plan', 'summary', PLAN_FIXTURE]],
    [['plan', 'summary', PLAN_FIXTURE, '--json']],
  ])('%j ends quietly, as Unix tools do: exit 0, no EPIPE stack trace', (args) => {
    // GIVEN a reader that closed its end of the pipe
    // WHEN the command writes its result into it
    const r = cliIntoClosedPipe(args);
    // THEN
    expect([r.code, r.stderr]).toEqual([0, '']);
  });
});

describe('aurora-proxy-kit usage errors: exit 2, the bad input named, the fix given, nothing started', () => {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-usage-'));
  afterAll(() => fs.rmSync(workDir, { recursive: true, force: true }));

  test.each([
    [[], /no command given: use rehearse, bench, demo, synth, plan, help/],
    [['rehersal'], /^aurora-proxy-kit: unknown command rehersal: use rehearse, .* \(aurora-proxy-kit --help\)$/m],
    [['--verbose'], /^aurora-proxy-kit: unknown option --verbose: use rehearse, /m],
    [['rehearse'], /aurora-proxy-kit rehearse: no command given: use up, status, outputs, down, drill, topology/],
    [['rehearse', 'launch'], /^aurora-proxy-kit rehearse: unknown command launch: use up, status, .* \(aurora-proxy-kit rehearse --help\)$/m],
    [['rehearse', 'up', '--bogus'], /unknown option --bogus for rehearse up; options: --from --work-dir .* \(aurora-proxy-kit rehearse up --help\)/],
    [['rehearse', 'status', '--replicas', '3'], /--replicas is an option of up, not of status/],
    [['rehearse', 'up', '--replicas'], /--replicas needs a value: --replicas N/],
    [['rehearse', 'up', '--replicas', 'three'], /--replicas three is not a whole number: pass e\.g\. --replicas 2/],
    [['rehearse', 'topology'], /topology needs --from/],
    // The loopback blocks of suites and bench scenarios are theirs to hand out, not a command's.
    [['rehearse', 'block', 'terratest'], /^aurora-proxy-kit rehearse: unknown command block: use up, status, outputs, down, drill, topology \(aurora-proxy-kit rehearse --help\)$/m],
    [['bench', '--fast'], /^aurora-proxy-kit bench: unknown option --fast for bench; options: --quick --scenario --repeat --out \(aurora-proxy-kit bench --help\)$/m],
    [['bench', '--repeat', '0'], /--repeat "0" is not a whole number of runs from 1 to 20: give e\.g\. --repeat 3/],
    [['bench', '--scenario', 'nope'], /unknown scenario nope: use one of read_only_endpoint, /],
    [['demo', '--scenario', 'read_only_endpoint,nope'], /unknown scenario nope/],
    [['synth', 'summarize'], /unknown command summarize: use summary \(aurora-proxy-kit synth --help\)/],
    [['synth', 'summary', 'a', 'b'], /unexpected argument b for synth summary/],
  ])('%j', async (args, message) => {
    // WHEN
    const r = await cli([...args]);
    // THEN
    expect([r.code, r.stderr]).toEqual([2, expect.stringMatching(message)]);
    expect(r.stdout).toBe('');
  });

  test('a rehearsal command on a work dir with no rehearsal: status exits 2, down says nothing to stop and exits 0', async () => {
    const status = await cli(['rehearse', 'status', '--work-dir', workDir]);
    expect([status.code, status.stderr]).toEqual([2, expect.stringContaining(`no rehearsal in ${workDir}`)]);
    const down = await cli(['rehearse', 'down', '--work-dir', workDir]);
    expect([down.code, down.stdout]).toEqual([0, `nothing to stop in ${workDir}: no rehearsal there\n`]);
  });
});

describe('plan summary', () => {
  const expected = [
    'the plan creates 6 resources (nothing is applied):',
    '  aws_db_proxy              1',
    '  aws_db_proxy_endpoint     1',
    '  aws_rds_cluster           1',
    '  aws_rds_cluster_instance  3',
    'outputs known at plan:',
    '  instance_class = "db.r6gd.xlarge"',
    '  engine_version = "17.9"',
    '  tiered_cache_gib = 135.2',
    '  temporary_objects_gib = 64',
    'Monthly cost estimate, us-east-1 (US East (N. Virginia)):',
  ].join('\n');

  test('counts what a plan creates (replacements too; not updates, no-ops or data sources), from a file', async () => {
    expect(await cli(['plan', 'summary', PLAN_FIXTURE])).toEqual({ code: 0, stdout: expect.stringMatching(startsWith(expected)), stderr: '' });
  });

  test('reads the plan on stdin, as `terraform show -json` pipes it', () => {
    expect(cliProcess(['plan', 'summary'], fs.readFileSync(PLAN_FIXTURE, 'utf8'))).toEqual({ code: 0, stdout: expect.stringMatching(startsWith(expected)), stderr: '' });
  });

  test('prints the monthly cost estimate of what the plan creates, with the price date and sources', async () => {
    // GIVEN the RDS Proxy plan (3 x db.r6gd.xlarge, a proxy) WHEN summarized with the instances' price given
    const r = await cli(['plan', 'summary', PLAN_FIXTURE, '--instance-price', 'db.r6gd.xlarge=0.9']);
    // THEN 3 x 0.9 x 730 = 1971.00 and 12 vCPUs x 0.015 x 730 = 131.40
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toMatch(/^ {2}3 x db\.r6gd\.xlarge \(I\/O-Optimized\) +\$1971\.00 /m);
    expect(r.stdout).toMatch(/^ {2}1 x RDS Proxy \(12 vCPUs of the database's instances\) +\$131\.40 /m);
    expect(r.stdout).toMatch(/^ {2}total +\$2102\.40 /m);
    expect(r.stdout).toMatch(/^Engine: RDS Proxy \$131\.40\/month against the PgBouncer fleet \$151\.48\/month/m);
    expect(r.stdout).toMatch(/^prices as of \d{4}-\d{2}-\d{2}, on-demand, excluding data processed \(us-east-1;/m);
    expect(r.stdout).toMatch(/^sources: Amazon Aurora pricing; Amazon RDS Proxy pricing/m);
  });

  test('the PgBouncer engine\'s plan: hosts, NLB and interface endpoints per AZ', async () => {
    const r = await cli(['plan', 'summary', PGBOUNCER_PLAN_FIXTURE]);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toMatch(/^ {2}2 x c7g\.large \(PgBouncer hosts\) +\$105\.85 /m);
    expect(r.stdout).toMatch(/^ {2}2 x interface endpoint, PgBouncer endpoint service \(4 endpoint-AZs\) +\$29\.20 /m);
    expect(r.stdout).toMatch(/^ {2}6 x interface endpoint, AWS services \(12 endpoint-AZs\) +\$87\.60 /m);
    expect(r.stdout).toMatch(/^ {2}total +\$239\.08 \(without 2 lines/m);
    expect(r.stdout).toContain('+ NLB capacity units (new flows, active flows, bytes): $0.006 per NLCU-hour (depends on traffic, not in the total)');
  });

  test('--json carries the estimate', async () => {
    const r = await cli(['plan', 'summary', PLAN_FIXTURE, '--json']);
    const json = JSON.parse(r.stdout) as { creates: Record<string, number>; cost: { pricesAsOf: string; region: string; engines: { crossoverVcpus: number } } };
    expect([json.creates.aws_rds_cluster_instance, json.cost.region, json.cost.engines.crossoverVcpus]).toEqual([3, 'us-east-1', 13.8]);
    expect(json.cost.pricesAsOf).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  test.each([
    [['--instance-price', 'r6gd=0.9'], '--instance-price r6gd=0.9 is not CLASS=USD: pass e.g. --instance-price db.r6gd.xlarge=0.9 (USD per instance-hour, I/O-Optimized)'],
    [['--storage-gb', 'lots'], '--storage-gb lots is not a number of 0 or more: pass e.g. --storage-gb 100'],
    [['--region', 'Ireland'], '--region Ireland is not a Region name: pass e.g. --region us-east-1'],
  ])('bad cost option %j: exit 2, names it, its value and the fix', async (args, message) => {
    const r = await cli(['plan', 'summary', PLAN_FIXTURE, ...args]);
    expect([r.code, r.stderr]).toEqual([2, `aurora-proxy-kit plan: ${message}\n`]);
  });

  test('reads the plan from a slow writer through npx, as `make terraform-plan-summary` pipes it (a non-blocking pipe)', () => {
    // terraform takes a while before it writes, longer than npx takes to start, and npx hands its child the pipe non-blocking.
    const r = spawnSync('bash', ['-c', `(sleep 4; cat "$0") | npx --no-install aurora-proxy-kit plan summary`, PLAN_FIXTURE], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect([r.status, r.stdout, r.stderr.replace(/^npm warn .*\n/gm, '')]).toEqual([0, expect.stringMatching(startsWith(expected)), '']);
  });

  test.each([
    ['the binary plan file', 'tfplan\u0000PK', /stdin is not JSON .*: pass `terraform show -json <planfile>`, not the binary plan file/],
    ['JSON that is not a plan', '{"values": {}}', /stdin is not a plan's JSON \(no resource_changes\)/],
  ])('%s: exit 2 with the fix', (_, input, message) => {
    const r = cliProcess(['plan', 'summary', '-'], input);
    expect([r.code, r.stderr]).toEqual([2, expect.stringMatching(message)]);
  });

  test('a missing file: exit 2, says how to write it', async () => {
    const r = await cli(['plan', 'summary', 'no-such-plan.json']);
    expect([r.code, r.stderr]).toEqual([2, 'aurora-proxy-kit plan: no-such-plan.json not found: write it with `terraform show -json <planfile> > no-such-plan.json`, or pipe that into `plan summary`\n']);
  });
});

describe('synth summary', () => {
  afterAll(removeFixtures);
  let assembly: string | undefined;
  /** bin/app.ts's stack with 3 readers, synthesized as `cdk synth` would, once for the tests that read it. */
  const referenceAssembly = (): string => (assembly ??= synthesizeReferenceApp({ readers: '3' }).dir);

  test('summarizes the reference app\'s synthesized cloud assembly', async () => {
    // GIVEN bin/app.ts's stack with 3 readers, synthesized as `cdk synth` would
    const dir = referenceAssembly();
    // WHEN
    const r = await cli(['synth', 'summary', dir]);
    // THEN
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toMatch(/^Stack AuroraProxyKit \(AuroraProxyKit\.template\.json\): \d+ resources$/m);
    expect(r.stdout).toMatch(/^ {4}4 x db\.r6gd\.xlarge$/m);
    // the estimate: a region-agnostic stack, priced in us-east-1 and saying so; 4 instances x 4 vCPUs for RDS Proxy
    expect(r.stdout).toContain('  Monthly cost estimate, us-east-1 (US East (N. Virginia)): the deployment names no Region, priced there (give --region):');
    expect(r.stdout).toMatch(/^ {4}1 x RDS Proxy \(16 vCPUs of the database's instances\) +\$175\.20 /m);
    expect(r.stdout).toMatch(/^ {4}for this cluster \(16 vCPUs\) the PgBouncer fleet costs less/m);
    expect(r.stdout).toMatch(/^ {2}prices as of \d{4}-\d{2}-\d{2}, on-demand, excluding data processed \(us-east-1;/m);
    // --json carries it per stack
    const json = JSON.parse((await cli(['synth', 'summary', dir, '--json', '--region', 'us-east-1'])).stdout) as { stacks: Array<{ cost: { regionAssumed: boolean; knownMonthlyUsd: number } }> };
    expect(json.stacks[0]!.cost.regionAssumed).toBe(false);
    expect(json.stacks[0]!.cost.knownMonthlyUsd).toBeGreaterThan(175.2);
  });

  test('into a pipe whose reader has closed (`synth summary cdk.out | head -1`): exit 0, no EPIPE stack trace', () => {
    // GIVEN a synthesized cloud assembly
    const dir = referenceAssembly();
    // WHEN its summary is written into a closed pipe
    const r = cliIntoClosedPipe(['synth', 'summary', dir]);
    // THEN
    expect([r.code, r.stderr]).toEqual([0, '']);
  });

  test('a directory without a cloud assembly: exit 2, says to synthesize', async () => {
    const r = await cli(['synth', 'summary', os.tmpdir()]);
    expect([r.code, r.stderr]).toEqual([2, expect.stringMatching(/no manifest\.json in .*: pass the directory `cdk synth` writes: run `npx cdk synth --quiet --output cdk\.out` \(or `make synth`\) first/)]);
  });
});
