import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { KMS_DELETION_WINDOW_DAYS } from '../model';
import { AuroraOptimizedReads } from '../aurora-optimized-reads';
import { PgBouncerProxy } from '../pgbouncer-proxy';
import { skipCheckov } from '../private/checkov';

/** Where the reference deployment expects the hosts' packages tar (PgBouncerPackages: the Debian 13 arm64 packages, the SSM Agent's among them, SHA256SUMS, the RDS CA bundle). */
export const POOLER_PACKAGES_KEY = 'pgbouncer/debian-13-arm64.tar';

export interface PgBouncerTierProps {
  readonly cluster: AuroraOptimizedReads;
  readonly maxConnectionsPercent?: number;
}

/**
 * The reference deployment's PgBouncer engine: the fleet in the data VPC (its hosts make the VPC endpoints
 * they call, the data VPC having no NAT) and a bucket for the packages. Its endpoints are added through
 * IPoolingTier, as RDS Proxy's are.
 */
export class PgBouncerTier extends Construct {
  public readonly proxy: PgBouncerProxy;
  public readonly packagesBucket: s3.Bucket;

  constructor(scope: Construct, id: string, props: PgBouncerTierProps) {
    super(scope, id);
    this.packagesBucket = this.newPackagesBucket();
    this.proxy = new PgBouncerProxy(this, 'Proxy', {
      cluster: props.cluster,
      packages: { bucket: this.packagesBucket, key: POOLER_PACKAGES_KEY },
      maxConnectionsPercent: props.maxConnectionsPercent,
    });
  }

  private newPackagesBucket(): s3.Bucket {
    const key = new kms.Key(this, 'PackagesKey', {
      description: 'Encrypts the PgBouncer hosts\' packages of the aurora-proxy-kit reference deployment',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
      pendingWindow: Duration.days(KMS_DELETION_WINDOW_DAYS),
    });
    const bucket = new s3.Bucket(this, 'Packages', {
      encryption: s3.BucketEncryption.KMS,
      encryptionKey: key,
      bucketKeyEnabled: true,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      versioned: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const reason = 'holds the one packages object the operator uploads; the hosts\' reads are in CloudTrail (S3 data events can be turned on for it), a log bucket of its own would add a bucket per deployment';
    Validations.of(bucket).acknowledge({ id: 'AwsSolutions-S1', reason });
    skipCheckov(bucket, [
      { id: 'CKV_AWS_18', comment: reason },
      { id: 'CKV_AWS_144', comment: 'the packages are Debian\'s, rebuilt from its archive at will; a replica in another Region adds nothing the archive lacks' },
    ]);
    return bucket;
  }
}
