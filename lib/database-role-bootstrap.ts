import { CustomResource, Duration, Stack, Token, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { BOOTSTRAP_ENV, requestProblems, type DatabaseRoleSpec, type RoleBootstrapRequest } from '../lambda/src/role-bootstrap-request';
import { MASTER_SECRET_READ_ACTIONS, POSTGRES_PORT, RDS_CA_BUNDLE_ENV, ROLE_BOOTSTRAP_APIS, ROLE_BOOTSTRAP_RULES, securityGroupDescription } from './model';
import { AuroraOptimizedReads } from './aurora-optimized-reads';
import { IAuroraOptimizedReads } from './aurora-optimized-reads-attributes';
import type { IPoolingTier } from './pooling-tier';
import { skipCheckov } from './private/checkov';
import { BASIC_EXECUTION_ACKNOWLEDGEMENT, DEPLOY_TIME_FUNCTION_SKIPS, deployTimeResource } from './private/deploy-time-resource';
import { handlerFunction } from './private/handler-function';
import { allowLogsToUseKey, stackLogGroupPattern } from './private/key-policies';
import { kitSubnets } from './private/subnets';
import { throwIfInvalid } from './private/validation';
import { ApiRoutes, routeApiCalls, type VpcApiEndpoints } from './vpc-api-routes';

export type { DatabaseRoleSpec } from '../lambda/src/role-bootstrap-request';

/** Stands in for a deploy-time secret ARN when the request's form is checked at synth. */
const DEPLOY_TIME_SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:deploy-time';

/** Properties of a DatabaseRoleBootstrap. */
export interface DatabaseRoleBootstrapProps {
  /** The cluster whose writer gets the roles: of this app, or imported (AuroraOptimizedReads.fromAuroraOptimizedReadsAttributes). */
  readonly cluster: IAuroraOptimizedReads;
  /** One role per consumer: READ_ONLY roles read, READ_WRITE roles also write and create tables. */
  readonly roles: DatabaseRoleSpec[];
  /**
   * The pooling tier the roles log in through, of either engine. Each role without a `passwordSecretArn`
   * logs in as the tier's consumers do (the PgBouncer engine: with the password secret the tier makes for
   * it; RDS Proxy: with IAM tokens), the tier's own roles (`serverRoles`) are made too, and what logs in as
   * them waits for this bootstrap (`waitForDatabaseRoles`). List roles that do not log in through the tier
   * in another bootstrap, or give them their `passwordSecretArn`.
   * @default - the roles as given
   */
  readonly poolingTier?: IPoolingTier;
  /**
   * Subnets of the bootstrap function, in the cluster's VPC.
   * @default - the VPC's isolated subnets
   */
  readonly vpcSubnets?: ec2.SubnetSelection;
  /**
   * How the function reaches Secrets Manager from the VPC: CREATE makes the VPC's Secrets Manager interface
   * endpoint (shared with the kit's other constructs in the VPC), passing only the function's reads of the
   * master secret and the roles' password secrets; BRING_YOUR_OWN uses `vpcEndpoints` or egress of `vpcSubnets`,
   * and synth fails when there is neither.
   * @default ApiRoutes.CREATE
   */
  readonly apiRoutes?: ApiRoutes;
  /**
   * Your Secrets Manager interface endpoint (with `apiRoutes: ApiRoutes.BRING_YOUR_OWN`): the function gets HTTPS to it.
   * @default - none: an endpoint of the VPC made elsewhere in the app, or egress of `vpcSubnets`
   */
  readonly vpcEndpoints?: VpcApiEndpoints;
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
  /** The function's network access: egress to the cluster, and to the Secrets Manager endpoint (the kit's, or yours). */
  public readonly connections: ec2.Connections;
  public readonly resource: CustomResource;
  public readonly roles: DatabaseRoleSpec[];
  /** The password secrets of the roles that have one (the function reads them). */
  public readonly passwordSecretArns: string[];

  constructor(scope: Construct, id: string, props: DatabaseRoleBootstrapProps) {
    super(scope, id);
    // A secret made in the same stack has an ARN known only at deploy: its form is CloudFormation's to check.
    const checkable = (roles: DatabaseRoleSpec[]) => ({
      database: props.cluster.databaseName,
      roles: roles.map((r) => (r.passwordSecretArn !== undefined && Token.isUnresolved(r.passwordSecretArn) ? { ...r, passwordSecretArn: DEPLOY_TIME_SECRET_ARN } : r)),
    });
    // The roles as given first, so a bad name is refused here before the tier makes a secret for it.
    throwIfInvalid(this, requestProblems(checkable(props.roles), props.cluster.masterUsername));
    const roles = tierRoles(props.roles, props.poolingTier);
    const request: RoleBootstrapRequest = { database: props.cluster.databaseName, roles };
    if (roles !== props.roles) throwIfInvalid(this, requestProblems(checkable(roles), props.cluster.masterUsername));
    this.roles = [...roles];
    const cluster = props.cluster;

    const key =
      props.encryptionKey ??
      new kms.Key(this, 'Key', { description: `Encrypts the environment and logs of ${this.node.path}`, enableKeyRotation: true });
    if (!props.encryptionKey) allowLogsToUseKey(key as kms.Key, [stackLogGroupPattern(Stack.of(this))]);
    const logGroup = new logs.LogGroup(this, 'Logs', { retention: logs.RetentionDays.ONE_MONTH, encryptionKey: key });

    const vpcSubnets = props.vpcSubnets ?? { subnetType: ec2.SubnetType.PRIVATE_ISOLATED };
    const securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc: cluster.vpc,
      description: securityGroupDescription((p) => `Database role bootstrap ${p}: egress only to the cluster and Secrets Manager`, this.node.path),
      allowAllOutbound: false,
    });
    this.function = handlerFunction(this, 'Function', {
      kitHandler: 'role-bootstrap',
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 256,
      timeout: Duration.minutes(2),
      vpc: cluster.vpc,
      vpcSubnets: kitSubnets(this, cluster.vpc, props.vpcSubnets),
      securityGroups: [securityGroup],
      tracing: lambda.Tracing.ACTIVE,
      logGroup,
      environmentEncryption: key,
      description: 'aurora-proxy-kit database role bootstrap',
      environment: {
        [BOOTSTRAP_ENV.host]: cluster.clusterEndpointHostname,
        [BOOTSTRAP_ENV.port]: String(POSTGRES_PORT),
        [BOOTSTRAP_ENV.masterSecretArn]: cluster.masterSecret.secretArn,
        ...RDS_CA_BUNDLE_ENV,
      },
    });
    cluster.grantMasterSecretRead(this.function);
    // A role with a password secret gets the verifier derived from it: the function reads those secrets too.
    this.passwordSecretArns = roles.flatMap((r) => (r.passwordSecretArn === undefined ? [] : [r.passwordSecretArn]));
    if (this.passwordSecretArns.length > 0) {
      this.function.addToRolePolicy(new iam.PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: this.passwordSecretArns }));
    }
    this.connections = this.function.connections;
    cluster.connections.allowDefaultPortFrom(this, 'Database role bootstrap to the writer');

    // The master secret and the password secrets, read from inside the VPC: the endpoint passes those reads only.
    const routes = routeApiCalls(
      this,
      { apiRoutes: props.apiRoutes, vpcEndpoints: props.vpcEndpoints, vpc: cluster.vpc, vpcSubnets, connections: this.connections, apis: ROLE_BOOTSTRAP_APIS, rules: ROLE_BOOTSTRAP_RULES.filter((r) => r.id === 'role-bootstrap-api-route') },
      () => ({
        caller: this,
        role: this.function.role!,
        statements: [
          { actions: [...MASTER_SECRET_READ_ACTIONS], resources: [cluster.masterSecret.secretArn] },
          ...(this.passwordSecretArns.length > 0 ? [{ actions: ['secretsmanager:GetSecretValue'], resources: this.passwordSecretArns }] : []),
        ],
        purpose: 'Role bootstrap reads the master secret and the password secrets of the roles',
      }),
    );

    this.resource = deployTimeResource(this, { onEventHandler: this.function, logGroup, resourceType: 'Custom::DatabaseRoles', properties: { Request: request }, what: 'the bootstrap function' });
    // The writer must be up; CDK's cluster construct holds its instances. An imported cluster is up already.
    if (cluster instanceof AuroraOptimizedReads) this.resource.node.addDependency(cluster.cluster);
    // It runs once the endpoint it reads the secrets through answers.
    for (const route of routes.values()) this.resource.node.addDependency(route.endpoint);
    props.poolingTier?.waitForDatabaseRoles(this.resource);
    this.acknowledgeFindings();
  }

  private acknowledgeFindings(): void {
    Validations.of(this.function).acknowledge(
      BASIC_EXECUTION_ACKNOWLEDGEMENT,
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]',
        reason: 'AWS-maintained policy a VPC function needs to manage its network interfaces; EC2 offers no resource-level scoping for these actions',
      },
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'Active tracing needs xray:PutTraceSegments and xray:PutTelemetryRecords, which X-Ray supports only on Resource *; the secret reads are scoped to the master secret and the roles\' password secrets',
      },
    );
    skipCheckov(this.function, DEPLOY_TIME_FUNCTION_SKIPS);
  }
}

/** The roles with the tier's logins: a password secret where its consumers log in with one, and the tier's own roles not listed. */
function tierRoles(roles: DatabaseRoleSpec[], tier: IPoolingTier | undefined): DatabaseRoleSpec[] {
  if (tier === undefined) return roles;
  const listed = new Set(roles.map((r) => r.name));
  return [
    ...roles.map((r) => {
      const secret = r.passwordSecretArn === undefined ? tier.consumerPasswordSecret(r.name) : undefined;
      return secret === undefined ? r : { ...r, passwordSecretArn: secret.secretArn };
    }),
    ...tier.serverRoles.filter((r) => !listed.has(r.name)),
  ];
}
