/** What an AuroraOptimizedReads is used and imported by (its own file, so the import's implementation needs nothing of the construct's). */
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { IConstruct } from 'constructs';

/**
 * What the role bootstrap, consumers and dashboard use of a cluster: an AuroraOptimizedReads of this app, or
 * one of another app or stack imported with AuroraOptimizedReads.fromAuroraOptimizedReadsAttributes.
 */
export interface IAuroraOptimizedReads extends IConstruct, ec2.IConnectable {
  /** The VPC the cluster's instances are in. */
  readonly vpc: ec2.IVpc;
  /** The cluster identifier. */
  readonly clusterIdentifier: string;
  /** The host name of the cluster (writer) endpoint. */
  readonly clusterEndpointHostname: string;
  /** The RDS-managed master user secret. */
  readonly masterSecret: secretsmanager.ISecret;
  /** The master user's name. */
  readonly masterUsername: string;
  /** The database created in the cluster. */
  readonly databaseName: string;
  /** The writer's DB instance identifier. */
  readonly writerInstanceIdentifier: string;
  /** The readers' DB instance identifiers, in order. */
  readonly readerInstanceIdentifiers: string[];
  /** Every instance identifier, writer first. */
  readonly instanceIdentifiers: string[];
  /** Lets `grantee` read the master secret, and decrypt it with the cluster's key through Secrets Manager. */
  grantMasterSecretRead(grantee: iam.IGrantable): iam.Grant;
}

/**
 * An AuroraOptimizedReads of another stack or app (AuroraOptimizedReads.fromAuroraOptimizedReadsAttributes):
 * the values its app exports, e.g. as stack outputs.
 */
export interface AuroraOptimizedReadsAttributes {
  /** The VPC the cluster is in (e.g. ec2.Vpc.fromLookup or fromVpcAttributes). */
  readonly vpc: ec2.IVpc;
  /** The cluster identifier. */
  readonly clusterIdentifier: string;
  /** The host name of the cluster (writer) endpoint. */
  readonly clusterEndpointHostname: string;
  /** The cluster's security group: granted peers get ingress to it on the PostgreSQL port. */
  readonly securityGroupId: string;
  /** The complete ARN of the RDS-managed master user secret. */
  readonly masterSecretArn: string;
  /**
   * The KMS key that encrypts the master secret (the cluster's `encryptionKey`): a reader of the secret gets
   * kms:Decrypt on it.
   * @default - no key grant: the secret is encrypted with the account's aws/secretsmanager key
   */
  readonly encryptionKeyArn?: string;
  /**
   * The master user's name.
   * @default 'postgres'
   */
  readonly masterUsername?: string;
  /**
   * The database created in the cluster.
   * @default 'app'
   */
  readonly databaseName?: string;
  /** The writer's DB instance identifier. */
  readonly writerInstanceIdentifier: string;
  /**
   * The readers' DB instance identifiers, in order.
   * @default - none
   */
  readonly readerInstanceIdentifiers?: string[];
}