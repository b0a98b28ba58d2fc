import { Duration, Stack, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { consumerEnvironment, type ConsumerAuth, type TlsConfig } from '../lambda/src/environment';
import { skipCheckov } from './private/checkov';
import { handlerFunction } from './private/handler-function';
import { allowLogsToUseKey, stackLogGroupPattern } from './private/key-policies';
import { ConnectionMode, FUNCTION_RULES, SECRET_CONSUMER_APIS, runRules, securityGroupDescription } from './model';
import { ConsumerConnection, IProxyEndpoint } from './pooling-tier';
import { throwIfInvalid } from './private/validation';
import { ApiRoutes, routeApiCalls, type VpcApiEndpoints } from './vpc-api-routes';

/** Properties of a LambdaConsumer. */
export interface LambdaConsumerProps {
  /**
   * The endpoint the function connects through, of either engine (an RdsProxyEndpoint or a
   * PgBouncerProxyEndpoint); the function goes in that endpoint's VPC.
   */
  readonly endpoint: IProxyEndpoint;
  /** The database user the function logs in as (with an IAM token, or its password secret on the PgBouncer engine). */
  readonly dbUser: string;
  /**
   * How a function that logs in with its password secret (PgBouncer engine) reaches Secrets Manager from its
   * VPC: CREATE makes the VPC's Secrets Manager interface endpoint (shared with the kit's other constructs in
   * the VPC), passing only the function's read of its own secret; BRING_YOUR_OWN uses `vpcEndpoints` or egress
   * of `vpcSubnets`, and synth fails when there is neither. A function with IAM authentication (RDS Proxy)
   * calls no AWS API from the VPC and ignores it.
   * @default ApiRoutes.CREATE
   */
  readonly apiRoutes?: ApiRoutes;
  /**
   * Your Secrets Manager interface endpoint (with `apiRoutes: ApiRoutes.BRING_YOUR_OWN`): the function's HTTPS egress goes to it only.
   * @default - none: an endpoint of the VPC made elsewhere in the app, or egress of `vpcSubnets` (HTTPS to any address)
   */
  readonly vpcEndpoints?: VpcApiEndpoints;
  /** The database to connect to. */
  readonly databaseName: string;
  /**
   * Source file of a handler of your own, bundled by NodejsFunction at synth time (esbuild in your
   * project, else Docker).
   * @default - the kit's read handler for a READ_ONLY endpoint, its write handler for READ_WRITE
   *   (pre-bundled in the npm package; bundled from lambda/src in the kit's repository)
   */
  readonly entry?: string;
  /**
   * Subnets of the function, in the endpoint's VPC.
   * @default - the VPC default strategy (private subnets, else isolated)
   */
  readonly vpcSubnets?: ec2.SubnetSelection;
  /**
   * `reuse` keeps one connection across invocations; `per-invocation` opens one per call (the seeds'
   * comparison).
   * @default ConnectionMode.REUSE
   */
  readonly connectionMode?: ConnectionMode;
  /**
   * Memory in MB (bounds: the kit's `memory-size` rule).
   * @default 512
   */
  readonly memorySize?: number;
  /**
   * Function timeout (1 s..15 min).
   * @default Duration.seconds(30)
   */
  readonly timeout?: Duration;
  /**
   * Reserved concurrency (1..1000): caps the connections the function can open through the proxy.
   * @default - unreserved
   */
  readonly reservedConcurrentExecutions?: number;
  /**
   * Retention of the function's log group.
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Key that encrypts the function's environment and log group. Its policy must let CloudWatch Logs use it.
   * @default - a new key with rotation on
   */
  readonly encryptionKey?: kms.IKey;
}

/**
 * A Lambda function that consumes the database only through one proxy endpoint: placed in the
 * endpoint's VPC with a security group of its own, given `rds-db:connect` for its user and ingress to
 * the endpoint, configured through environment variables the handler validates at cold start,
 * on arm64 with the newest Node.js runtime, tracing active. The kit's handlers come pre-bundled in
 * the npm package (no esbuild or Docker needed); in the kit's repository esbuild bundles them at synth.
 */
export class LambdaConsumer extends Construct implements iam.IGrantable, ec2.IConnectable {
  public readonly function: lambda.Function;
  public readonly grantPrincipal: iam.IPrincipal;
  public readonly connections: ec2.Connections;
  public readonly logGroup: logs.LogGroup;
  public readonly endpoint: IProxyEndpoint;

  constructor(scope: Construct, id: string, props: LambdaConsumerProps) {
    super(scope, id);
    const memorySize = props.memorySize ?? 512;
    const timeout = props.timeout ?? Duration.seconds(30);
    throwIfInvalid(
      this,
      runRules(FUNCTION_RULES, {
        memorySizeMb: memorySize,
        timeoutSeconds: timeout.toSeconds(),
        reservedConcurrentExecutions: props.reservedConcurrentExecutions,
        connectionMode: props.connectionMode,
        dbUser: props.dbUser,
      }),
    );
    this.endpoint = props.endpoint;
    const connection = props.endpoint.consumerConnection(props.dbUser);

    const key =
      props.encryptionKey ??
      new kms.Key(this, 'Key', {
        description: `Encrypts the environment and logs of ${this.node.path}`,
        enableKeyRotation: true,
      });
    if (!props.encryptionKey) allowLogsToUseKey(key as kms.Key, [stackLogGroupPattern(Stack.of(this))]);

    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      encryptionKey: key,
    });
    const securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc: props.endpoint.vpc,
      description: securityGroupDescription((p) => `Lambda consumer ${p}: egress only to its proxy endpoint${connection.passwordSecret ? ' and Secrets Manager' : ''}`, this.node.path),
      allowAllOutbound: false,
    });

    this.function = handlerFunction(this, 'Function', {
      kitHandler: props.endpoint.role === 'READ_ONLY' ? 'read-handler' : 'write-handler',
      entry: props.entry,
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize,
      timeout,
      vpc: props.endpoint.vpc,
      vpcSubnets: props.vpcSubnets,
      securityGroups: [securityGroup],
      tracing: lambda.Tracing.ACTIVE,
      logGroup: this.logGroup,
      environmentEncryption: key,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      description: `aurora-proxy-kit ${props.endpoint.role} consumer`,
      environment: consumerEnvironment({
        host: props.endpoint.hostname,
        port: props.endpoint.port,
        database: props.databaseName,
        user: props.dbUser,
        endpointRole: props.endpoint.role,
        auth: consumerAuth(connection),
        tls: consumerTls(connection),
        connectionMode: props.connectionMode,
      }),
    });
    this.grantPrincipal = this.function.grantPrincipal;
    this.connections = this.function.connections;

    // One call gives both the credential (IAM permission or the password secret) and the network path.
    props.endpoint.grantConnect(this, props.dbUser);
    securityGroup.addEgressRule(props.endpoint.securityGroup, ec2.Port.tcp(props.endpoint.port), 'to its proxy endpoint');
    if (connection.passwordSecret) {
      const secret = connection.passwordSecret;
      const mode = props.apiRoutes ?? ApiRoutes.CREATE;
      // The endpoint passes this function's read of its own secret, nothing else.
      routeApiCalls(
        this,
        {
          apiRoutes: props.apiRoutes,
          vpcEndpoints: props.vpcEndpoints,
          vpc: props.endpoint.vpc,
          vpcSubnets: props.vpcSubnets ?? {},
          connections: this.connections,
          apis: SECRET_CONSUMER_APIS,
          rules: FUNCTION_RULES.filter((r) => r.id === 'consumer-api-route'),
        },
        () => ({
          caller: this,
          role: this.function.role!,
          statements: [{ actions: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'], resources: [secret.secretArn] }],
          purpose: 'a consumer function reads its password secret',
        }),
      );
      // Without an endpoint named to it, the secret's read goes out through the subnets' egress (or an endpoint
      // the security group is not told about), to an address not known at synth.
      if (mode === ApiRoutes.BRING_YOUR_OWN && props.vpcEndpoints?.secretsManager === undefined) {
        securityGroup.addEgressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(443), 'reads its password secret from Secrets Manager');
      }
    }
    this.acknowledgeFindings();
  }

  private acknowledgeFindings(): void {
    const findings: Array<[string, string]> = [
      [
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        'AWS-maintained policy for writing the function\'s own CloudWatch logs; it grants nothing on data',
      ],
      [
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]',
        'AWS-maintained policy a VPC function needs to manage its network interfaces; EC2 offers no resource-level scoping for these actions',
      ],
      [
        'AwsSolutions-IAM5[Resource::*]',
        'Active tracing needs xray:PutTraceSegments and xray:PutTelemetryRecords, which X-Ray supports only on Resource *; rds-db:connect (or the password secret) is scoped to the proxy and user',
      ],
    ];
    for (const [id, reason] of findings) Validations.of(this.function).acknowledge({ id, reason });
    skipCheckov(this.function, [
      {
        id: 'CKV_AWS_116',
        comment: 'Consumers are invoked synchronously (request/response); a dead-letter queue only applies to asynchronous invocations',
      },
      ...(this.function.node.defaultChild as lambda.CfnFunction).reservedConcurrentExecutions === undefined
        ? [{
            id: 'CKV_AWS_115',
            comment: 'Reserved concurrency is opt-in (reservedConcurrentExecutions): reserving it by default can fail in accounts with a low concurrency quota; the proxy already caps server connections',
          }]
        : [],
    ]);
  }

  /** Any AWS/Lambda metric of this function. */
  public metric(metricName: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.function.metric(metricName, { period: Duration.minutes(1), ...props });
  }

  /** Invocations (Sum). */
  public metricInvocations(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('Invocations', { statistic: 'Sum', ...props });
  }

  /** Errors (Sum). */
  public metricErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('Errors', { statistic: 'Sum', ...props });
  }

  /** Throttles (Sum). */
  public metricThrottles(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('Throttles', { statistic: 'Sum', ...props });
  }

  /** Duration (p99 by default). */
  public metricDuration(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('Duration', { statistic: 'p99', ...props });
  }
}

/** How the consumer logs in: its password secret when the endpoint gives one, else an IAM token. */
function consumerAuth(connection: ConsumerConnection): ConsumerAuth {
  return connection.passwordSecret ? { kind: 'secret', secretArn: connection.passwordSecret.secretArn } : { kind: 'iam' };
}

/** The TLS check: only the endpoint's own CA, or the public roots against the name the endpoint gives. */
function consumerTls(connection: ConsumerConnection): TlsConfig {
  if (connection.tlsCaCertificate !== undefined) return { mode: 'verify-full', ca: connection.tlsCaCertificate };
  if (connection.tlsServerName !== undefined) return { mode: 'verify-proxy-domain', serverName: connection.tlsServerName };
  return { mode: 'verify-full' };
}
