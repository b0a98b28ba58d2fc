import * as path from 'path';
import { App, Fn, Lazy, LocalBackend, TerraformOutput, TerraformStack } from 'cdktn';
import type { Construct } from 'constructs';
import { AuroraOptimizedReads, Dashboard, DatabaseRoleBootstrap, LambdaConsumer, LogsKmsPolicy, RdsProxy, type KitModuleOptions } from '../src';
import { isolatedVpcs } from './isolated-vpcs';
import { AwsData, AwsProvider, AwsResource } from './raw-aws';

/**
 * modules/examples/complete as a CDK Terrain app: a data VPC with the Optimized Reads cluster and its
 * RDS Proxy, a consumer VPC with READ_ONLY and READ_WRITE proxy endpoints and a Lambda consumer behind
 * each, the role bootstrap, and the dashboard; neither VPC has internet access or NAT. The kit's
 * modules are the package's typed constructs; the rest is raw hashicorp/aws resources (raw-aws.ts).
 *
 *   npx ts-node --transpile-only packages/cdktn/examples/complete.ts [outdir]   # default packages/cdktn/cdktf.out
 *   make cdktn-plan-summary                                                   # synthesized and planned offline
 */
export interface CompleteStackProps {
  /** Name prefix of everything the stack creates. @default 'aurora-proxy-kit' */
  readonly name?: string;
  /** @default 'us-east-1' */
  readonly region?: string;
  /** @default 'db.r6gd.xlarge' */
  readonly instanceClass?: string;
  /** @default 2 */
  readonly readers?: number;
  /** @default '17.9' */
  readonly engineVersion?: string;
  /** @default 100 */
  readonly maxConnectionsPercent?: number;
  /** READ_ONLY endpoints in the consumer VPC (the first serves the reader function). @default 1 */
  readonly readOnlyEndpoints?: number;
  /** @default true */
  readonly deletionProtection?: boolean;
  /** Directory of read-handler.zip, write-handler.zip and role-bootstrap.zip (make lambda-zip). @default <repository>/dist/lambda */
  readonly lambdaDir?: string;
  /**
   * The kit's modules/ directory, to use the modules of a checkout instead of the release tag: each module's
   * source becomes its path relative to the stack's output directory, read in place.
   */
  readonly modulesDir?: string;
}

const REPOSITORY = path.join(__dirname, '..', '..', '..');

