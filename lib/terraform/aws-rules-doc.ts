import {
  ALARM_TOPIC_ACCESS,
  AWS_FACTS,
  ENGINE_VERSION_NO_DOWNGRADE,
  GATEWAY_ENDPOINT_POLICY,
  KMS_DELETION_WINDOW,
  LOGS_KEY_SCOPE,
  METRIC_CATALOG,
  POSTGRES_LOG_GROUP,
  RULE_TABLES,
  VPC_ENDPOINT_POLICY,
  type AwsSource,
  type Rule,
  terraformUses,
} from '../model';
import type { Vector } from './vectors';

/** The model's constants that carry the AWS constraint they follow. */
const SOURCED_CONSTANTS: ReadonlyArray<readonly [string, AwsSource]> = [
  ['ALARM_TOPIC_ACCESS', ALARM_TOPIC_ACCESS.aws],
  ['ENGINE_VERSION_NO_DOWNGRADE', ENGINE_VERSION_NO_DOWNGRADE],
  ['GATEWAY_ENDPOINT_POLICY', GATEWAY_ENDPOINT_POLICY],
  ['KMS_DELETION_WINDOW', KMS_DELETION_WINDOW],
  ['LOGS_KEY_SCOPE', LOGS_KEY_SCOPE],
  ['POSTGRES_LOG_GROUP', POSTGRES_LOG_GROUP],
  ['VPC_ENDPOINT_POLICY', VPC_ENDPOINT_POLICY],
];

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
    const names = [rule.properties.map((p) => rule.names?.[p] ?? p).join(', '), terraformUses(rule).length > 0 ? terraformUses(rule).map((u) => `${u.module}: ${Object.values(u.names).join(', ')}`).join('; ') : 'CDK only'];
    return `| \`${rule.id}\` (${table}) | ${cell(rule.aws!.constraint)} | ${cell(names.join('; '))} | ${sourcesCell(rule.aws!.sources)} | ${mine.length} (${rejected} rejected) |`;
  });
  const metrics = METRIC_CATALOG.filter((m) => m.aws !== undefined).map(
    (m) => `| \`${m.namespace} ${m.metricName}\` | ${cell(m.aws!.constraint)} | ${sourcesCell(m.aws!.sources)} |`,
  );
  const constants = SOURCED_CONSTANTS.map(([name, source]) => `| \`${name}\` | ${cell(source.constraint)} | ${sourcesCell(source.sources)} |`);
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
    '## Metrics the dashboard and alarms read',
    '',
    'Checked by the construct tests, the dashboard module\'s `terraform test` and the parity test (`lib/model/metrics.ts`).',
    '',
    '| Metric | AWS says | Source |',
    '| --- | --- | --- |',
    ...metrics,
    '',
    '## Sourced constants',
    '',
    'Values both flavours take from the model (`lib/model/`); the parity test holds the CDK template and the Terraform plan to them.',
    '',
    '| Constant | AWS says | Source |',
    '| --- | --- | --- |',
    ...constants,
    '',
  ].join('\n');
}
