import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { parseBenchArgs } from '../../lib/bench/cli';
import { DEMO_COMMAND } from '../../lib/bench/demo';
import { PLAN_SUMMARY_COMMAND, SYNTH_SUMMARY_COMMAND } from '../../lib/cli/summaries';
import { parseOptions } from '../../lib/cli/spec';
import { parseArgs } from '../../lib/rehearsal';

/**
 * Every `npx aurora-proxy-kit ...` the README shows is a command the tool knows (its `--help`, run as a
 * process, exits 0) with options its parser accepts.
 */
const ROOT = path.join(__dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'aurora-proxy-kit.js');

/** Each invocation in README.md: the arguments after `npx aurora-proxy-kit`, up to a comment, pipe or end of code. */
function readmeInvocations(): string[][] {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  return [...readme.matchAll(/npx aurora-proxy-kit((?: +[^\s#|&`)]+)*)/g)].map((m) => m[1]!.trim().split(/ +/).filter((w) => w !== ''))
    // The tool named in prose (a heading) is not a run.
    .filter((args) => args.length > 0);
}

/** The command words of an invocation: `rehearse up`, `bench`, `synth summary`; none for the tool's own options. */
function commandWords(args: string[]): string[] {
  const words: string[] = [];
  for (const a of args) {
    if (!/^[a-z]+$/.test(a) || words.length === 2 || (words.length === 1 && ['bench', 'demo'].includes(words[0]!))) break;
    words.push(a);
  }
  return words;
}

/** The command's own parser, on what the README passes it (throws on an unknown option or a bad value). */
function parse(words: string[], rest: string[]): void {
  if (rest.includes('--help') || rest.includes('--version')) return;
  switch (words.join(' ')) {
    case 'bench':
      parseBenchArgs(rest);
      return;
    case 'demo':
      parseOptions(rest, { options: DEMO_COMMAND.options, commandName: 'demo' });
      return;
    case 'synth summary':
      parseOptions(rest, { options: SYNTH_SUMMARY_COMMAND.options, commandName: 'synth summary', maxOperands: 1 });
      return;
    case 'plan summary':
      parseOptions(rest, { options: PLAN_SUMMARY_COMMAND.options, commandName: 'plan summary', maxOperands: 1 });
      return;
    default:
      if (words[0] !== 'rehearse') throw new Error(`the README runs npx aurora-proxy-kit ${words.join(' ')}, which this test does not know: add its parser here`);
      parseArgs([words[1]!, ...rest]);
  }
}

describe('README: npx aurora-proxy-kit', () => {
  const invocations = readmeInvocations();

  test('the README shows the command line for each of its commands', () => {
    const shown = new Set(invocations.map((args) => commandWords(args).join(' ')));
    expect([...shown].sort()).toEqual(expect.arrayContaining(['bench', 'demo', 'plan summary', 'rehearse down', 'rehearse drill', 'rehearse outputs', 'rehearse status', 'rehearse topology', 'rehearse up', 'synth summary']));
  });

  test.each(invocations.map((args) => [args.join(' '), args]))('npx aurora-proxy-kit %s: options the command accepts', (_, args) => {
    const words = commandWords(args);
    expect(() => parse(words, args.slice(words.length))).not.toThrow();
  });

  test.each([...new Set(invocations.map((args) => commandWords(args).join(' ')))].map((w) => [w]))('npx aurora-proxy-kit %s --help exits 0 with its usage', (words) => {
    // WHEN the command's help is asked for, as a process
    const args = words === '' ? [] : words.split(' ');
    const r = spawnSync(process.execPath, [BIN, ...args, '--help'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    // THEN it is a command the tool knows
    expect([r.status, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toMatch(new RegExp(`^Usage: aurora-proxy-kit ${words === '' ? '<command>' : words} `));
  });
});
