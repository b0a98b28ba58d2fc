import {
  ENGINE_VERSION_NO_DOWNGRADE,
  GATEWAY_ENDPOINT_POLICY,
  KMS_DELETION_WINDOW,
  KMS_DELETION_WINDOW_DAYS,
  LOGS_KEY_SCOPE,
  POSTGRES_LOG_GROUP,
  VPC_ENDPOINT_POLICY,
  logGroupArn,
  logGroupConditionOperator,
  postgresLogGroupName,
} from '../../lib/model';

describe('facts about the supporting resources', () => {
  test('the log group ARN CloudWatch Logs puts in the encryption context', () => {
    expect(logGroupArn('aws', 'us-east-1', '123456789012', postgresLogGroupName('kit'))).toBe(
      'arn:aws:logs:us-east-1:123456789012:log-group:/aws/rds/cluster/kit/postgresql',
    );
  });

  test('exact names match with ArnEquals; a pattern needs ArnLike', () => {
    expect(logGroupConditionOperator(['/aws/rds/cluster/kit/postgresql'])).toBe('ArnEquals');
    expect(logGroupConditionOperator(['/aws/lambda/kit-reader', '/aurora-proxy-kit/kit/*'])).toBe('ArnLike');
  });

  test('the deletion window is the longest KMS allows', () => {
    expect(KMS_DELETION_WINDOW_DAYS).toBe(30);
    expect(KMS_DELETION_WINDOW.constraint).toMatch(/7 to 30 days/);
  });

  test.each([KMS_DELETION_WINDOW, LOGS_KEY_SCOPE, POSTGRES_LOG_GROUP, VPC_ENDPOINT_POLICY, GATEWAY_ENDPOINT_POLICY, ENGINE_VERSION_NO_DOWNGRADE])('each AWS fact names its source', (fact) => {
    expect(fact.constraint.length).toBeGreaterThan(0);
    expect(fact.sources.length).toBeGreaterThan(0);
    for (const source of fact.sources) expect(source).toMatch(/^https:\/\//);
  });
});
