import { CfnOutput, Duration, RemovalPolicy, Stack, StackProps, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { LambdaConsumer } from '../lambda-consumer';
import { Dashboard } from '../dashboard';
import { DatabaseRoleBootstrap } from '../database-role-bootstrap';
import { skipCheckov } from '../private/checkov';
import { allowLogsToUseKey, stackLogGroupPattern } from '../private/key-policies';
import { AuroraOptimizedReads } from '../aurora-optimized-reads';
import { RdsProxy } from '../rds-proxy';
import { DEPLOYMENT_RULES, KMS_DELETION_WINDOW_DAYS, runRules } from '../model';
import { IPoolingTier, IProxyEndpoint, ProxyEngine } from '../pooling-tier';
import { throwIfInvalid } from '../private/validation';
import { EndpointRole } from '../../lambda/src/environment';
import { POOLER_PACKAGES_KEY, PgBouncerTier } from './pgbouncer-tier';

/** The database roles of the reference consumers (made by the role bootstrap). */
export const READER_DB_USER = 'app_reader';
export const WRITER_DB_USER = 'app_writer';

/** Settings of the reference deployment; each is a CDK context key of bin/app.ts. */
export interface ReferenceDeploymentProps extends StackProps {
  /**
   * DB instance class of every instance.
   * @default 'db.r6gd.xlarge'
   */
  readonly instanceClass?: string;
  /**
   * Number of readers.
   * @default 2
   */
  readonly readers?: number;
  /**
   * Aurora PostgreSQL engine version.
   * @default DEFAULT_ENGINE_VERSION
   */
  readonly engineVersion?: string;
  /**
   * Share of max_connections the proxy may use.
   * @default 100
   */
  readonly maxConnectionsPercent?: number;
  /**
   * Number of READ_ONLY endpoints in the consumer VPC (the first one serves the reader Lambda; more
   * stand for other consumers, e.g. reporting tools). Together with the READ_WRITE endpoint they count
   * against RDS Proxy's 20 endpoints per proxy.
   * @default 1
   */
  readonly readOnlyEndpoints?: number;
  /**
   * The pooling tier's engine: RDS Proxy, or a PgBouncer fleet (context `proxyEngine=pgbouncer`).
   * @default ProxyEngine.RDS_PROXY
   */
  readonly proxyEngine?: ProxyEngine;
  /**
   * Whether the cluster refuses deletion.
   * @default true
   */
  readonly deletionProtection?: boolean;
}

/**
 * The reference deployment: a data VPC holding the Optimized Reads cluster and its pooling tier (RDS
 * Proxy, or a PgBouncer fleet), and a separate consumer VPC holding a read-only and a read/write
 * endpoint of the tier and one Lambda consumer behind each, plus the dashboard and alarms. Neither VPC
 * has internet access or NAT: nothing in the data path needs it, and each construct that calls an AWS API
 * from a VPC makes the endpoint it needs there (one per VPC and service, shared).
 */
export class ReferenceDeployment extends Stack {
  public readonly dataVpc: ec2.Vpc;
  public readonly consumerVpc: ec2.Vpc;
  public readonly database: AuroraOptimizedReads;
  public readonly proxyEngine: ProxyEngine;
  /** The pooling tier: `proxy` or `pgBouncer.proxy`, whichever the engine is. */
  public readonly poolingTier: IPoolingTier;
  /** The RDS Proxy (engine RDS_PROXY). */
  public readonly proxy?: RdsProxy;
  /** The PgBouncer fleet and what its hosts and consumers need (engine PGBOUNCER). */
  public readonly pgBouncer?: PgBouncerTier;
  public readonly readOnlyEndpoint: IProxyEndpoint;
  public readonly readWriteEndpoint: IProxyEndpoint;
  public readonly reader: LambdaConsumer;
  public readonly writer: LambdaConsumer;
  public readonly dashboard: Dashboard;
  public readonly databaseRoles: DatabaseRoleBootstrap;

  constructor(scope: Construct, id: string, props: ReferenceDeploymentProps = {}) {
    super(scope, id, props);

    // One key for the stack's logs (VPC flow logs, Lambda logs, Lambda environments), all unnamed log groups of this stack.
    const logKey = new kms.Key(this, 'LogKey', {
      description: 'Encrypts the logs and function environments of the aurora-proxy-kit reference deployment',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
      pendingWindow: Duration.days(KMS_DELETION_WINDOW_DAYS),
    });
    allowLogsToUseKey(logKey, [stackLogGroupPattern(this)]);

    this.dataVpc = this.isolatedVpc('DataVpc', '10.10.0.0/16', logKey);
    this.consumerVpc = this.isolatedVpc('ConsumerVpc', '10.20.0.0/16', logKey);

    this.database = new AuroraOptimizedReads(this, 'Database', {
      vpc: this.dataVpc,
      instanceClass: props.instanceClass,
      readers: props.readers,
      engineVersion: props.engineVersion,
      deletionProtection: props.deletionProtection,
    });
    const readOnlyEndpoints = props.readOnlyEndpoints ?? 1;
    throwIfInvalid(this, runRules(DEPLOYMENT_RULES, { readOnlyEndpoints }));
    this.proxyEngine = props.proxyEngine ?? ProxyEngine.RDS_PROXY;
    // The one engine-specific step: which tier is built. Everything after it goes through IPoolingTier.
    if (this.proxyEngine === ProxyEngine.PGBOUNCER) {
      this.pgBouncer = new PgBouncerTier(this, 'PgBouncer', { cluster: this.database, maxConnectionsPercent: props.maxConnectionsPercent });
      this.poolingTier = this.pgBouncer.proxy;
    } else {
      this.proxy = new RdsProxy(this, 'Proxy', { cluster: this.database, maxConnectionsPercent: props.maxConnectionsPercent });
      this.poolingTier = this.proxy;
    }
    const tier = this.poolingTier;
    this.readOnlyEndpoint = tier.addReadOnlyEndpoint('ReadOnly', { vpc: this.consumerVpc });
    this.readWriteEndpoint = tier.addReadWriteEndpoint('ReadWrite', { vpc: this.consumerVpc });
    for (let i = 2; i <= readOnlyEndpoints; i++) tier.addReadOnlyEndpoint(`ReadOnly${i}`, { vpc: this.consumerVpc });

    const consumerDefaults = {
      databaseName: this.database.databaseName,
      encryptionKey: logKey,
    };
    this.reader = new LambdaConsumer(this, 'Reader', { ...consumerDefaults, dbUser: READER_DB_USER, endpoint: this.readOnlyEndpoint });
    this.writer = new LambdaConsumer(this, 'Writer', { ...consumerDefaults, dbUser: WRITER_DB_USER, endpoint: this.readWriteEndpoint });

    // Each consumer logs in as a role of its own, never as the master user. The tier decides how the roles
    // log in (IAM, or their password secrets) and adds its own (the PgBouncer engine's read-only server role);
    // what logs in as them (the PgBouncer hosts) starts once they exist.
    this.databaseRoles = new DatabaseRoleBootstrap(this, 'DatabaseRoles', {
      cluster: this.database,
      poolingTier: tier,
      roles: [
        { name: READER_DB_USER, access: EndpointRole.READ_ONLY },
        { name: WRITER_DB_USER, access: EndpointRole.READ_WRITE },
      ],
      encryptionKey: logKey,
    });
    // A consumer's first login needs its role: the functions (not their IAM roles, which the secrets'
    // key policy names) are created once the roles exist.
    for (const consumer of [this.reader, this.writer]) consumer.function.node.defaultChild!.node.addDependency(this.databaseRoles.resource);

    this.dashboard = new Dashboard(this, 'Dashboard', {
      cluster: this.database,
      proxy: this.poolingTier,
      functions: [this.reader, this.writer],
    });

    this.addOutputs();
    this.acknowledgeFindings();
  }

  private isolatedVpc(id: string, cidr: string, logKey: kms.IKey): ec2.Vpc {
    const vpc = new ec2.Vpc(this, id, {
      ipAddresses: ec2.IpAddresses.cidr(cidr),
      maxAzs: 3,
      natGateways: 0,
      subnetConfiguration: [{ name: 'isolated', subnetType: ec2.SubnetType.PRIVATE_ISOLATED, cidrMask: 22 }],
    });
    const flowLogGroup = new logs.LogGroup(this, `${id}FlowLogs`, {
      retention: logs.RetentionDays.ONE_MONTH,
      encryptionKey: logKey,
    });
    vpc.addFlowLog('FlowLog', { destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogGroup) });
    return vpc;
  }

  private addOutputs(): void {
    const s = this.database.sizing;
    const out = (id: string, value: string, description: string) => new CfnOutput(this, id, { value, description });
    out('InstanceClass', this.database.instanceClass, 'DB instance class of every instance');
    out('EngineVersion', this.database.engineVersion, 'Aurora PostgreSQL engine version');
    out('TieredCacheGiB', String(s.tieredCacheGiB), 'Optimized Reads tiered cache per instance (GiB)');
    out('TemporaryObjectsGiB', String(s.temporaryObjectsGiB), 'NVMe space for temporary objects per instance (GiB)');
    out('MaxConnections', String(s.maxConnections), `Aurora's default max_connections per instance (${s.maxConnectionsBasis})`);
    const sizing = this.poolingTier.poolSizing;
    out('ProxyEngine', this.proxyEngine, 'Engine of the pooling tier');
    out('ProxyMaxServerConnections', String(sizing.maxServerConnections), 'Server connections the proxy may open per instance, leaving the reserved connections');
    out('ReservedConnections', String(sizing.reservedConnections), 'Connections of each instance the pools leave to rdsadmin, AWS\'s automation, the master user and the role bootstrap');
    out('ReadOnlyEndpoint', this.readOnlyEndpoint.hostname, 'READ_ONLY proxy endpoint (consumer VPC)');
    out('ReadWriteEndpoint', this.readWriteEndpoint.hostname, 'READ_WRITE proxy endpoint (consumer VPC)');
    if (this.pgBouncer) {
      out('PoolerPackages', `s3://${this.pgBouncer.packagesBucket.bucketName}/${POOLER_PACKAGES_KEY}`, 'Upload the PgBouncer hosts\' packages tar here (make pooler-packages builds it); hosts that boot before it is there are replaced until it is');
    }
    out('ReaderFunction', this.reader.function.functionName, 'Lambda consumer on the read-only endpoint');
    out('WriterFunction', this.writer.function.functionName, 'Lambda consumer on the read/write endpoint');
    out('DashboardName', this.dashboard.dashboard.dashboardName, 'CloudWatch dashboard');
  }

  /** Findings the design accepts, each with its reason (cdk-nag v3: Validations.acknowledge; checkov: Metadata). */
  private acknowledgeFindings(): void {
    // aws-cdk-lib's provider that strips the rules of each VPC's default security group at deploy time.
    const restrictDefaultSg = this.node.tryFindChild('Custom::VpcRestrictDefaultSGCustomResourceProvider');
    const handler = restrictDefaultSg?.node.tryFindChild('Handler');
    if (handler) {
      skipCheckov(handler, [
        { id: 'CKV_AWS_116', comment: 'aws-cdk-lib custom resource handler, invoked synchronously by CloudFormation; no DLQ applies' },
        { id: 'CKV_AWS_117', comment: 'aws-cdk-lib custom resource handler that only calls the EC2 API at deploy time; the VPCs have no route to it' },
        { id: 'CKV_AWS_115', comment: 'aws-cdk-lib custom resource handler, runs once per deployment' },
      ]);
    }
    Validations.of(this.database).acknowledge({
      id: 'AwsSolutions-RDS11',
      reason: 'Aurora keeps the default port 5432: a non-default port adds no protection; only the proxy security group may reach it',
    });
  }
}
