import { AWS_FACTS, RULE_TABLES, type Rule } from '../model';
import type { Vector } from './vectors';

/** Rule rows that restate an AWS constraint, with the table each belongs to. */
export function awsRuleRows(): Array<{ table: string; rule: Rule<unknown> }> {
  return Object.entries(RULE_TABLES).flatMap(([table, rules]) =>
    (rules as ReadonlyArray<Rule<unknown>>).filter((rule) => rule.aws !== undefined).map((rule) => ({ table, rule })),
  );
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const sourcesCell = (sources: ReadonlyArray<string>) => sources.map((s) => (s.startsWith('http') ? `<${s}>` : `\`${s}\``)).join('<br>');

/**
 * docs/AWS-RULES.md: every AWS constraint the kit relies on, with its source. Input rules (rows of the
 * model's rule tables with an `aws` source) come with their shared vectors, which both flavours run;
 * behaviours come with the test that exercises them.
 */
export function renderAwsRulesDoc(vectors: ReadonlyArray<Vector>, generatedNote: string): string {
  const rules = awsRuleRows().map(({ table, rule }) => {
    const mine = vectors.filter((v) => v.rule === rule.id);
    const rejected = mine.filter((v) => !v.accepted).length;
    const names = [rule.properties.map((p) => rule.names?.[p] ?? p).join(', '), rule.terraform ? `${rule.terraform.module}: ${Object.values(rule.terraform.names).join(', ')}` : 'CDK only'];
    return `| \`${rule.id}\` (${table}) | ${cell(rule.aws!.constraint)} | ${cell(names.join('; '))} | ${sourcesCell(rule.aws!.sources)} | ${mine.length} (${rejected} rejected) |`;
  });
  const facts = AWS_FACTS.map((f) => `| \`${f.id}\` | ${cell(f.constraint)} | ${cell(f.consequence)} | ${sourcesCell(f.sources)} | \`${f.exercisedBy}\` |`);
  return [
    '# AWS rules the kit relies on',
    '',
    `<!-- ${generatedNote} -->`,
    '',
    'Offline checks only prove the kit against its own picture of AWS. This page lists the constraints AWS and the',
    'hashicorp/aws provider impose that the kit relies on, each with where it is written down. Rules on input are rows',
    'of the model\'s rule tables (`lib/model/rules.ts`): the CDK constructs run them at synth, the Terraform modules',
    'state them as generated validations, and the shared vectors (`test/vectors/validation-vectors.json`) hold both',
    'flavours to the same verdicts. Behaviours the code is written around are in `lib/model/aws-facts.ts`, each with the',
    'test that exercises it. The offline Terraform provider also enforces the real provider\'s plan-time validators',
    '(`test/terraform/provider/README.md`).',
    '',
    '## Input rules',
    '',
    '| Rule | AWS constraint | Checked as (CDK; Terraform) | Source | Vectors |',
    '| --- | --- | --- | --- | --- |',
    ...rules,
    '',
    '## Behaviours',
    '',
    '| Fact | AWS behaviour | What the kit does | Source | Exercised by |',
    '| --- | --- | --- | --- | --- |',
    ...facts,
    '',
  ].join('\n');
}
