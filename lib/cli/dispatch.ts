/**
 * `aurora-proxy-kit <command>`: finds the command, prints its help, runs it and turns the outcome into
 * an exit code (0 ok, 1 failure, 2 bad usage or settings, nothing started). Output meant for programs
 * (status, outputs --json, summaries) goes to stdout; progress and errors go to stderr.
 *
 * The rehearsal, the bench and the demo are loaded on use from the kit's repository: the npm package
 * ships this dispatcher with the summaries only, and there they say where they run instead.
 */
import * as fs from 'fs';
import * as path from 'path';
import { PLAN_SUMMARY_COMMAND, runPlanSummary, runSynthSummary, SYNTH_SUMMARY_COMMAND } from './summaries';
import { CliUsageError, EXIT_CODES, formatHelp, formatRows, TOOL, wantsHelp, type CliCommand } from './spec';

export interface CliIo {
  /** A line (or lines) of the command's result: stdout. */
  readonly out: (text: string) => void;
  /** Progress, help asked for by mistake, errors: stderr. */
  readonly err: (text: string) => void;
}

type RehearseSpecModule = typeof import('../rehearsal/cli-spec');
type RehearseModule = typeof import('../rehearsal/cli');
type BenchModule = typeof import('../bench/cli');
type DemoModule = typeof import('../bench/demo');
type BenchCommandsModule = typeof import('../bench/commands');

/** A module of the kit's repository (TypeScript, run through ts-node), or undefined in the npm package. */
function repositoryModule<T>(relative: string): T | undefined {
  const file = path.join(__dirname, '..', `${relative}.ts`);
  if (!fs.existsSync(file)) return undefined;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on use, and absent from the npm package
  return require(file) as T;
}

/** The kit's package.json: its version, and where the repository is. */
function kitManifest(): { version: string; homepage?: string; repository?: { url?: string } } {
  for (let dir = __dirname, i = 0; i < 5; dir = path.dirname(dir), i++) {
    const file = path.join(dir, 'package.json');
    if (!fs.existsSync(file)) continue;
    const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version: string };
    if (manifest.name === TOOL) return manifest;
  }
  return { version: 'unknown' };
}

/** Why a repository command does not run from the npm package, and how to run it. */
function repositoryOnlyText(command: string): string {
  const url = (kitManifest().repository?.url ?? 'https://github.com/aurora-proxy-kit/aurora-proxy-kit.git').replace(/^git\+/, '');
  return (
    `${command} runs from the kit's repository, not from the npm package: it starts PostgreSQL, PgBouncer 1.25.2, HAProxy and pgpool-II, which \`make deps\` installs there.\n` +
    `  git clone ${url} && cd ${path.basename(url, '.git')} && make deps && npx ${TOOL} ${command} --help`
  );
}

/**
 * A repository command run from the npm package: its help (asked for: stdout, exit 0) is where it runs;
 * run, it is a usage error (exit 2).
 */
function repositoryOnly(command: string, argv: ReadonlyArray<string>, io: CliIo): number {
  if (wantsHelp(argv)) {
    io.out(repositoryOnlyText(command));
    return 0;
  }
  throw new CliUsageError(repositoryOnlyText(command));
}

interface Subcommand {
  readonly name: string;
  readonly summary: string;
}

/** `<group> --help`: the group's subcommands. */
function groupHelp(group: string, description: string, subcommands: ReadonlyArray<Subcommand>): string {
  return [
    `Usage: ${TOOL} ${group} <command> [options]`,
    '',
    description,
    '',
    'Commands:',
    ...formatRows(subcommands.map((s) => [s.name, s.summary])),
    '',
    `\`${TOOL} ${group} <command> --help\` lists a command's options with their defaults.`,
    '',
    'Exit codes:',
    ...formatRows(EXIT_CODES.map(([code, meaning]) => [String(code), meaning])),
  ].join('\n');
}

/** The group's subcommand named first in argv, or the help asked for (0) or missing (2). */
function subcommandOf(group: string, description: string, subcommands: ReadonlyArray<Subcommand>, argv: ReadonlyArray<string>, io: CliIo): string | number {
  const [name] = argv;
  if (name === '--help' || name === '-h') {
    io.out(groupHelp(group, description, subcommands));
    return 0;
  }
  if (name === undefined) {
    io.err(`${groupHelp(group, description, subcommands)}\n\n${TOOL} ${group}: no command given: use ${subcommands.map((s) => s.name).join(', ')}`);
    return 2;
  }
  if (!subcommands.some((s) => s.name === name)) throw new CliUsageError(`unknown command ${name}: use ${subcommands.map((s) => s.name).join(', ')} (${TOOL} ${group} --help)`);
  return name;
}

const REHEARSE_DESCRIPTION = 'The local rehearsal of the data path on this machine, from real parts: PostgreSQL writer and replicas, PgBouncer endpoints sized like RDS Proxy, the HAProxy and pgpool-II comparison proxies.';

async function rehearse(argv: string[], io: CliIo): Promise<number> {
  const spec = repositoryModule<RehearseSpecModule>('rehearsal/cli-spec');
  if (spec === undefined) return repositoryOnly('rehearse', argv, io);
  const sub = subcommandOf('rehearse', REHEARSE_DESCRIPTION, spec.REHEARSE_SUMMARIES.map(([name, summary]) => ({ name, summary })), argv, io);
  if (typeof sub === 'number') return sub;
  if (wantsHelp(argv.slice(1))) {
    io.out(formatHelp(spec.rehearseCommand(sub as (typeof spec.REHEARSE_COMMANDS)[number])));
    return 0;
  }
  const cli = repositoryModule<RehearseModule>('rehearsal/cli')!;
  const started = Date.now();
  try {
    const { output, failed } = await cli.runRehearseCommand(argv, (phase, detail) => io.err(`rehearse up: ${phase}: ${detail} (${((Date.now() - started) / 1000).toFixed(1)} s)`));
    io.out(output);
    return failed ? 1 : 0;
  } catch (err) {
    // Settings, missing programs, busy addresses, a work dir in use: fixed before anything starts.
    if (cli.isUsageProblem(err)) throw new CliUsageError((err as Error).message);
    throw err;
  }
}

