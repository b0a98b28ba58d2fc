import * as path from 'path';
import { App, Fn, Lazy, LocalBackend, TerraformOutput, TerraformStack, TerraformVariable, Token } from 'cdktn';
import type { Construct } from 'constructs';
import { AuroraOptimizedReads, Dashboard, DatabaseRoleBootstrap, LambdaConsumer, LogsKmsPolicy, PgBouncerProxy, type KitModuleOptions } from '../src';
import { isolatedVpcs } from './isolated-vpcs';
import { AwsData, AwsProvider, AwsResource } from './raw-aws';

/**
 * modules/examples/complete-pgbouncer as a CDK Terrain app: the reference deployment with the PgBouncer
 * engine. A data VPC holds the Optimized Reads cluster and a PgBouncer fleet behind an internal Network
 * Load Balancer; a consumer VPC reaches the fleet through PrivateLink (a read-only and a read/write
 * interface endpoint), with a Lambda consumer behind each that logs in with its own secret. Neither VPC
 * has internet access or NAT: the hosts install PgBouncer from an S3 object through the S3 gateway
 * endpoint and reach Secrets Manager and Session Manager through interface endpoints. As in the CDK
 * reference app, the endpoints' policies pass only what their callers need: the S3 gateway the hosts'
 * read of the packages object, Secrets Manager each caller's read of its own secrets, CloudWatch the
 * hosts' metrics in the engine's namespace. The hosts start once the role bootstrap has made their roles.
 *
 *   npx ts-node --transpile-only packages/cdktn/examples/complete-pgbouncer.ts [outdir]   # default packages/cdktn/cdktf.out
 *   make cdktn-plan-summary                                                             # both examples, planned offline
 */
export interface CompletePgBouncerStackProps {
  /** Name prefix of everything the stack creates (cluster identifier, PgBouncer fleet, endpoints). @default 'apk-pgbouncer' */
  readonly name?: string;
  /** @default 'us-east-1' */
  readonly region?: string;
  /** Readers of the cluster; the read-only listener pools for each. @default 2 */
  readonly readers?: number;
  /** PgBouncer hosts of the fleet. @default 2 */
  readonly hosts?: number;
  /** Graviton instance type of the hosts. @default 'c7g.large' */
  readonly instanceType?: string;
  /**
   * The hosts' AMI (Debian 13 arm64 in the Region), pinned: looked up once, changed on purpose.
   * @default - the Terraform variable pooler_image_id, which has no default: plan asks for it, as the Terraform example's does
   */
  readonly imageId?: string;
  /** The bucket holding the PgBouncer packages object (make package uploads it). @default 'aurora-proxy-kit-packages' */
  readonly packagesBucket?: string;
  /** @default 'pgbouncer/packages.tar' */
  readonly packagesKey?: string;
  /** @default true */
  readonly deletionProtection?: boolean;
  /** Directory of pooler-certificate.zip, role-bootstrap.zip, read-handler.zip and write-handler.zip (make lambda-zip). @default <repository>/dist/lambda */
  readonly lambdaDir?: string;
  /**
   * The kit's modules/ directory, to use the modules of a checkout instead of the release tag: each module's
   * source becomes its path relative to the stack's output directory, read in place.
   */
  readonly modulesDir?: string;
}

const REPOSITORY = path.join(__dirname, '..', '..', '..');

/**
 * Session Manager's three services (shell access without SSH), through interface endpoints in the data VPC with
 * the default policy, as in the reference app; Secrets Manager and CloudWatch have endpoints of their own.
 */
const SESSION_MANAGER_SERVICES = ['ssm', 'ssmmessages', 'ec2messages'];

