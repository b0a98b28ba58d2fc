import type { AwsSource } from './rule-table';

/**
 * Facts about the resources around the data path (KMS keys, log groups, the Secrets Manager interface
 * endpoint) that both flavours build on, each with where AWS writes it down.
 */

/** Days a deleted KMS key waits before it is gone; the longest AWS allows, so a destroy can be undone. */
export const KMS_DELETION_WINDOW_DAYS = 30;

export const KMS_DELETION_WINDOW: AwsSource = {
  constraint:
    'Deleting a KMS key only schedules it: it is deleted after a waiting period of 7 to 30 days (30 when not given), and CancelKeyDeletion restores it until then; data it encrypted (a final snapshot) is unrecoverable afterwards',
  sources: [
    'https://docs.aws.amazon.com/kms/latest/APIReference/API_ScheduleKeyDeletion.html',
    'https://registry.terraform.io/providers/hashicorp/aws/latest/docs/resources/kms_key#deletion_window_in_days',
  ],
};

/** What CloudWatch Logs does with a log group's key. */
export const LOGS_KMS_ACTIONS: ReadonlyArray<string> = ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'];

/** The key-policy condition key that holds the ARN of the log group CloudWatch Logs encrypts for. */
export const LOGS_ENCRYPTION_CONTEXT_KEY = 'kms:EncryptionContext:aws:logs:arn';

export const LOGS_KEY_SCOPE: AwsSource = {
  constraint:
    'CloudWatch Logs (principal logs.<region>.amazonaws.com) calls KMS with the log group ARN, arn:<partition>:logs:<region>:<account>:log-group:<name>, as encryption context under kms:EncryptionContext:aws:logs:arn; a key policy condition on it restricts the key to those log groups',
  sources: ['https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/encrypt-log-data-kms.html'],
};

/** The ARN CloudWatch Logs puts in the encryption context for a log group name (or a name pattern with `*`). */
export function logGroupArn(partition: string, region: string, account: string, name: string): string {
  return `arn:${partition}:logs:${region}:${account}:log-group:${name}`;
}

/** Exact names are matched with ArnEquals; a name pattern with `*` needs ArnLike. */
export function logGroupConditionOperator(names: ReadonlyArray<string>): 'ArnEquals' | 'ArnLike' {
  return names.some((n) => n.includes('*')) ? 'ArnLike' : 'ArnEquals';
}

/** The log group Aurora PostgreSQL exports its log to; the kit creates it first, encrypted. */
export function postgresLogGroupName(clusterIdentifier: string): string {
  return `/aws/rds/cluster/${clusterIdentifier}/postgresql`;
}

export const POSTGRES_LOG_GROUP: AwsSource = {
  constraint:
    'Aurora PostgreSQL publishes its log to the log group /aws/rds/cluster/<cluster identifier>/postgresql, creating it (unencrypted, never expiring) when it does not exist',
  sources: ['https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/AuroraPostgreSQL.CloudWatch.html'],
};

/** What the role bootstrap calls on the master secret (aws-cdk-lib's `grantRead`, the Terraform module's role policy). */
export const MASTER_SECRET_READ_ACTIONS: ReadonlyArray<string> = ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'];

export const VPC_ENDPOINT_POLICY: AwsSource = {
  constraint:
    'An interface endpoint policy limits the calls made through the endpoint (principal, action, resource); without one, the endpoint allows every call of every principal; it does not replace IAM policies',
  sources: ['https://docs.aws.amazon.com/vpc/latest/privatelink/vpc-endpoints-access.html'],
};

/** The condition key that names a gateway endpoint policy's principals (its Principal is "*"). */
export const GATEWAY_ENDPOINT_PRINCIPAL_KEY = 'aws:PrincipalArn';

export const GATEWAY_ENDPOINT_POLICY: AwsSource = {
  constraint:
    'A gateway endpoint policy (S3, DynamoDB) must have Principal "*" and limits a statement to principals with the aws:PrincipalArn condition key (an account as Principal would mean its root user only), which for a role\'s session is the role\'s ARN; without a policy the endpoint passes every call of every principal, to any bucket',
  sources: [
    'https://docs.aws.amazon.com/vpc/latest/privatelink/vpc-endpoints-access.html#vpc-endpoint-policies-gateway',
    'https://docs.aws.amazon.com/vpc/latest/privatelink/vpc-endpoints-s3.html',
    'https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-keys.html#condition-keys-principalarn',
  ],
};