/** A command of its own (bench, demo): its help, or its run. */
async function single(command: CliCommand, argv: string[], io: CliIo, run: () => Promise<boolean>): Promise<number> {
  if (wantsHelp(argv)) {
    io.out(formatHelp(command));
    return 0;
  }
  return (await run()) ? 0 : 1;
}

/** The specs alone: `--help` loads no rehearsal; undefined in the npm package. */
function benchCommands(): BenchCommandsModule | undefined {
  return repositoryModule<BenchCommandsModule>('bench/commands');
}

async function bench(argv: string[], io: CliIo): Promise<number> {
  const commands = benchCommands();
  if (commands === undefined) return repositoryOnly('bench', argv, io);
  return single(commands.BENCH_COMMAND, argv, io, async () => {
    const mod = repositoryModule<BenchModule>('bench/cli')!;
    const { output, failed } = await mod.runBenchCommand(argv, (line) => io.err(line));
    io.out(output);
    return !failed;
  });
}

async function demo(argv: string[], io: CliIo): Promise<number> {
  const commands = benchCommands();
  if (commands === undefined) return repositoryOnly('demo', argv, io);
  return single(commands.DEMO_COMMAND, argv, io, () => repositoryModule<DemoModule>('bench/demo')!.runDemo(argv, (line = '') => io.out(line)));
}

const SUMMARY_BRIEFS = { synth: 'what a synthesized cloud assembly deploys', plan: 'what a Terraform plan creates (terraform show -json)' } as const;

/** `synth summary` / `plan summary`: a group of one. */
function summary(group: 'synth' | 'plan', argv: string[], io: CliIo): number {
  const command = group === 'synth' ? SYNTH_SUMMARY_COMMAND : PLAN_SUMMARY_COMMAND;
  const description = group === 'synth' ? 'Reads a synthesized cloud assembly (cdk.out).' : 'Reads a Terraform plan (terraform show -json).';
  const sub = subcommandOf(group, description, [{ name: 'summary', summary: SUMMARY_BRIEFS[group] }], argv, io);
  if (typeof sub === 'number') return sub;
  if (wantsHelp(argv.slice(1))) {
    io.out(formatHelp(command));
    return 0;
  }
  io.out(group === 'synth' ? runSynthSummary(argv.slice(1)) : runPlanSummary(argv.slice(1)));
  return 0;
}

const COMMANDS = ['rehearse', 'bench', 'demo', 'synth', 'plan', 'help'] as const;

/** The tool's own help. */
export function toolHelp(): string {
  const rehearseCommands = repositoryModule<RehearseSpecModule>('rehearsal/cli-spec')?.REHEARSE_COMMANDS.join('|') ?? '<command>';
  return [
    `Usage: ${TOOL} <command> [options]`,
    '',
    `${TOOL} ${kitManifest().version}: the kit's command line.`,
    '',
    'Commands:',
    ...formatRows([
      [`rehearse ${rehearseCommands}`, 'the local rehearsal of the data path (*)'],
      ['bench', 'the seed articles\' experiments on the rehearsal (*)'],
      ['demo', 'rehearse what was synthesized, run its consumers and a short bench (*)'],
      ['synth summary [cdk.out]', SUMMARY_BRIEFS.synth],
      ['plan summary [plan.json]', SUMMARY_BRIEFS.plan],
      ['help [command]', 'a command\'s help, as <command> --help'],
    ]),
    '',
    '(*) from the kit\'s repository: they start PostgreSQL, PgBouncer, HAProxy and pgpool-II, which `make deps` installs.',
    `\`${TOOL} <command> --help\` lists a command's options with their defaults.`,
    '',
    'Options:',
    ...formatRows([['-h, --help', 'this help'], ['--version', 'the kit\'s version']]),
    '',
    'Exit codes:',
    ...formatRows(EXIT_CODES.map(([code, meaning]) => [String(code), meaning])),
  ].join('\n');
}

/** Runs `aurora-proxy-kit <argv>`; the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case undefined:
        io.err(`${toolHelp()}\n\n${TOOL}: no command given: use ${COMMANDS.join(', ')}`);
        return 2;
      case '-h':
      case '--help':
        io.out(toolHelp());
        return 0;
      case '--version':
        io.out(kitManifest().version);
        return 0;
      case 'help':
        return rest.length === 0 ? runCli(['--help'], io) : runCli([...rest, '--help'], io);
      case 'rehearse':
        return await rehearse(rest, io);
      case 'bench':
        return await bench(rest, io);
      case 'demo':
        return await demo(rest, io);
      case 'synth':
      case 'plan':
        return summary(command, rest, io);
      default:
        throw new CliUsageError(`unknown ${command.startsWith('-') ? 'option' : 'command'} ${command}: use ${COMMANDS.join(', ')} (${TOOL} --help)`);
    }
  } catch (err) {
    const where = command !== undefined && (COMMANDS as readonly string[]).includes(command) ? `${TOOL} ${command}` : TOOL;
    io.err(`${where}: ${err instanceof Error ? err.message : String(err)}`);
    return err instanceof CliUsageError ? 2 : 1;
  }
}
