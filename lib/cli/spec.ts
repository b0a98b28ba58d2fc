/**
 * How a command of `aurora-proxy-kit` declares its options: one table per command, read both by its
 * parser (parseOptions) and by its `--help` (formatHelp), so the two cannot drift apart.
 */

/** The tool's name, as users type it after `npx`. */
export const TOOL = 'aurora-proxy-kit';

/** Bad usage or settings: exit code 2, nothing was started. */
export class CliUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliUsageError';
  }
}

export interface CliOption {
  /** `--name`, as typed. */
  readonly name: string;
  /** The value's placeholder (`N`, `DIR`); none for a switch. */
  readonly value?: string;
  /** What applies without the option, as shown in the help. */
  readonly default?: string;
  readonly description: string;
  /** The subcommands of a group that take it (rehearse); all of them when absent. */
  readonly commands?: ReadonlyArray<string>;
}

export interface CliOperand {
  /** As shown in the synopsis, e.g. `USER` or `[cdk.out]`. */
  readonly name: string;
  readonly description: string;
}

export interface CliCommand {
  /** The words after the tool's name, e.g. `rehearse up`. */
  readonly name: string;
  readonly summary: string;
  readonly options: ReadonlyArray<CliOption>;
  readonly operands?: ReadonlyArray<CliOperand>;
  /** Paragraphs after the options. */
  readonly notes?: ReadonlyArray<string>;
  /** Exit code -> meaning; the tool's conventions (EXIT_CODES) when absent. */
  readonly exitCodes?: ReadonlyArray<readonly [number, string]>;
}

/** The conventions every command keeps. */
export const EXIT_CODES: ReadonlyArray<readonly [number, string]> = [
  [0, 'ok'],
  [1, 'failure (the message says what failed)'],
  [2, 'bad usage or settings: nothing was started'],
];

export interface ParsedOptions {
  /** Each option's value (the last one given). */
  readonly values: Map<string, string>;
  /** Every value of each option, in order (for options that may be repeated). */
  readonly repeated: Map<string, string[]>;
  readonly flags: Set<string>;
  readonly operands: string[];
}

/** Whether argv asks for help (anywhere: `up --replicas 3 --help` still only prints help). */
export function wantsHelp(argv: ReadonlyArray<string>): boolean {
  return argv.includes('--help') || argv.includes('-h');
}

/**
 * Reads `--name value`, `--name=value` and switches as `options` declares them, for the subcommand
 * `command` when the options belong to a group. At most `maxOperands` arguments that are not options.
 */
export function parseOptions(argv: ReadonlyArray<string>, spec: { readonly options: ReadonlyArray<CliOption>; readonly commandName: string; readonly subcommand?: string; readonly maxOperands?: number }, usageError: new (message: string) => Error = CliUsageError): ParsedOptions {
  const values = new Map<string, string>();
  const repeated = new Map<string, string[]>();
  const flags = new Set<string>();
  const operands: string[] = [];
  const own = spec.subcommand === undefined ? spec.options : optionsFor(spec.options, spec.subcommand);
  const hint = `${TOOL} ${spec.commandName} --help`;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const [name, inline] = arg.startsWith('--') && eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
    const option = own.find((o) => o.name === name);
    if (option === undefined) {
      const operand = arg === '-' || !arg.startsWith('-');
      if (operand && operands.length < (spec.maxOperands ?? 0)) {
        operands.push(arg);
        continue;
      }
      const elsewhere = spec.options.find((o) => o.name === name)?.commands;
      if (elsewhere !== undefined) throw new usageError(`${name} is an option of ${joinWords(elsewhere)}, not of ${spec.subcommand}`);
      if (operand) throw new usageError(`unexpected argument ${arg} for ${spec.commandName} (${hint})`);
      throw new usageError(`unknown option ${arg} for ${spec.commandName}; options: ${own.map((o) => o.name).join(' ')} (${hint})`);
    }
    if (option.value === undefined) {
      if (inline !== undefined) throw new usageError(`${name} takes no value (got ${arg})`);
      flags.add(name);
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new usageError(`${name} needs a value: ${name} ${option.value}`);
    values.set(name, value);
    repeated.set(name, [...(repeated.get(name) ?? []), value]);
  }
  return { values, repeated, flags, operands };
}

/** The options of a group's subcommand. */
export function optionsFor(options: ReadonlyArray<CliOption>, subcommand: string): CliOption[] {
  return options.filter((o) => o.commands === undefined || o.commands.includes(subcommand));
}

function joinWords(words: ReadonlyArray<string>): string {
  return words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}

/** Column layout for `name  description` rows. */
export function formatRows(rows: ReadonlyArray<readonly [string, string]>, indent = '  '): string[] {
  const width = Math.max(0, ...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `${indent}${left.padEnd(width)}  ${right}`.trimEnd());
}

/** A command's `--help`: synopsis, options with their defaults, notes, exit codes. */
export function formatHelp(command: CliCommand): string {
  const options = command.options;
  const synopsis = [TOOL, command.name, ...(options.length > 0 ? ['[options]'] : []), ...(command.operands ?? []).map((o) => o.name)].join(' ');
  const lines = [`Usage: ${synopsis}`, '', command.summary];
  if (command.operands !== undefined && command.operands.length > 0) lines.push('', 'Arguments:', ...formatRows(command.operands.map((o) => [o.name, o.description])));
  const optionRows = options.map((o): [string, string] => [o.value === undefined ? o.name : `${o.name} ${o.value}`, o.default === undefined ? o.description : `${o.description} (default: ${o.default})`]);
  lines.push('', 'Options:', ...formatRows([...optionRows, ['-h, --help', 'this help']]));
  for (const note of command.notes ?? []) lines.push('', note);
  lines.push('', 'Exit codes:', ...formatRows((command.exitCodes ?? EXIT_CODES).map(([code, meaning]) => [String(code), meaning])));
  return lines.join('\n');
}
