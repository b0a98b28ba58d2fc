import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { KMS_DELETION_WINDOW_DAYS } from '../model';
import { allowLogsToUseKey } from './key-policies';

/**
 * The key an AuroraOptimizedReads makes when given none (id `Key` in the cluster's scope), serving CloudWatch
 * Logs for its PostgreSQL log group only. Retained, and a deletion waits the longest window: it decrypts the
 * final snapshot and backups.
 */
export function addClusterKey(scope: Construct, logGroupName: string): kms.Key {
  const key = new kms.Key(scope, 'Key', {
    description: `Encrypts the ${scope.node.path} Aurora cluster, its master secret, Performance Insights and its log`,
    enableKeyRotation: true,
    removalPolicy: RemovalPolicy.RETAIN,
    pendingWindow: Duration.days(KMS_DELETION_WINDOW_DAYS),
  });
  allowLogsToUseKey(key, [logGroupName]);
  return key;
}
