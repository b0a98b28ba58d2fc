import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';

/** Lets CloudWatch Logs of this region encrypt with `key` (log groups need it in the key policy). */
export function allowLogsToUseKey(key: kms.Key): void {
  const region = Stack.of(key).region;
  key.addToResourcePolicy(
    new iam.PolicyStatement({
      actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
      principals: [new iam.ServicePrincipal(`logs.${region}.amazonaws.com`)],
      resources: ['*'],
      conditions: {
        ArnLike: { 'kms:EncryptionContext:aws:logs:arn': `arn:${Stack.of(key).partition}:logs:${region}:${Stack.of(key).account}:*` },
      },
    }),
  );
}
