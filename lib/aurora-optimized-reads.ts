import { Annotations, Duration, Names, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as rds from 'aws-cdk-lib/aws-rds';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import {
  CLUSTER_RULES,
  DEFAULT_AUTO_MINOR_VERSION_UPGRADE,
  DEFAULT_ENGINE_VERSION,
  InstanceClassSpec,
  OFFERED_ENGINE_VERSIONS,
  OptimizedReadsSizing,
  POSTGRES_PORT,
  catalogMetric,
  findInstanceClass,
  metricDimensions,
  optimizedReadsSizing,
  parameterGroupFamily,
  parseEngineVersion,
  postgresLogGroupName,
  runRules,
  securityGroupDescription,
  autoMinorVersionUpgradeWarning,
  unknownEngineVersionWarning,
} from './model';
import type { IAuroraOptimizedReads, AuroraOptimizedReadsAttributes } from './aurora-optimized-reads-attributes';
import { addClusterKey } from './private/cluster-key';
import { kitClusterParameters } from './private/cluster-parameters';
import { ImportedAuroraOptimizedReads } from './private/imported-cluster';
import { kitSubnets } from './private/subnets';
import { throwIfInvalid } from './private/validation';

/** Properties of an AuroraOptimizedReads. */
export interface AuroraOptimizedReadsProps {
  /** The VPC the cluster's instances are placed in. */
  readonly vpc: ec2.IVpc;
  /**
   * Subnets of the cluster's subnet group.
   * @default - the VPC's isolated subnets
   */
  readonly vpcSubnets?: ec2.SubnetSelection;
  /**
   * DB instance class of the writer and every reader; an Optimized Reads (NVMe) class.
   * @default 'db.r6gd.xlarge'
   */
  readonly instanceClass?: string;
  /**
   * Number of reader instances (bounds: the kit's `readers` rule).
   * @default 2
   */
  readonly readers?: number;
  /**
   * Aurora PostgreSQL engine version, `MAJOR.MINOR`, at or above the Optimized Reads floor of the
   * instance family and still offered by RDS.
   * @default '17.9'
   */
  readonly engineVersion?: string;
  /**
   * Whether RDS applies minor engine upgrades by itself (to the cluster and every instance). Off by
   * default: RDS cannot downgrade, so once it has upgraded the cluster past `engineVersion`, the next
   * deployment that sends `engineVersion` fails until you raise it to the running version. When on,
   * synth warns so.
   * @default false
   */
  readonly autoMinorVersionUpgrade?: boolean;
  /**
   * Name of the master user; RDS keeps its password in Secrets Manager and rotates it.
   * @default 'postgres'
   */
  readonly masterUsername?: string;
  /**
   * Name of the database created in the cluster.
   * @default 'app'
   */
  readonly databaseName?: string;
  /**
   * KMS key that encrypts storage, the master secret, Performance Insights and the PostgreSQL log
   * group; its policy must let CloudWatch Logs use it for that log group.
   * @default - a new customer-managed key with rotation on, retained when the stack is deleted, its
   * CloudWatch Logs statement limited to the cluster's PostgreSQL log group
   */
  readonly encryptionKey?: kms.IKey;
  /**
   * Whether the cluster refuses to be deleted.
   * @default true
   */
  readonly deletionProtection?: boolean;
  /**
   * What happens to the cluster when it leaves the stack.
   * @default RemovalPolicy.SNAPSHOT
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Days of automated backups (bounds: the kit's `backup-retention` rule).
   * @default 7
   */
  readonly backupRetentionDays?: number;
  /**
   * Interval of enhanced monitoring.
   * @default Duration.seconds(60)
   */
  readonly monitoringInterval?: Duration;
  /**
   * Retention of Performance Insights data.
   * @default rds.PerformanceInsightRetention.DEFAULT (7 days)
   */
  readonly performanceInsightRetention?: rds.PerformanceInsightRetention;
  /**
   * Retention of the exported PostgreSQL log.
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Cluster identifier. The kit names the cluster so that it can create the PostgreSQL log group
   * itself (encrypted, with retention) before RDS would create an unencrypted one.
   * @default - a unique name derived from the construct path, lower case
   */
  readonly clusterIdentifier?: string;
  /**
   * Extra cluster parameters, merged over the kit's. `rds.force_ssl` cannot be turned off, and
   * `shared_preload_libraries` is added to pg_stat_statements rather than replacing it.
   * @default - none
   */
  readonly parameters?: Record<string, string>;
}

/** A metric of one Aurora instance. */
export type InstanceMetricOptions = cloudwatch.MetricOptions;

/**
 * An Aurora PostgreSQL cluster on Optimized Reads (NVMe) instances, with the kit's secure defaults:
 * I/O-Optimized storage (needed for the tiered cache), KMS encryption, IAM database authentication,
 * an RDS-managed and rotated master password, TLS forced by parameter, Performance Insights,
 * enhanced monitoring, PostgreSQL log export, deletion protection and backups.
 *
 * It validates the instance class and engine version against the kit's catalog at synth time, and
 * exposes the Optimized Reads sizing (tiered cache, temporary objects) of its instance class.
 */
export class AuroraOptimizedReads extends Construct implements IAuroraOptimizedReads {
  /** The PostgreSQL port the cluster, its proxy and the proxy's endpoints listen on. */
  public static readonly PORT: number = POSTGRES_PORT;

  /**
   * A cluster of another stack or app, for a role bootstrap, consumers or a dashboard there. A proxy needs the
   * cluster itself (its instance class sizes the pools, its instances are the targets): put it in the cluster's app.
   */
  public static fromAuroraOptimizedReadsAttributes(scope: Construct, id: string, attrs: AuroraOptimizedReadsAttributes): IAuroraOptimizedReads {
    return new ImportedAuroraOptimizedReads(scope, id, attrs);
  }

  /** The underlying cluster. */
  public readonly cluster: rds.DatabaseCluster;
  /** Network access to the cluster (its own security group). */
  public readonly connections: ec2.Connections;
  /** The RDS-managed master user secret. */
  public readonly masterSecret: secretsmanager.ISecret;
  /** The key that encrypts storage, the secret and Performance Insights. */
  public readonly encryptionKey: kms.IKey;
  public readonly masterUsername: string;
  public readonly databaseName: string;
  public readonly instanceClass: string;
  public readonly instanceSpec: InstanceClassSpec;
  public readonly engineVersion: string;
  /** How Aurora splits each instance's NVMe storage, and its default max_connections. */
  public readonly sizing: OptimizedReadsSizing;
  /** The writer's DB instance identifier. */
  public readonly writerInstanceIdentifier: string;
  /** The readers' DB instance identifiers, in order. */
  public readonly readerInstanceIdentifiers: string[];
  /** The cluster identifier. */
  public readonly clusterIdentifier: string;
  /** The exported PostgreSQL log. */
  public readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: AuroraOptimizedReadsProps) {
    super(scope, id);

    const instanceClass = props.instanceClass ?? 'db.r6gd.xlarge';
    const engineVersion = props.engineVersion ?? DEFAULT_ENGINE_VERSION;
    const readers = props.readers ?? 2;
    const backupRetentionDays = props.backupRetentionDays ?? 7;
    throwIfInvalid(
      this,
      runRules(CLUSTER_RULES, {
        instanceClass,
        engineVersion,
        readers,
        backupRetentionDays,
        parameters: props.parameters,
        clusterIdentifier: props.clusterIdentifier,
        monitoringInterval: props.monitoringInterval?.toSeconds(),
      }),
    );
    if (!OFFERED_ENGINE_VERSIONS.includes(engineVersion)) {
      Annotations.of(this).addWarningV2(
        'aurora-proxy-kit:unknownEngineVersion',
        unknownEngineVersionWarning(engineVersion),
      );
    }
    const autoMinorVersionUpgrade = props.autoMinorVersionUpgrade ?? DEFAULT_AUTO_MINOR_VERSION_UPGRADE;
    if (autoMinorVersionUpgrade) {
      Annotations.of(this).addWarningV2('aurora-proxy-kit:autoMinorVersionUpgrade', autoMinorVersionUpgradeWarning(engineVersion));
    }

    this.instanceClass = instanceClass;
    this.instanceSpec = findInstanceClass(instanceClass)!;
    this.engineVersion = engineVersion;
    this.sizing = optimizedReadsSizing(this.instanceSpec);
    this.masterUsername = props.masterUsername ?? 'postgres';
    this.databaseName = props.databaseName ?? 'app';

    this.clusterIdentifier =
      props.clusterIdentifier ?? Names.uniqueResourceName(this, { maxLength: 63, separator: '-' }).toLowerCase();
    const logGroupName = postgresLogGroupName(this.clusterIdentifier);

    this.encryptionKey = props.encryptionKey ?? addClusterKey(this, logGroupName);

    this.logGroup = new logs.LogGroup(this, 'PostgresLog', {
      logGroupName,
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      encryptionKey: this.encryptionKey,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const major = String(parseEngineVersion(engineVersion)!.major);
    const engine = rds.DatabaseClusterEngine.auroraPostgres({
      version: rds.AuroraPostgresEngineVersion.of(engineVersion, major),
    });
    const parameterGroup = new rds.ParameterGroup(this, 'Parameters', {
      engine,
      description: `${parameterGroupFamily(engineVersion)} parameters of ${this.node.path}: TLS forced, pg_stat_statements loaded`,
      parameters: kitClusterParameters(props.parameters),
    });

    const securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc: props.vpc,
      description: securityGroupDescription((p) => `Aurora cluster ${p}: ingress only from granted peers (the proxy)`, this.node.path),
      allowAllOutbound: false,
    });

    const instanceType = new ec2.InstanceType(instanceClass.replace(/^db\./, ''));
    const instanceDefaults = {
      instanceType,
      enablePerformanceInsights: true,
      performanceInsightRetention: props.performanceInsightRetention ?? rds.PerformanceInsightRetention.DEFAULT,
      performanceInsightEncryptionKey: this.encryptionKey,
      autoMinorVersionUpgrade,
      publiclyAccessible: false,
      caCertificate: rds.CaCertificate.RDS_CA_RSA2048_G1,
    };

    this.cluster = new rds.DatabaseCluster(this, 'Cluster', {
      engine,
      clusterIdentifier: this.clusterIdentifier,
      vpc: props.vpc,
      vpcSubnets: kitSubnets(this, props.vpc, props.vpcSubnets),
      securityGroups: [securityGroup],
      writer: rds.ClusterInstance.provisioned('Writer', { ...instanceDefaults, promotionTier: 0 }),
      // Reader 1 is the preferred failover target (tier 1); the rest follow (tier 2).
      readers: Array.from({ length: readers }, (_, i) =>
        rds.ClusterInstance.provisioned(`Reader${i + 1}`, { ...instanceDefaults, promotionTier: i === 0 ? 1 : 2 }),
      ),
      // On the cluster as on the instances: Aurora upgrades only when both are on.
      autoMinorVersionUpgrade,
      storageType: rds.DBClusterStorageType.AURORA_IOPT1,
      storageEncrypted: true,
      storageEncryptionKey: this.encryptionKey,
      iamAuthentication: true,
      credentials: rds.Credentials.fromUsername(this.masterUsername, { encryptionKey: this.encryptionKey }),
      manageMasterUserPassword: true,
      defaultDatabaseName: this.databaseName,
      parameterGroup,
      backup: { retention: Duration.days(backupRetentionDays) },
      deletionProtection: props.deletionProtection ?? true,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.SNAPSHOT,
      copyTagsToSnapshot: true,
      monitoringInterval: props.monitoringInterval ?? Duration.seconds(60),
      cloudwatchLogsExports: ['postgresql'],
    });
    // The log group must exist first, or RDS creates it unencrypted and without retention.
    this.cluster.node.addDependency(this.logGroup);
    this.connections = this.cluster.connections;

    const cfnCluster = this.cluster.node.defaultChild as rds.CfnDBCluster;
    this.masterSecret = secretsmanager.Secret.fromSecretAttributes(this, 'MasterSecret', {
      secretCompleteArn: cfnCluster.attrMasterUserSecretSecretArn,
      encryptionKey: this.encryptionKey,
    });

    Validations.of(this.cluster).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonRDSEnhancedMonitoringRole]',
      reason: 'AWS-maintained policy for enhanced monitoring; it only writes OS metrics to the RDSOSMetrics log group',
    });

    const identifiers = this.cluster.instanceIdentifiers;
    this.writerInstanceIdentifier = identifiers[0];
    this.readerInstanceIdentifiers = identifiers.slice(1);
  }

  /** Every instance identifier, writer first. */
  public get instanceIdentifiers(): string[] {
    return [this.writerInstanceIdentifier, ...this.readerInstanceIdentifiers];
  }

  /** The VPC the cluster's instances are in. */
  public get vpc(): ec2.IVpc {
    return this.cluster.vpc;
  }

  /** Lets `grantee` read the master secret; the key's policy lets it decrypt through Secrets Manager. */
  public grantMasterSecretRead(grantee: iam.IGrantable): iam.Grant {
    return this.masterSecret.grantRead(grantee);
  }

  /** The host name of the cluster (writer) endpoint. */
  public get clusterEndpointHostname(): string {
    return this.cluster.clusterEndpoint.hostname;
  }

  /** Any AWS/RDS metric of one instance of this cluster. */
  public metricForInstance(instanceIdentifier: string, metricName: string, props?: InstanceMetricOptions): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: 'AWS/RDS',
      metricName,
      dimensionsMap: metricDimensions('instance', { instanceIdentifier }),
      period: Duration.minutes(1),
      ...props,
    });
  }

  /** A catalog metric of one instance, at the catalog's statistic. */
  private catalogMetricForInstance(instanceIdentifier: string, metricName: string, props?: InstanceMetricOptions): cloudwatch.Metric {
    return this.metricForInstance(instanceIdentifier, metricName, { statistic: catalogMetric('instance', metricName).statistics[0], ...props });
  }

  /** CPUUtilization of one instance (Average). */
  public metricCpuUtilization(instanceIdentifier: string, props?: InstanceMetricOptions): cloudwatch.Metric {
    return this.catalogMetricForInstance(instanceIdentifier, 'CPUUtilization', props);
  }

  /** DatabaseConnections of one instance (Average). */
  public metricDatabaseConnections(instanceIdentifier: string, props?: InstanceMetricOptions): cloudwatch.Metric {
    return this.catalogMetricForInstance(instanceIdentifier, 'DatabaseConnections', props);
  }

  /** FreeableMemory of one instance (Minimum). */
  public metricFreeableMemory(instanceIdentifier: string, props?: InstanceMetricOptions): cloudwatch.Metric {
    return this.catalogMetricForInstance(instanceIdentifier, 'FreeableMemory', props);
  }

  /** BufferCacheHitRatio of one instance (Average). */
  public metricBufferCacheHitRatio(instanceIdentifier: string, props?: InstanceMetricOptions): cloudwatch.Metric {
    return this.catalogMetricForInstance(instanceIdentifier, 'BufferCacheHitRatio', props);
  }

  /** AuroraReplicaLag of one reader (Maximum). */
  public metricReplicaLag(instanceIdentifier: string, props?: InstanceMetricOptions): cloudwatch.Metric {
    return this.catalogMetricForInstance(instanceIdentifier, 'AuroraReplicaLag', props);
  }

  /** FreeLocalStorage (local storage left, by instance class; not the NVMe) of one instance (Minimum). */
  public metricFreeLocalStorage(instanceIdentifier: string, props?: InstanceMetricOptions): cloudwatch.Metric {
    return this.catalogMetricForInstance(instanceIdentifier, 'FreeLocalStorage', props);
  }

  /** FreeEphemeralStorage (NVMe left for temporary objects and the tiered cache) of one instance (Minimum). */
  public metricFreeEphemeralStorage(instanceIdentifier: string, props?: InstanceMetricOptions): cloudwatch.Metric {
    return this.catalogMetricForInstance(instanceIdentifier, 'FreeEphemeralStorage', props);
  }

  /** ReadIOPSEphemeralStorage (NVMe read IOPS) of one instance (Average). */
  public metricReadIopsEphemeralStorage(instanceIdentifier: string, props?: InstanceMetricOptions): cloudwatch.Metric {
    return this.catalogMetricForInstance(instanceIdentifier, 'ReadIOPSEphemeralStorage', props);
  }

  /** ReadLatencyEphemeralStorage (NVMe read latency, in seconds) of one instance (Average). */
  public metricReadLatencyEphemeralStorage(instanceIdentifier: string, props?: InstanceMetricOptions): cloudwatch.Metric {
    return this.catalogMetricForInstance(instanceIdentifier, 'ReadLatencyEphemeralStorage', props);
  }

  /** AuroraOptimizedReadsCacheHitRatio (tiered cache hits; AWS publishes it for the writer only) of one instance (Average). */
  public metricOptimizedReadsCacheHitRatio(instanceIdentifier: string, props?: InstanceMetricOptions): cloudwatch.Metric {
    return this.catalogMetricForInstance(instanceIdentifier, 'AuroraOptimizedReadsCacheHitRatio', props);
  }
}
