/**
 * Every AWS constraint the kit relies on is written down with its source and exercised: input rules by
 * shared vectors (which the CDK constructs and the Terraform modules both run), behaviours by the test
 * named beside them. docs/AWS-RULES.md is generated from the same rows (its freshness is checked with the
 * other generated files in test/terraform/generated.test.ts).
 */
import * as fs from 'fs';
import * as path from 'path';
import { AWS_FACTS } from '../../lib/model';
import { awsRuleRows } from '../../lib/terraform';
import { loadVectors } from '../helpers/vectors';

const ROOT = path.join(__dirname, '..', '..');

describe('AWS rules', () => {
  const rows = awsRuleRows();

  test.each(rows.map(({ rule }) => [rule.id, rule] as const))('GIVEN the AWS rule %s THEN it names its sources and has a rejected and an accepted vector', (id, rule) => {
    expect(rule.aws!.constraint.length).toBeGreaterThan(20);
    expect(rule.aws!.sources.length).toBeGreaterThan(0);
    for (const source of rule.aws!.sources) expect(source).toMatch(/^https:\/\/|^hashicorp\/terraform-provider-aws internal\/service\//);
    const vectors = loadVectors().filter((v) => v.rule === id);
    expect(vectors.some((v) => !v.accepted)).toBe(true);
    expect(vectors.some((v) => v.accepted)).toBe(true);
  });

  test.each(AWS_FACTS.map((f) => [f.id, f] as const))('GIVEN the AWS behaviour %s THEN the test named beside it exists and names it', (id, fact) => {
    const file = path.join(ROOT, fact.exercisedBy);
    expect(fs.existsSync(file)).toBe(true);
    expect(fs.readFileSync(file, 'utf8')).toContain(id);
    expect(fact.sources.every((s) => s.startsWith('https://'))).toBe(true);
  });

  test('fact ids are unique', () => {
    const ids = AWS_FACTS.map((f) => f.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
