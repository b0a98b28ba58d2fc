import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { LOGS_ENCRYPTION_CONTEXT_KEY, LOGS_KMS_ACTIONS, logGroupArn, logGroupConditionOperator } from '../model';

/**
 * Lets CloudWatch Logs of this region encrypt with `key` for the named log groups only (names, or
 * name patterns with `*`): log groups need it in the key policy, and a key that also encrypts data
 * should serve no other log group of the account.
 */
export function allowLogsToUseKey(key: kms.Key, logGroupNames: ReadonlyArray<string>): void {
  const stack = Stack.of(key);
  key.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'CloudWatchLogsEncrypt',
      actions: [...LOGS_KMS_ACTIONS],
      principals: [new iam.ServicePrincipal(`logs.${stack.region}.amazonaws.com`)],
      resources: ['*'],
      conditions: {
        [logGroupConditionOperator(logGroupNames)]: {
          [LOGS_ENCRYPTION_CONTEXT_KEY]: logGroupNames.map((name) => logGroupArn(stack.partition, stack.region, stack.account, name)),
        },
      },
    }),
  );
}

/**
 * The names CloudFormation gives the stack's unnamed log groups, as a pattern: the stack name, the
 * logical id and a random suffix ("Name type" in the CloudFormation User Guide).
 */
export function stackLogGroupPattern(stack: Stack): string {
  return `${stack.stackName}-*`;
}
