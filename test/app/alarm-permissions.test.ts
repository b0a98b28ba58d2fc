import * as fs from 'fs';
import * as path from 'path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { ReferenceDeployment } from '../../lib/reference-app/reference-deployment';
import { templateAlarmPaths } from '../helpers/alarm-permissions';
import { evaluatePolicy } from '../helpers/policy-evaluation';

/**
 * Can the reference deployment's alarms notify anyone? For every alarm action of the synthesized
 * template, CloudWatch must be allowed to publish to the topic (the topic policy replaces SNS's default
 * one) and to use the topic's KMS key, with no Deny in the way; and only for these alarms.
 */

const CDK_CONTEXT = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'cdk.json'), 'utf8')).context as Record<string, unknown>;

type TemplateJson = Parameters<typeof templateAlarmPaths>[0];

describe('alarm notifications of the reference deployment', () => {
  let template: TemplateJson;

  beforeAll(() => {
    const stack = new ReferenceDeployment(new App({ context: CDK_CONTEXT }), 'AuroraProxyKit');
    template = Template.fromStack(stack).toJSON() as TemplateJson;
  }, 300_000);

  test('CloudWatch may publish to the topic and use its key for every alarm action', () => {
    const paths = templateAlarmPaths(template);
    const alarms = Object.values(template.Resources).filter((r) => r.Type === 'AWS::CloudWatch::Alarm').length;
    expect(alarms).toBeGreaterThan(0);
    expect(paths).toHaveLength(2 * alarms); // ALARM and OK
    for (const p of paths) expect(p).toEqual({ alarm: p.alarm, publish: 'allow', generateDataKey: 'allow', decrypt: 'allow' });
  });

  test('an alarm outside the dashboard\'s name prefix may neither publish nor use the key', () => {
    // GIVEN: one alarm renamed, as if another stack's alarm pointed at this topic
    const copy = JSON.parse(JSON.stringify(template)) as TemplateJson;
    const alarm = Object.values(copy.Resources).find((r) => r.Type === 'AWS::CloudWatch::Alarm')!;
    alarm.Properties.AlarmName = 'SomeoneElse-WriterCpu';
    // WHEN
    const foreign = templateAlarmPaths(copy).filter((p) => p.alarm === 'SomeoneElse-WriterCpu');
    // THEN
    expect(foreign).toHaveLength(2);
    for (const p of foreign) expect(p).toEqual({ alarm: p.alarm, publish: 'implicit-deny', generateDataKey: 'implicit-deny', decrypt: 'implicit-deny' });
  });
});

describe('the policy evaluator', () => {
  const request = { service: 'cloudwatch.amazonaws.com', action: 'sns:Publish', resource: 'arn:aws:sns:us-east-1:1:t', context: { 'aws:SecureTransport': 'false' } };
  const allow = { Effect: 'Allow' as const, Principal: { Service: 'cloudwatch.amazonaws.com' }, Action: 'sns:Publish', Resource: 'arn:aws:sns:us-east-1:1:t' };

  test('a matching Deny wins over an Allow', () => {
    const deny = { Effect: 'Deny' as const, Principal: '*' as const, Action: 'sns:Publish', Condition: { Bool: { 'aws:SecureTransport': 'false' } } };
    expect(evaluatePolicy([allow], request)).toBe('allow');
    expect(evaluatePolicy([allow, deny], request)).toBe('explicit-deny');
    expect(evaluatePolicy([], request)).toBe('implicit-deny');
  });

  test('a condition key missing from the request fails the condition', () => {
    expect(evaluatePolicy([{ ...allow, Condition: { StringEquals: { 'aws:SourceAccount': '1' } } }], request)).toBe('implicit-deny');
  });

  test('an operator it does not know fails loudly', () => {
    expect(() => evaluatePolicy([{ ...allow, Condition: { NumericLessThan: { 'aws:EpochTime': '1' } } }], request)).toThrow('condition operator NumericLessThan');
  });
});
