import { Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { POSTGRES_PORT } from '../model';
import type { IAuroraOptimizedReads, AuroraOptimizedReadsAttributes } from '../aurora-optimized-reads-attributes';

/** An imported cluster: its attributes, a secret and a security group of this stack's own naming. */
export class ImportedAuroraOptimizedReads extends Construct implements IAuroraOptimizedReads {
  public readonly vpc: ec2.IVpc;
  public readonly clusterIdentifier: string;
  public readonly clusterEndpointHostname: string;
  public readonly masterSecret: secretsmanager.ISecret;
  public readonly masterUsername: string;
  public readonly databaseName: string;
  public readonly writerInstanceIdentifier: string;
  public readonly readerInstanceIdentifiers: string[];
  public readonly connections: ec2.Connections;
  private readonly encryptionKeyArn?: string;

  constructor(scope: Construct, id: string, attrs: AuroraOptimizedReadsAttributes) {
    super(scope, id);
    this.encryptionKeyArn = attrs.encryptionKeyArn;
    this.vpc = attrs.vpc;
    this.clusterIdentifier = attrs.clusterIdentifier;
    this.clusterEndpointHostname = attrs.clusterEndpointHostname;
    this.masterUsername = attrs.masterUsername ?? 'postgres';
    this.databaseName = attrs.databaseName ?? 'app';
    this.writerInstanceIdentifier = attrs.writerInstanceIdentifier;
    this.readerInstanceIdentifiers = [...(attrs.readerInstanceIdentifiers ?? [])];
    this.masterSecret = secretsmanager.Secret.fromSecretAttributes(this, 'MasterSecret', {
      secretCompleteArn: attrs.masterSecretArn,
    });
    // Rules granted here are made in this stack, on the cluster's group (mutable: that is what a grant is for).
    const securityGroup = ec2.SecurityGroup.fromSecurityGroupId(this, 'SecurityGroup', attrs.securityGroupId, { allowAllOutbound: false });
    this.connections = new ec2.Connections({ securityGroups: [securityGroup], defaultPort: ec2.Port.tcp(POSTGRES_PORT) });
  }

  public get instanceIdentifiers(): string[] {
    return [this.writerInstanceIdentifier, ...this.readerInstanceIdentifiers];
  }

  /**
   * The secret's read, and kms:Decrypt through Secrets Manager on the principal: an imported key's policy cannot
   * be added to (aws-cdk-lib drops that grant), and the kit's key policy lets the account's IAM policies allow it.
   */
  public grantMasterSecretRead(grantee: iam.IGrantable): iam.Grant {
    const grant = this.masterSecret.grantRead(grantee);
    if (this.encryptionKeyArn === undefined) return grant;
    return grant.combine(
      iam.Grant.addToPrincipal({
        grantee,
        actions: ['kms:Decrypt'],
        resourceArns: [this.encryptionKeyArn],
        conditions: { StringEquals: { 'kms:ViaService': `secretsmanager.${Stack.of(this).region}.amazonaws.com` } },
      }),
    );
  }
}