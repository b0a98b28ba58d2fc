import { Decision, PolicyRequest, PolicyStatement, evaluatePolicy } from './policy-evaluation';

/**
 * The permission path of an alarm notification: CloudWatch (cloudwatch.amazonaws.com), on behalf of one
 * alarm, publishes to the alarm's topic (the topic policy decides) and has SNS use the topic's KMS key
 * (the key policy decides, for kms:GenerateDataKey and kms:Decrypt). Built from a synthesized template
 * here, and from a Terraform plan in test/integration/terraform/parity.test.ts, so both flavours are judged alike.
 */

/** The account, region and partition the intrinsics resolve to. */
export const TEST_ENV = { partition: 'aws', region: 'us-east-1', account: '123456789012' } as const;

export interface AlarmPath {
  /** The alarm's name. */
  readonly alarm: string;
  readonly publish: Decision;
  readonly generateDataKey: Decision;
  readonly decrypt: Decision;
}

/** What CloudWatch asks for one alarm, and the decisions of the topic and key policies. */
export function judgeAlarmPath(
  alarmName: string,
  topic: { arn: string; statements: ReadonlyArray<PolicyStatement> },
  key: { arn: string; statements: ReadonlyArray<PolicyStatement> },
): AlarmPath {
  const { partition, region, account } = TEST_ENV;
  const context = {
    'aws:SourceAccount': account,
    'aws:SourceArn': `arn:${partition}:cloudwatch:${region}:${account}:alarm:${alarmName}`,
    // Assumed: AWS services call each other over TLS, so the topics' TLS-only Deny does not apply.
    'aws:SecureTransport': 'true',
  };
  const request = (action: string, resource: string): PolicyRequest => ({ service: 'cloudwatch.amazonaws.com', action, resource, context });
  return {
    alarm: alarmName,
    publish: evaluatePolicy(topic.statements, request('sns:Publish', topic.arn)),
    generateDataKey: evaluatePolicy(key.statements, request('kms:GenerateDataKey', key.arn)),
    decrypt: evaluatePolicy(key.statements, request('kms:Decrypt', key.arn)),
  };
}

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

/** Resolves the intrinsics of a template value: pseudo parameters, topic and key references, Fn::Join. */
function resolver(resources: Resources) {
  const { partition, region, account } = TEST_ENV;
  const pseudo: Record<string, string> = { 'AWS::Partition': partition, 'AWS::Region': region, 'AWS::AccountId': account, 'AWS::URLSuffix': 'amazonaws.com' };
  const arnOf = (id: string): string => {
    const type = resources[id]?.Type;
    if (type === 'AWS::SNS::Topic') return `arn:${partition}:sns:${region}:${account}:${id}`;
    if (type === 'AWS::KMS::Key') return `arn:${partition}:kms:${region}:${account}:key/${id}`;
    throw new Error(`cannot resolve the ARN of ${id} (${type})`);
  };
  const resolve = (value: unknown): unknown => {
    if (typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) return value.map(resolve);
    const v = value as Record<string, unknown>;
    if (typeof v.Ref === 'string') return pseudo[v.Ref] ?? arnOf(v.Ref);
    if (Array.isArray(v['Fn::GetAtt'])) {
      const [id, attribute] = v['Fn::GetAtt'] as [string, string];
      if (attribute !== 'Arn') throw new Error(`cannot resolve ${id}.${attribute}`);
      return arnOf(id);
    }
    if (Array.isArray(v['Fn::Join'])) {
      const [separator, parts] = v['Fn::Join'] as [string, unknown[]];
      return parts.map((p) => String(resolve(p))).join(separator);
    }
    return Object.fromEntries(Object.entries(v).map(([k, inner]) => [k, resolve(inner)]));
  };
  return resolve;
}

/** Every alarm action of a synthesized template, judged: one entry per alarm and action (ALARM and OK). */
export function templateAlarmPaths(template: { Resources: Resources }): AlarmPath[] {
  const resources = template.Resources;
  const resolve = resolver(resources);
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
  const topicIdOf = (action: unknown): string => {
    const id = (action as { Ref?: string }).Ref;
    if (!id || resources[id]?.Type !== 'AWS::SNS::Topic') throw new Error(`alarm action ${JSON.stringify(action)} is not a topic of this template`);
    return id;
  };
  return ofType('AWS::CloudWatch::Alarm').flatMap(([, alarm]) => {
    const name = resolve(alarm.Properties.AlarmName);
    if (typeof name !== 'string') throw new Error('an alarm without a name: its ARN, and so its permissions, cannot be known');
    const actions = [...((alarm.Properties.AlarmActions as unknown[]) ?? []), ...((alarm.Properties.OKActions as unknown[]) ?? [])];
    return actions.map((action) => {
      const topicId = topicIdOf(action);
      const topicStatements = ofType('AWS::SNS::TopicPolicy')
        .filter(([, p]) => (p.Properties.Topics as Array<{ Ref?: string }>).some((t) => t.Ref === topicId))
        .flatMap(([, p]) => (resolve(p.Properties.PolicyDocument) as { Statement: PolicyStatement[] }).Statement);
      const keyArn = resolve(resources[topicId].Properties.KmsMasterKeyId);
      const keyId = ((resources[topicId].Properties.KmsMasterKeyId as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'] ?? [])[0];
      if (!keyId || resources[keyId]?.Type !== 'AWS::KMS::Key') throw new Error(`topic ${topicId} is not encrypted with a key of this template`);
      const keyStatements = (resolve(resources[keyId].Properties.KeyPolicy) as { Statement: PolicyStatement[] }).Statement;
      return judgeAlarmPath(name, { arn: resolve({ Ref: topicId }) as string, statements: topicStatements }, { arn: keyArn as string, statements: keyStatements });
    });
  });
}
