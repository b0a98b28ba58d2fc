import * as fs from 'fs';
import * as path from 'path';
import { isValueRule } from '../model';
import { generatedBy } from './hcl';
import { moduleSpec, rulesOf, ruleVariable, variableOf } from './modules';
import { moduleVariables, type VariableInfo } from './module-variables';
import type { Region } from './regions';
import { injectTerraformDocs } from './terraform-docs';

/**
 * Each module's and example's README.md: terraform-docs' tables between `<!-- BEGIN_TF_DOCS -->` and
 * `<!-- END_TF_DOCS -->` (terraform-docs.ts), and the kit's own Rules table between `<!-- BEGIN_KIT_RULES -->`
 * and `<!-- END_KIT_RULES -->`: the rules of lib/model each input is checked against (the shared vectors
 * tests/vectors.tftest.hcl runs), which terraform-docs cannot know.
 */

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function rulesOfVariable(module: string, variable: VariableInfo): string[] {
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
  return docs;
}

/** The inputs with a rule or a hand-written validation, each with them; the others are not listed. */
export function rulesTable(module: string, variables: ReadonlyArray<VariableInfo>): string {
  const rows = variables.flatMap((v) => {
    const docs = rulesOfVariable(module, v);
    return docs.length === 0 ? [] : [`| \`${v.name}\` | ${cell(docs.join('; '))} |`];
  });
  if (rows.length === 0) return 'No input is checked by a rule.';
  return ['| Input | Rules |', '| --- | --- |', ...rows].join('\n');
}

function fillRules(text: string, table: string, file: string): string {
  const re = /<!-- BEGIN_KIT_RULES -->[\s\S]*?<!-- END_KIT_RULES -->/;
  if (!re.test(text)) throw new Error(`${file}: no <!-- BEGIN_KIT_RULES --> ... <!-- END_KIT_RULES --> markers; add them below <!-- END_TF_DOCS -->`);
  return text.replace(re, () => `<!-- BEGIN_KIT_RULES -->\n<!-- ${generatedBy('lib/model/rules.ts and variables.tf')} -->\n${table}\n<!-- END_KIT_RULES -->`);
}

/**
 * The module's README with every table rendered. `rendered` holds the module's .tf files this render
 * rewrites (by file name), which terraform-docs reads instead of the committed ones.
 */
export function renderReadme(module: string, moduleDir: string, regions: ReadonlyArray<Region>, rendered: ReadonlyMap<string, string> = new Map()): string {
  const file = path.join(moduleDir, 'README.md');
  const tfFiles = new Map(
    fs
      .readdirSync(moduleDir)
      .filter((f) => f.endsWith('.tf'))
      .sort()
      .map((f) => [f, rendered.get(f) ?? fs.readFileSync(path.join(moduleDir, f), 'utf8')] as const),
  );
  const text = injectTerraformDocs(fs.readFileSync(file, 'utf8'), tfFiles, file);
  return fillRules(text, rulesTable(module, moduleVariables(moduleDir, regions)), file);
}