export class CompleteStack extends TerraformStack {
  public readonly database: AuroraOptimizedReads;
  public readonly proxy: RdsProxy;
  public readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: CompleteStackProps = {}) {
    super(scope, id);
    const name = props.name ?? 'aurora-proxy-kit';
    const readers = props.readers ?? 2;
    const lambdaDir = props.lambdaDir ?? path.join(REPOSITORY, 'dist', 'lambda');
    const stackDir = path.join(App.of(this).outdir, 'stacks', id);
    const module = (dir: string): KitModuleOptions =>
      props.modulesDir ? { source: path.relative(stackDir, path.join(props.modulesDir, dir)), skipAssetCreationFromLocalModules: true } : {};

    // State beside cdk.tf.json, not in the directory the app runs from.
    new LocalBackend(this, { path: 'terraform.tfstate' });
    new AwsProvider(this, 'aws', { region: props.region ?? 'us-east-1' });
    const azs = new AwsData(this, 'available', 'aws_availability_zones', { state: 'available' });
    const region = new AwsData(this, 'current', 'aws_region');

    const functionNames = { reader: `${name}-reader`, writer: `${name}-writer`, roles: `${name}-database-roles` };
    // Each consumer logs in as a role of its own, never as the master user (made by the role bootstrap).
    const dbUsers = { reader: 'app_reader', writer: 'app_writer' };
    const flowLogsPrefix = `/aurora-proxy-kit/${name}/`;

    // --- One key for the deployment's logs (flow logs, Lambda logs, Lambda environments) ---------------
    const logKeyPolicy = new LogsKmsPolicy(this, 'log_key_policy', {
      ...module('internal/logs-kms-policy'),
      // In key order, as the HCL example's values(local.function_names) lists them: the key policy is the same document.
      logGroupNames: [...Object.entries(functionNames).sort(([a], [b]) => a.localeCompare(b)).map(([, f]) => `/aws/lambda/${f}`), `${flowLogsPrefix}*`],
    });
    const logsKey = new AwsResource(this, 'logs', 'aws_kms_key', {
      description: 'Encrypts the logs and function environments of the aurora-proxy-kit reference deployment',
      enable_key_rotation: true,
      deletion_window_in_days: 30,
      policy: logKeyPolicy.json,
    });

    // --- Two isolated VPCs with flow logs --------------------------------------------------------------
    const flowLogsAssume = new AwsData(this, 'flow_logs_assume', 'aws_iam_policy_document', {
      statement: [{ actions: ['sts:AssumeRole'], principals: [{ type: 'Service', identifiers: ['vpc-flow-logs.amazonaws.com'] }] }],
    });
    const vpcs = isolatedVpcs(this, name, azs);
    for (const [vpc, network] of Object.entries(vpcs)) {
      const logGroup = new AwsResource(this, `flow_logs_${vpc}`, 'aws_cloudwatch_log_group', {
        name_prefix: `${flowLogsPrefix}${vpc}-vpc-flow-logs-`,
        retention_in_days: 30,
        kms_key_id: logsKey.getStringAttribute('arn'),
        // Kept after terraform destroy, as the CDK app retains its log groups.
        skip_destroy: true,
      });
      const role = new AwsResource(this, `flow_logs_role_${vpc}`, 'aws_iam_role', { name_prefix: `${name}-${vpc}-flow-`, assume_role_policy: flowLogsAssume.getStringAttribute('json') });
      const writeLogs = new AwsData(this, `flow_logs_policy_${vpc}`, 'aws_iam_policy_document', {
        statement: [{ actions: ['logs:CreateLogStream', 'logs:DescribeLogStreams', 'logs:PutLogEvents'], resources: [`${logGroup.getStringAttribute('arn')}:*`] }],
      });
      new AwsResource(this, `flow_logs_role_policy_${vpc}`, 'aws_iam_role_policy', { name: 'write-flow-logs', role: role.getStringAttribute('id'), policy: writeLogs.getStringAttribute('json') });
      new AwsResource(this, `flow_log_${vpc}`, 'aws_flow_log', {
        vpc_id: network.id,
        traffic_type: 'ALL',
        log_destination: logGroup.getStringAttribute('arn'),
        iam_role_arn: role.getStringAttribute('arn'),
      });
    }

    // --- The kit's modules -----------------------------------------------------------------------------
    this.database = new AuroraOptimizedReads(this, 'database', {
      ...module('aurora-optimized-reads'),
      clusterIdentifier: name,
      vpcId: vpcs.data.id,
      subnetIds: vpcs.data.subnetIds,
      instanceClass: props.instanceClass ?? 'db.r6gd.xlarge',
      readers,
      engineVersion: props.engineVersion ?? '17.9',
      deletionProtection: props.deletionProtection ?? true,
      skipFinalSnapshot: !(props.deletionProtection ?? true),
    });

    const endpoint = (targetRole: string) => ({ vpc_id: vpcs.consumer.id, subnet_ids: vpcs.consumer.subnetIds, target_role: targetRole });
    const endpoints = {
      [`${name}-ro`]: endpoint('READ_ONLY'),
      [`${name}-rw`]: endpoint('READ_WRITE'),
      ...Object.fromEntries(Array.from({ length: (props.readOnlyEndpoints ?? 1) - 1 }, (_, i) => [`${name}-ro${i + 2}`, endpoint('READ_ONLY')])),
    };
    this.proxy = new RdsProxy(this, 'proxy', {
      ...module('rds-proxy'),
      name,
      clusterIdentifier: this.database.clusterIdentifier,
      // The number itself (HCL passes length(reader_instance_identifiers), the same value), so the
      // READ_ONLY-endpoint rule can run at synth.
      readers,
      clusterSecurityGroupId: this.database.securityGroupId,
      clusterResourceId: this.database.clusterResourceId,
      databaseUsers: Object.values(dbUsers),
      vpcId: vpcs.data.id,
      subnetIds: vpcs.data.subnetIds,
      maxConnections: this.database.maxConnections,
      maxConnectionsPercent: props.maxConnectionsPercent ?? 100,
      endpoints,
    });

    // The role bootstrap reads the master secret through a Secrets Manager endpoint in the data VPC that
    // answers HTTPS from the bootstrap function only.
    const secretsManagerGroup = new AwsResource(this, 'secrets_manager', 'aws_security_group', {
      name_prefix: `${name}-secretsmanager-`,
      description: 'Secrets Manager interface endpoint of the data VPC: HTTPS from the role bootstrap only',
      vpc_id: vpcs.data.id,
    });
    const databaseRoles = new DatabaseRoleBootstrap(this, 'database_roles', {
      ...module('database-role-bootstrap'),
      functionName: functionNames.roles,
      filename: path.join(lambdaDir, 'role-bootstrap.zip'),
      roles: [
        { name: dbUsers.reader, access: 'READ_ONLY' },
        { name: dbUsers.writer, access: 'READ_WRITE' },
      ],
      clusterIdentifier: this.database.clusterIdentifier,
      clusterEndpoint: this.database.writerEndpoint,
      clusterSecurityGroupId: this.database.securityGroupId,
      databaseName: this.database.databaseName,
      masterUserSecretArn: this.database.masterUserSecretArn,
      secretKmsKeyArn: this.database.kmsKeyArn,
      vpcId: vpcs.data.id,
      subnetIds: vpcs.data.subnetIds,
      vpcEndpoints: { secretsmanager: secretsManagerGroup.getStringAttribute('id') },
      // The invocation reads the secrets through the endpoint made below (its policy names this module's role).
      invocationDependsOn: Lazy.listValue({ produce: (): string[] => [secretsEndpoint.getStringAttribute('id')] }),
      kmsKeyArn: logsKey.getStringAttribute('arn'),
    });
    new AwsResource(this, 'secrets_manager_from_role_bootstrap', 'aws_vpc_security_group_ingress_rule', {
      security_group_id: secretsManagerGroup.getStringAttribute('id'),
      referenced_security_group_id: databaseRoles.securityGroupId,
      ip_protocol: 'tcp',
      from_port: 443,
      to_port: 443,
      description: 'Role bootstrap reads the master secret',
    });
    const endpointPolicy = new AwsData(this, 'secrets_manager_endpoint', 'aws_iam_policy_document', {
      statement: [
        {
          sid: 'RoleBootstrapReadsTheMasterSecret',
          actions: ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'],
          resources: [this.database.masterUserSecretArn],
          principals: [{ type: 'AWS', identifiers: [databaseRoles.roleArn] }],
        },
      ],
    });
    const secretsEndpoint: AwsResource = new AwsResource(this, 'secrets_manager_endpoint_interface', 'aws_vpc_endpoint', {
      vpc_id: vpcs.data.id,
      service_name: `com.amazonaws.${region.getStringAttribute('region')}.secretsmanager`,
      vpc_endpoint_type: 'Interface',
      private_dns_enabled: true,
      subnet_ids: vpcs.data.subnetIds,
      security_group_ids: [secretsManagerGroup.getStringAttribute('id')],
      policy: endpointPolicy.getStringAttribute('json'),
    });

    const consumer = (id: 'reader' | 'writer', endpointName: string, zip: string) =>
      new LambdaConsumer(this, id, {
        ...module('lambda-consumer'),
        functionName: functionNames[id],
        filename: path.join(lambdaDir, zip),
        vpcId: vpcs.consumer.id,
        subnetIds: vpcs.consumer.subnetIds,
        endpoint: Fn.lookup(this.proxy.endpoints, endpointName),
        connectArnPrefix: this.proxy.connectArnPrefix,
        dbUser: dbUsers[id],
        databaseName: this.database.databaseName,
        createKmsKey: false,
        kmsKeyArn: logsKey.getStringAttribute('arn'),
        // Its first login needs its role.
        dependsOn: [databaseRoles],
      });
    const reader = consumer('reader', `${name}-ro`, 'read-handler.zip');
    const writer = consumer('writer', `${name}-rw`, 'write-handler.zip');

    this.dashboard = new Dashboard(this, 'dashboard', {
      ...module('dashboard'),
      dashboardName: name,
      instanceIdentifiers: this.database.instanceIdentifiers,
      proxyName: this.proxy.proxyName,
      proxyEndpoints: Object.fromEntries(Object.entries(endpoints).map(([endpointName, e]) => [endpointName, e.target_role])),
      functions: { Reader: reader.functionName, Writer: writer.functionName },
    });

    new TerraformOutput(this, 'tiered_cache_gib', { value: this.database.tieredCacheGib, description: 'Optimized Reads tiered cache per instance (GiB).' });
    new TerraformOutput(this, 'max_connections', { value: this.database.maxConnections, description: "Aurora's default max_connections per instance (AWS's published value for the class or one of its memory)." });
    new TerraformOutput(this, 'proxy_max_server_connections', { value: this.proxy.maxServerConnections, description: 'Server connections the proxy may open per instance, leaving the reserved connections.' });
    new TerraformOutput(this, 'reserved_connections', { value: this.proxy.reservedConnections, description: "Connections of each instance the proxy leaves to rdsadmin, AWS's automation, the master user and the role bootstrap." });
    new TerraformOutput(this, 'dashboard_name', { value: this.dashboard.dashboardName, description: 'CloudWatch dashboard.' });
  }
}

/** Synthesizes the example into `outdir` (cdk.tf.json under stacks/<id>/); returns the stack's directory. */
export function synthComplete(outdir: string, props: CompleteStackProps = {}, id = 'complete'): string {
  const app = new App({ outdir });
  new CompleteStack(app, id, props);
  app.synth();
  return path.join(outdir, 'stacks', id);
}

if (require.main === module) {
  const outdir = path.resolve(process.argv[2] ?? path.join(__dirname, '..', 'cdktf.out'));
  process.stdout.write(`${synthComplete(outdir, { modulesDir: path.join(REPOSITORY, 'modules') })}/cdk.tf.json\n`);
}
