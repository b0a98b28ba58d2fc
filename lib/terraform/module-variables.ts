import * as fs from 'fs';
import * as path from 'path';
import { handWritten } from './regions';
import type { Region } from './regions';

/**
 * The kit's reader of a module's variables and outputs, for what terraform-docs does not give: a variable's
 * type and default as HCL text (the typed cdktn props, cdktn-bindings.ts; the vector tests' defaults,
 * vectors.ts), its hand-written validation blocks (the README's Rules table, readme.ts) and an output's value
 * expression (the kinds of the cdktn getters). The README's tables themselves are terraform-docs' (readme.ts).
 */
export interface VariableInfo {
  readonly name: string;
  readonly description: string;
  readonly type: string;
  readonly default?: string;
  readonly nullable: boolean;
  /** Hand-written validation blocks. */
  readonly validations: number;
  /** Offset in the text parsed, to keep the file's order. */
  readonly offset: number;
}

/**
 * The body of the block whose opening brace ends just before `start`: brace counting outside strings
 * and comments, up to the matching closing brace.
 */
export function blockBodyFrom(text: string, start: number): string {
  let depth = 1;
  let i = start;
  let inString = false;
  for (; i < text.length && depth > 0; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '#') i = text.indexOf('\n', i) - 1;
    else if (c === '{') depth++;
    else if (c === '}') depth--;
  }
  return text.slice(start, i - 1);
}

/** Top-level blocks `<kind> "<name>" { ... }` of an HCL file, by brace counting outside strings. */
export function topLevelBlocks(text: string, kind: string): Array<{ name: string; body: string; offset: number }> {
  const out: Array<{ name: string; body: string; offset: number }> = [];
  const re = new RegExp(`^${kind} "([^"]+)" \\{$`, 'gm');
  for (let m = re.exec(text); m; m = re.exec(text)) out.push({ name: m[1], body: blockBodyFrom(text, m.index + m[0].length), offset: m.index });
  return out;
}

/** The value of a top-level attribute of a block body: one line, or a bracketed multi-line value. */
function attribute(body: string, name: string): string | undefined {
  const lines = body.split('\n');
  const start = lines.findIndex((l) => new RegExp(`^  ${name}\\s*=`).test(l));
  if (start < 0) return undefined;
  let value = lines[start].replace(new RegExp(`^  ${name}\\s*=\\s*`), '');
  let depth = (value.match(/[[({]/g) ?? []).length - (value.match(/[\])}]/g) ?? []).length;
  for (let i = start + 1; depth > 0 && i < lines.length; i++) {
    value += ` ${lines[i].trim()}`;
    depth += (lines[i].match(/[[({]/g) ?? []).length - (lines[i].match(/[\])}]/g) ?? []).length;
  }
  return value.replace(/\s+/g, ' ').replace(/\( /g, '(').replace(/ \)/g, ')').replace(/\{ \}/g, '{}').trim();
}

function unquote(value: string | undefined): string {
  return value === undefined ? '' : (JSON.parse(value) as string);
}

export function parseVariables(text: string): VariableInfo[] {
  return topLevelBlocks(text, 'variable').map(({ name, body, offset }) => ({
    name,
    description: unquote(attribute(body, 'description')),
    type: attribute(body, 'type') ?? 'any',
    default: attribute(body, 'default'),
    nullable: attribute(body, 'nullable') !== 'false',
    validations: (body.match(/^\s*validation \{/gm) ?? []).length,
    offset,
  }));
}

/** Outputs with their description and value expression (on one line). */
export function parseOutputs(text: string): Array<{ name: string; description: string; value: string }> {
  return topLevelBlocks(text, 'output').map(({ name, body }) => ({ name, description: unquote(attribute(body, 'description')), value: attribute(body, 'value') ?? '' }));
}

/** A module's variables in file order: the hand-written ones, and those a generated region declares whole. */
export function moduleVariables(moduleDir: string, regions: ReadonlyArray<Region>): VariableInfo[] {
  return fs
    .readdirSync(moduleDir)
    .filter((f) => f.endsWith('.tf'))
    .sort()
    .flatMap((f) => variablesOf(handWritten(fs.readFileSync(path.join(moduleDir, f), 'utf8')), regions));
}

/**
 * The variables of a file's hand-written text (generated regions replaced by `# region <id>`) and those its
 * regions declare whole, in file order. A declared variable's validations are its rules' (listed by rule in
 * the README), so none counts as hand-written.
 */
function variablesOf(text: string, regions: ReadonlyArray<Region>): VariableInfo[] {
  const declared = [...text.matchAll(/^# region (\S+)$/gm)].flatMap((m) =>
    regions.filter((r) => r.id === m[1]).flatMap((r) => parseVariables(r.lines.join('\n')).map((v) => ({ ...v, validations: 0, offset: m.index! }))),
  );
  return [...parseVariables(text), ...declared].sort((a, b) => a.offset - b.offset);
}

/** Literal defaults of a module's hand-written variables (strings, numbers, bools, empty or flat lists and maps). */
export function variableDefaults(moduleDir: string, regions: ReadonlyArray<Region> = []): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const v of variablesOf(handWritten(fs.readFileSync(path.join(moduleDir, 'variables.tf'), 'utf8')), regions)) {
    if (v.default === undefined) continue;
    try {
      out[v.name] = JSON.parse(v.default);
    } catch {
      // Not a JSON-compatible literal (e.g. an object expression); not a rule input.
    }
  }
  return out;
}