export class CompletePgBouncerStack extends TerraformStack {
  public readonly database: AuroraOptimizedReads;
  public readonly pooler: PgBouncerProxy;
  public readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: CompletePgBouncerStackProps = {}) {
    super(scope, id);
    const name = props.name ?? 'apk-pgbouncer';
    const lambdaDir = props.lambdaDir ?? path.join(REPOSITORY, 'dist', 'lambda');
    const deletionProtection = props.deletionProtection ?? true;
    const stackDir = path.join(App.of(this).outdir, 'stacks', id);
    const module = (dir: string): KitModuleOptions =>
      props.modulesDir ? { source: path.relative(stackDir, path.join(props.modulesDir, dir)), skipAssetCreationFromLocalModules: true } : {};

    new LocalBackend(this, { path: 'terraform.tfstate' });
    new AwsProvider(this, 'aws', { region: props.region ?? 'us-east-1' });
    const azs = new AwsData(this, 'available', 'aws_availability_zones', { state: 'available' });
    const region = new AwsData(this, 'current', 'aws_region').getStringAttribute('region');
    const partition = new AwsData(this, 'partition', 'aws_partition').getStringAttribute('partition');
    const packagesBucket = props.packagesBucket ?? 'aurora-proxy-kit-packages';
    const packagesKey = props.packagesKey ?? 'pgbouncer/packages.tar';
    // The S3 objects the hosts read through the data VPC's gateway endpoint: the packages object. AWS's SSM agent
    // package, when the hosts install it, goes into that same object; another object (or key prefix, "prefix/*")
    // the hosts read would be another entry.
    const hostObjects = [{ bucket: packagesBucket, key: packagesKey }];

    // Each consumer logs in as a role of its own with its secret's password (the secret is made by the fleet).
    const consumers = {
      reader: { functionName: `${name}-reader`, zip: 'read-handler.zip', endpoint: `${name}-ro`, dbUser: 'app_reader' },
      writer: { functionName: `${name}-writer`, zip: 'write-handler.zip', endpoint: `${name}-rw`, dbUser: 'app_writer' },
    };
    const rolesFunctionName = `${name}-database-roles`;

    // --- Two isolated VPCs ---------------------------------------------------------------------------------
    const vpcs = isolatedVpcs(this, name, azs);

    // --- The data VPC's endpoints: S3 for the packages, the services the hosts call ---------------------------
    // Each endpoint's policy passes only its callers' requests, as the reference app's do: an endpoint policy limits
    // what any principal may do through the endpoint, whatever its IAM policies allow
    // (https://docs.aws.amazon.com/vpc/latest/privatelink/vpc-endpoints-access.html). Those policies name the fleet's
    // and the role bootstrap's roles and secrets, so S3, Secrets Manager and CloudWatch follow the modules, below.
    // One security group for the interface endpoints: HTTPS from the hosts (and, below, the role bootstrap).
    const hostServices = new AwsResource(this, 'host_services', 'aws_security_group', {
      name_prefix: `${name}-host-services-`,
      description: 'Interface endpoints the PgBouncer hosts call over HTTPS',
      vpc_id: vpcs.data.id,
    });
    const interfaceEndpoint = (resourceId: string, service: string, policy?: string) =>
      new AwsResource(this, resourceId, 'aws_vpc_endpoint', {
        vpc_id: vpcs.data.id,
        service_name: `com.amazonaws.${region}.${service}`,
        vpc_endpoint_type: 'Interface',
        subnet_ids: vpcs.data.subnetIds,
        security_group_ids: [hostServices.getStringAttribute('id')],
        private_dns_enabled: true,
        ...(policy === undefined ? {} : { policy }),
        tags: { Name: `${name}-${service}` },
      });
    for (const service of SESSION_MANAGER_SERVICES) interfaceEndpoint(`host_services_${service}`, service);
    const httpsFrom = (resourceId: string, groupId: string, from: string, description: string) =>
      new AwsResource(this, resourceId, 'aws_vpc_security_group_ingress_rule', {
        security_group_id: groupId,
        referenced_security_group_id: from,
        ip_protocol: 'tcp',
        from_port: 443,
        to_port: 443,
        description,
      });

    // --- The cluster and the fleet ----------------------------------------------------------------------------
    this.database = new AuroraOptimizedReads(this, 'database', {
      ...module('aurora-optimized-reads'),
      clusterIdentifier: name,
      vpcId: vpcs.data.id,
      subnetIds: vpcs.data.subnetIds,
      readers: props.readers ?? 2,
      deletionProtection,
      skipFinalSnapshot: !deletionProtection,
    });

    const endpoint = (role: string) => ({ vpc_id: vpcs.consumer.id, subnet_ids: vpcs.consumer.subnetIds, role });
    // The reader endpoints, port and max_connections are the cluster module's outputs, known at plan: the
    // rules that read them (readers 1..15, the budget split) are the module's own validations there.
    this.pooler = new PgBouncerProxy(this, 'pooler', {
      ...module('pgbouncer-proxy'),
      name,
      vpcId: vpcs.data.id,
      subnetIds: vpcs.data.subnetIds,
      clusterSecurityGroupId: this.database.securityGroupId,
      clusterEndpoint: this.database.writerEndpoint,
      readerEndpoints: this.database.readerInstanceEndpoints,
      writerInstanceEndpoint: this.database.writerInstanceEndpoint,
      serverPort: this.database.port,
      databaseName: this.database.databaseName,
      maxConnections: this.database.maxConnections,
      packagesBucket,
      packagesKey,
      // HTTPS from the hosts to the data VPC's interface endpoints and S3's gateway endpoint only (its prefix list,
      // known once the endpoint exists: the module's rules are keyed by the CIDR block, known at plan). Lazy: the
      // gateway endpoint is made below.
      vpcCidrBlock: vpcs.data.cidrBlock,
      s3PrefixListId: Lazy.stringValue({ produce: () => s3Endpoint.getStringAttribute('prefix_list_id') }),
      // The endpoints the hosts call AWS through (the data VPC has no NAT): the plan fails naming any missing.
      vpcEndpoints: {
        s3: Lazy.stringValue({ produce: () => s3Endpoint.getStringAttribute('id') }),
        ...Object.fromEntries(['secretsmanager', 'monitoring', ...SESSION_MANAGER_SERVICES].map((service) => [service, hostServices.getStringAttribute('id')])),
      },
      // The listeners' certificate from the module's own CA, for the endpoint service's names.
      certificateFunction: { filename: path.join(lambdaDir, 'pooler-certificate.zip') },
      hosts: props.hosts ?? 2,
      instanceType: props.instanceType ?? 'c7g.large',
      imageId: props.imageId ?? new TerraformVariable(this, 'pooler_image_id', { type: 'string', description: "The PgBouncer hosts' AMI (Debian 13 arm64 in the Region), pinned: aws ssm get-parameter --name /aws/service/debian/release/13/latest/arm64 --query Parameter.Value --output text; set a new one on purpose (every host is replaced, one at a time)." }).stringValue,
      consumerUsers: Object.values(consumers).map((c) => c.dbUser),
      endpoints: { [consumers.reader.endpoint]: endpoint('READ_ONLY'), [consumers.writer.endpoint]: endpoint('READ_WRITE') },
      // The hosts start once the role bootstrap has run: their read-only listener logs in as a role it makes (its
      // roles output is known once it has run). An input rather than dependsOn: the bootstrap takes this module's
      // secrets, so dependsOn would be a cycle, and depends_on on a module leaves more of its values unknown at plan
      // (https://developer.hashicorp.com/terraform/language/meta-arguments/depends_on). Lazy: the bootstrap is made below.
      hostsDependOn: Lazy.listValue({ produce: () => Fn.keys(databaseRoles.roles) as string[] }),
    });
    httpsFrom('host_services_from_hosts', hostServices.getStringAttribute('id'), this.pooler.hostSecurityGroupId, 'HTTPS from the PgBouncer hosts');
    // A map output indexed with Fn.lookup: the map token has no keys in TypeScript.
    const secretOf = (dbUser: string) => Token.asString(Fn.lookup(this.pooler.consumerSecretArns, dbUser));
    const endpointOf = (endpointName: string) => Fn.lookup(this.pooler.endpoints, endpointName);

    // --- The consumers' roles: verifiers derived from their secrets, and the read-only server role ------------
    const logsKeyPolicy = new LogsKmsPolicy(this, 'log_key_policy', {
      ...module('internal/logs-kms-policy'),
      logGroupNames: [...Object.values(consumers).map((c) => `/aws/lambda/${c.functionName}`), `/aws/lambda/${rolesFunctionName}`],
    });
    const logsKey = new AwsResource(this, 'logs', 'aws_kms_key', {
      description: 'Encrypts the logs and function environments of the aurora-proxy-kit PgBouncer reference deployment',
      enable_key_rotation: true,
      deletion_window_in_days: 30,
      policy: logsKeyPolicy.json,
    });
    const databaseRoles = new DatabaseRoleBootstrap(this, 'database_roles', {
      ...module('database-role-bootstrap'),
      functionName: rolesFunctionName,
      filename: path.join(lambdaDir, 'role-bootstrap.zip'),
      roles: [
        ...Object.values(consumers).map((c) => ({
          name: c.dbUser,
          access: Token.asString(Fn.lookup(endpointOf(c.endpoint), 'target_role')),
          password_secret_arn: secretOf(c.dbUser),
        })),
        { name: this.pooler.readOnlyServerUser, access: 'READ_ONLY', password_secret_arn: this.pooler.readOnlyServerSecretArn },
      ],
      clusterIdentifier: this.database.clusterIdentifier,
      clusterEndpoint: this.database.writerEndpoint,
      clusterSecurityGroupId: this.database.securityGroupId,
      databaseName: this.database.databaseName,
      masterUserSecretArn: this.database.masterUserSecretArn,
      secretKmsKeyArn: this.database.kmsKeyArn,
      vpcId: vpcs.data.id,
      subnetIds: vpcs.data.subnetIds,
      vpcEndpoints: { secretsmanager: hostServices.getStringAttribute('id') },
      // The invocation reads the secrets through the endpoint made below (its policy names this module's role).
      invocationDependsOn: Lazy.listValue({ produce: (): string[] => [secretsEndpoint.getStringAttribute('id')] }),
      kmsKeyArn: logsKey.getStringAttribute('arn'),
    });
    // The role bootstrap reaches the data VPC's Secrets Manager endpoint as the hosts do.
    httpsFrom('host_services_from_role_bootstrap', hostServices.getStringAttribute('id'), databaseRoles.securityGroupId, 'HTTPS from the role bootstrap (the secrets)');

    // --- The data VPC's endpoints with policies ----------------------------------------------------------------
    // The hosts' GetObject of the packages object is all the data VPC does with S3 (the hosts install from it, not
    // from Debian's archive): the gateway passes that and nothing else, so nothing in the VPC reaches any other
    // bucket, whatever credentials it holds. A gateway endpoint's policy has Principal "*" and names its principals
    // with aws:PrincipalArn (https://docs.aws.amazon.com/vpc/latest/privatelink/vpc-endpoints-access.html#vpc-endpoint-policies-gateway,
    // https://docs.aws.amazon.com/vpc/latest/privatelink/vpc-endpoints-s3.html); principals type "*" renders
    // Principal "*" (hashicorp/terraform-provider-aws website/docs/d/iam_policy_document.html.markdown).
    const s3Policy = new AwsData(this, 's3_endpoint', 'aws_iam_policy_document', {
      statement: [
        {
          sid: 'HostsReadTheirPackages',
          actions: ['s3:GetObject'],
          resources: hostObjects.map((o) => `arn:${partition}:s3:::${o.bucket}/${o.key}`),
          principals: [{ type: '*', identifiers: ['*'] }],
          condition: [{ test: 'StringEquals', variable: 'aws:PrincipalArn', values: [this.pooler.hostRoleArn] }],
        },
      ],
    });
    const s3Endpoint = new AwsResource(this, 's3', 'aws_vpc_endpoint', {
      vpc_id: vpcs.data.id,
      service_name: `com.amazonaws.${region}.s3`,
      vpc_endpoint_type: 'Gateway',
      route_table_ids: vpcs.data.routeTableIds,
      policy: s3Policy.getStringAttribute('json'),
      tags: { Name: `${name}-s3` },
    });

    // Secrets Manager: the role bootstrap reads the master secret and derives the roles' verifiers from their
    // secrets; the hosts read theirs (the auth file's passwords, the listeners' certificate) at boot and every
    // 5 minutes. Nothing else passes.
    const consumerSecretArns = Object.values(consumers).map((c) => secretOf(c.dbUser));
    const secretsManagerPolicy = new AwsData(this, 'secrets_manager_endpoint', 'aws_iam_policy_document', {
      statement: [
        {
          sid: 'RoleBootstrapReadsTheMasterSecret',
          actions: ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'],
          resources: [this.database.masterUserSecretArn],
          principals: [{ type: 'AWS', identifiers: [databaseRoles.roleArn] }],
        },
        // The secrets of the roles the bootstrap makes: the consumers' and the read-only server role's.
        {
          sid: 'RoleBootstrapReadsTheRolesSecrets',
          actions: ['secretsmanager:GetSecretValue'],
          resources: [this.pooler.readOnlyServerSecretArn, ...consumerSecretArns],
          principals: [{ type: 'AWS', identifiers: [databaseRoles.roleArn] }],
        },
        {
          sid: 'HostsReadTheirSecrets',
          actions: ['secretsmanager:GetSecretValue'],
          resources: [this.pooler.readOnlyServerSecretArn, this.pooler.tlsSecretArn, ...consumerSecretArns],
          principals: [{ type: 'AWS', identifiers: [this.pooler.hostRoleArn] }],
        },
      ],
    });
    // Was one of the host services' endpoints (host_services_secretsmanager): state made before moves here.
    const secretsEndpoint: AwsResource = interfaceEndpoint('secrets_manager', 'secretsmanager', secretsManagerPolicy.getStringAttribute('json'));
    secretsEndpoint.moveFromId('aws_vpc_endpoint.host_services_secretsmanager');

    // CloudWatch: the hosts' metrics exporter publishes in the engine's namespace only.
    const monitoringPolicy = new AwsData(this, 'monitoring_endpoint', 'aws_iam_policy_document', {
      statement: [
        {
          sid: 'HostsPublishTheirMetrics',
          actions: ['cloudwatch:PutMetricData'],
          resources: ['*'],
          principals: [{ type: 'AWS', identifiers: [this.pooler.hostRoleArn] }],
          condition: [{ test: 'StringEquals', variable: 'cloudwatch:namespace', values: [this.pooler.metricsNamespace] }],
        },
      ],
    });
    interfaceEndpoint('monitoring', 'monitoring', monitoringPolicy.getStringAttribute('json')).moveFromId('aws_vpc_endpoint.host_services_monitoring');

    // --- The consumers in the consumer VPC: each logs in with its secret through its endpoint ---------------
    const consumerSecrets = new AwsResource(this, 'consumer_secrets', 'aws_security_group', {
      name_prefix: `${name}-consumer-secrets-`,
      description: 'Secrets Manager interface endpoint of the consumer VPC: HTTPS from the consumers only',
      vpc_id: vpcs.consumer.id,
    });
    const functions = Object.fromEntries(
      Object.entries(consumers).map(([key, c]) => {
        const fn = new LambdaConsumer(this, key, {
          ...module('lambda-consumer'),
          functionName: c.functionName,
          filename: path.join(lambdaDir, c.zip),
          vpcId: vpcs.consumer.id,
          subnetIds: vpcs.consumer.subnetIds,
          endpoint: endpointOf(c.endpoint),
          auth: 'secret',
          passwordSecretArn: secretOf(c.dbUser),
          vpcEndpoints: { secretsmanager: consumerSecrets.getStringAttribute('id') },
          dbUser: c.dbUser,
          databaseName: this.database.databaseName,
          // Its first login needs its role.
          dependsOn: [databaseRoles],
        });
        httpsFrom(`consumer_secrets_${key}`, consumerSecrets.getStringAttribute('id'), fn.securityGroupId, `${c.functionName} reads its password secret`);
        return [key, fn];
      }),
    );
    // Through the consumer VPC's Secrets Manager endpoint, each consumer reads its own secret only.
    const consumerSecretsPolicy = new AwsData(this, 'consumer_secrets_policy', 'aws_iam_policy_document', {
      statement: Object.entries(consumers).map(([key, c]) => ({
        sid: `${key[0].toUpperCase()}${key.slice(1)}ReadsItsSecret`,
        actions: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'],
        resources: [secretOf(c.dbUser)],
        principals: [{ type: 'AWS', identifiers: [functions[key].roleArn] }],
      })),
    });
    new AwsResource(this, 'consumer_secrets_endpoint', 'aws_vpc_endpoint', {
      vpc_id: vpcs.consumer.id,
      service_name: `com.amazonaws.${region}.secretsmanager`,
      vpc_endpoint_type: 'Interface',
      private_dns_enabled: true,
      subnet_ids: vpcs.consumer.subnetIds,
      security_group_ids: [consumerSecrets.getStringAttribute('id')],
      policy: consumerSecretsPolicy.getStringAttribute('json'),
      tags: { Name: `${name}-consumer-secretsmanager` },
    });

    // --- The dashboard: the cluster's instances and the fleet (its hosts' metrics and its load balancer's) ---
    this.dashboard = new Dashboard(this, 'dashboard', {
      ...module('dashboard'),
      dashboardName: name,
      instanceIdentifiers: this.database.instanceIdentifiers,
      functions: { Reader: functions.reader.functionName, Writer: functions.writer.functionName },
      pgbouncerFleetName: this.pooler.fleetName,
      pgbouncerTargets: this.pooler.metricTargets,
      pgbouncerLoadBalancerArnSuffix: this.pooler.loadBalancerArnSuffix,
      pgbouncerTargetGroupArnSuffixes: Token.asStringMap(this.pooler.targetGroupArnSuffixes),
      pgbouncerHosts: this.pooler.hosts,
    });

    const output = (outputId: string, value: unknown, description: string) => new TerraformOutput(this, outputId, { value, description });
    output('endpoints', this.pooler.endpoints, 'The PgBouncer endpoints in the consumer VPC: host, port, role and security group of each.');
    output('client_ca_certificate', this.pooler.clientCaCertificate, 'The CA certificate (PEM) consumers verify the endpoints against (verify-full by the endpoint\'s DNS name).');
    output('consumer_secret_arns', this.pooler.consumerSecretArns, 'The consumers\' secrets ({"username", "password"}) by user name.');
    output('writer_endpoint', this.database.writerEndpoint, 'The cluster (writer) endpoint the read/write pools follow.');
    output('dashboard_name', this.dashboard.dashboardName, 'CloudWatch dashboard of the cluster and the fleet.');
  }
}

/** Synthesizes the example into `outdir` (cdk.tf.json under stacks/<id>/); returns the stack's directory. */
export function synthCompletePgBouncer(outdir: string, props: CompletePgBouncerStackProps = {}, id = 'complete-pgbouncer'): string {
  const app = new App({ outdir });
  new CompletePgBouncerStack(app, id, props);
  app.synth();
  return path.join(outdir, 'stacks', id);
}

if (require.main === module) {
  const outdir = path.resolve(process.argv[2] ?? path.join(__dirname, '..', 'cdktf.out'));
  process.stdout.write(`${synthCompletePgBouncer(outdir, { modulesDir: path.join(REPOSITORY, 'modules') })}/cdk.tf.json\n`);
}
