import { CustomResource, Duration, Stack, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { BOOTSTRAP_ENV, requestProblems, type DatabaseRoleSpec, type RoleBootstrapRequest } from '../lambda/src/role-bootstrap-request';
import { POSTGRES_PORT, RDS_CA_BUNDLE_ENV } from './model';
import { OptimizedReadsCluster } from './optimized-reads-cluster';
import { skipCheckov } from './private/checkov';
import { handlerFunction } from './private/handler-function';
import { allowLogsToUseKey, stackLogGroupPattern } from './private/key-policies';
import { throwIfInvalid } from './private/validation';

export type { DatabaseRoleSpec } from '../lambda/src/role-bootstrap-request';

/** Properties of a DatabaseRoleBootstrap. */
export interface DatabaseRoleBootstrapProps {
  /** The cluster whose writer gets the roles. */
  readonly cluster: OptimizedReadsCluster;
  /** One role per consumer: READ_ONLY roles read, READ_WRITE roles also write and create tables. */
  readonly roles: DatabaseRoleSpec[];
  /**
   * Subnets of the bootstrap function, in the cluster's VPC; they must reach Secrets Manager (an
   * interface endpoint, allowed through `connections`).
   * @default - the VPC's isolated subnets
   */
  readonly vpcSubnets?: ec2.SubnetSelection;
  /**
   * Key that encrypts the function's environment and log group. Its policy must let CloudWatch Logs use it.
   * @default - a new key with rotation on
   */
  readonly encryptionKey?: kms.IKey;
}

/**
 * Least-privilege database roles, made at deploy time: a function in the cluster's VPC logs in to the
 * writer as the master user (the RDS-managed secret, read through Secrets Manager) and runs the
 * idempotent SQL of lambda/src/role-bootstrap.ts, through a custom resource. The provider framework's
 * function, outside the VPC, answers CloudFormation, so the data VPC needs no route to S3.
 */
export class DatabaseRoleBootstrap extends Construct implements ec2.IConnectable {
  public readonly function: lambda.Function;
  /** The function's network access: egress to the cluster is granted; add Secrets Manager's. */
  public readonly connections: ec2.Connections;
  public readonly resource: CustomResource;
  public readonly roles: DatabaseRoleSpec[];

  constructor(scope: Construct, id: string, props: DatabaseRoleBootstrapProps) {
    super(scope, id);
    const request: RoleBootstrapRequest = { database: props.cluster.databaseName, roles: props.roles };
    throwIfInvalid(this, requestProblems(request, props.cluster.masterUsername));
    this.roles = [...props.roles];
    const cluster = props.cluster;

    const key =
      props.encryptionKey ??
      new kms.Key(this, 'Key', { description: `Encrypts the environment and logs of ${this.node.path}`, enableKeyRotation: true });
    if (!props.encryptionKey) allowLogsToUseKey(key as kms.Key, [stackLogGroupPattern(Stack.of(this))]);
    const logGroup = new logs.LogGroup(this, 'Logs', { retention: logs.RetentionDays.ONE_MONTH, encryptionKey: key });

    const securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc: cluster.cluster.vpc,
      description: `Database role bootstrap ${this.node.path}: egress only to the cluster and Secrets Manager`,
      allowAllOutbound: false,
    });
    this.function = handlerFunction(this, 'Function', {
      kitHandler: 'role-bootstrap',
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 256,
      timeout: Duration.minutes(2),
      vpc: cluster.cluster.vpc,
      vpcSubnets: props.vpcSubnets ?? { subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
      securityGroups: [securityGroup],
      tracing: lambda.Tracing.ACTIVE,
      logGroup,
      environmentEncryption: key,
      description: 'aurora-proxy-kit database role bootstrap',
      environment: {
        [BOOTSTRAP_ENV.host]: cluster.cluster.clusterEndpoint.hostname,
        [BOOTSTRAP_ENV.port]: String(POSTGRES_PORT),
        [BOOTSTRAP_ENV.masterSecretArn]: cluster.masterSecret.secretArn,
        ...RDS_CA_BUNDLE_ENV,
      },
    });
    cluster.masterSecret.grantRead(this.function);
    this.connections = this.function.connections;
    cluster.connections.allowDefaultPortFrom(this, 'Database role bootstrap to the writer');

    const provider = new cr.Provider(this, 'Provider', { onEventHandler: this.function, logGroup });
    this.resource = new CustomResource(this, 'Resource', {
      serviceToken: provider.serviceToken,
      resourceType: 'Custom::DatabaseRoles',
      properties: { Request: request },
    });
    // The writer must be up; CDK's cluster construct holds its instances.
    this.resource.node.addDependency(cluster.cluster);
    this.acknowledgeFindings(provider);
  }

  private acknowledgeFindings(provider: cr.Provider): void {
    const framework = provider.node.findChild('framework-onEvent');
    const basicExecution = {
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      reason: 'AWS-maintained policy for writing the function\'s own CloudWatch logs; it grants nothing on data',
    };
    Validations.of(this.function).acknowledge(
      basicExecution,
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]',
        reason: 'AWS-maintained policy a VPC function needs to manage its network interfaces; EC2 offers no resource-level scoping for these actions',
      },
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'Active tracing needs xray:PutTraceSegments and xray:PutTelemetryRecords, which X-Ray supports only on Resource *; the secret read is scoped to the master secret',
      },
    );
    // aws-cdk-lib's provider framework may invoke the bootstrap function and its versions (`<arn>:*`).
    const functionLogicalId = Stack.of(this).getLogicalId(this.function.node.defaultChild as lambda.CfnFunction);
    Validations.of(framework).acknowledge(
      basicExecution,
      { id: `AwsSolutions-IAM5[Resource::<${functionLogicalId}.Arn>:*]`, reason: 'The provider framework invokes the bootstrap function and its versions only' },
    );
    const skips = [
      { id: 'CKV_AWS_116', comment: 'Deploy-time function invoked synchronously by the custom resource provider; no DLQ applies' },
      { id: 'CKV_AWS_115', comment: 'Runs once per deployment; reserving concurrency would only take it from the account' },
    ];
    skipCheckov(this.function, skips);
    skipCheckov(framework, [
      ...skips,
      { id: 'CKV_AWS_117', comment: 'aws-cdk-lib\'s provider framework answers CloudFormation over the internet; only the bootstrap function runs in the VPC' },
      { id: 'CKV_AWS_173', comment: 'aws-cdk-lib\'s provider framework environment holds only the bootstrap function\'s name' },
    ]);
  }
}
