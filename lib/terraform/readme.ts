import * as fs from 'fs';
import * as path from 'path';
import { isValueRule } from '../model';
import { generatedBy } from './hcl';
import { moduleSpec, rulesOf, ruleVariable, variableOf } from './modules';
import { blockBodyFrom, moduleFacts, modulesTable, providersTable, requirementsTable, resourcesTable } from './readme-sections';
import { handWritten } from './regions';
import type { Region } from './regions';

/**
 * The tables of each module's and example's README.md, each between `<!-- BEGIN_TF_<SECTION> -->` and
 * `<!-- END_TF_<SECTION> -->`, the sections terraform-docs writes: requirements, providers, modules and
 * resources (readme-sections.ts), then inputs and outputs: variables and outputs from one parse of the
 * hand-written .tf files (generated regions cut out), variables the generator declares itself from its
 * own regions, and each variable's rules from the model.
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
    .flatMap((f) => {
      const text = handWritten(fs.readFileSync(path.join(moduleDir, f), 'utf8'));
      const declared = [...text.matchAll(/^# region (\S+)$/gm)].flatMap((m) =>
        regions.filter((r) => r.id === m[1]).flatMap((r) => parseVariables(r.lines.join('\n')).map((v) => ({ ...v, offset: m.index! }))),
      );
      return [...parseVariables(text), ...declared].sort((a, b) => a.offset - b.offset);
    });
}

/** Literal defaults of a module's hand-written variables (strings, numbers, bools, empty or flat lists and maps). */
export function variableDefaults(moduleDir: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const v of parseVariables(handWritten(fs.readFileSync(path.join(moduleDir, 'variables.tf'), 'utf8')))) {
    if (v.default === undefined) continue;
    try {
      out[v.name] = JSON.parse(v.default);
    } catch {
      // Not a JSON-compatible literal (e.g. an object expression); not a rule input.
    }
  }
  return out;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const code = (text: string) => `\`${cell(text)}\``;

function rulesColumn(module: string, variable: VariableInfo): string {
  const docs = rulesOf(module)
    // A value rule is listed at each variable it checks; a rule across variables at its first.
    .filter((r) => (isValueRule(r) ? r.properties.some((p) => variableOf(r.terraform.names[p]) === variable.name) : ruleVariable(r) === variable.name))
    .map((r) => {
      // A rule over several attributes lists those of this variable; a variable read as its length says so.
      const mine = r.properties.map((p) => r.terraform.names[p]).filter((n) => variableOf(n) === variable.name);
      const which = isValueRule(r) && r.properties.length > 1 && (mine.length > 1 || mine[0] !== variable.name) ? `${mine.join(', ')} ` : '';
      const length = isValueRule(r) && moduleSpec(module).lengths?.includes(variable.name) ? 'its length, ' : '';
      return `${r.id}: ${which}${length}${r.summary}`;
    });
  if (variable.validations > 0) docs.push('validated (see variables.tf)');
  return cell(docs.join('; ')) || '-';
}

function inputsTable(module: string, variables: ReadonlyArray<VariableInfo>): string {
  const rows = variables.map(
    (v) => `| ${code(v.name)} | ${code(v.type)} | ${v.default === undefined ? 'required' : code(v.default)} | ${cell(v.description)} | ${rulesColumn(module, v)} |`,
  );
  if (rows.length === 0) return 'No inputs.';
  return ['| Name | Type | Default | Description | Rules |', '| --- | --- | --- | --- | --- |', ...rows].join('\n');
}

function outputsTable(moduleDir: string): string {
  const outputs = fs
    .readdirSync(moduleDir)
    .filter((f) => f.endsWith('.tf'))
    .sort()
    .flatMap((f) => parseOutputs(handWritten(fs.readFileSync(path.join(moduleDir, f), 'utf8'))));
  if (outputs.length === 0) return 'No outputs.';
  return ['| Name | Description |', '| --- | --- |', ...outputs.map((o) => `| ${code(o.name)} | ${cell(o.description)} |`)].join('\n');
}

function fillTable(text: string, marker: string, comment: string, table: string, file: string): string {
  const re = new RegExp(`<!-- BEGIN_TF_${marker} -->[\\s\\S]*?<!-- END_TF_${marker} -->`);
  if (!re.test(text)) throw new Error(`${file}: no <!-- BEGIN_TF_${marker} --> ... <!-- END_TF_${marker} --> markers`);
  return text.replace(re, () => `<!-- BEGIN_TF_${marker} -->\n<!-- ${comment} -->\n${table}\n<!-- END_TF_${marker} -->`);
}

/** The module's README with every table rendered. */
export function renderReadme(module: string, moduleDir: string, regions: ReadonlyArray<Region>): string {
  const file = path.join(moduleDir, 'README.md');
  const facts = moduleFacts(moduleDir);
  let text = fs.readFileSync(file, 'utf8');
  text = fillTable(text, 'REQUIREMENTS', generatedBy('the terraform block'), requirementsTable(facts), file);
  text = fillTable(text, 'PROVIDERS', generatedBy('required_providers'), providersTable(facts), file);
  text = fillTable(text, 'MODULES', generatedBy('the module blocks'), modulesTable(facts), file);
  text = fillTable(text, 'RESOURCES', generatedBy('the resource and data blocks'), resourcesTable(facts), file);
  text = fillTable(text, 'INPUTS', generatedBy('variables.tf and lib/model/rules.ts'), inputsTable(module, moduleVariables(moduleDir, regions)), file);
  text = fillTable(text, 'OUTPUTS', generatedBy('the output blocks'), outputsTable(moduleDir), file);
  return text;
}
