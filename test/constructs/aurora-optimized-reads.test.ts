import { Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Capture, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import {
  DEFAULT_ENGINE_VERSION,
  KMS_DELETION_WINDOW_DAYS,
  LOGS_ENCRYPTION_CONTEXT_KEY,
  METRIC_CATALOG,
  autoMinorVersionUpgradeWarning,
  findInstanceClass,
  optimizedReadsSizing,
} from '../../lib/model';
import { AuroraOptimizedReads, AuroraOptimizedReadsProps } from '../../lib/aurora-optimized-reads';
import { getAtt, isolatedSubnetRefs, isolatedVpc, kitError, logicalIdOf, newStack, ref } from '../helpers/cdk';
import { rejectionMessage } from '../helpers/vectors';

function clusterStack(props: Partial<AuroraOptimizedReadsProps> = {}) {
  const { app, stack } = newStack();
  const vpc = isolatedVpc(stack, 'Vpc', '10.0.0.0/16');
  const cluster = new AuroraOptimizedReads(stack, 'Cluster', { vpc, ...props });
  return { app, stack, vpc, cluster };
}

describe('AuroraOptimizedReads with defaults', () => {
  let stack: Stack;
  let vpc: ec2.Vpc;
  let cluster: AuroraOptimizedReads;
  let template: Template;
  let key: ReturnType<typeof getAtt>;
  let instances: ReturnType<Template['findResources']>;

  beforeAll(() => {
    // GIVEN / WHEN (one synthesis shared by the tests of this block)
    ({ stack, vpc, cluster } = clusterStack());
    template = Template.fromStack(stack);
    key = getAtt(cluster.encryptionKey as kms.Key, 'Arn');
    instances = template.findResources('AWS::RDS::DBInstance');
  });

  test('a writer and two readers, all on db.r6gd.xlarge', () => {
    template.resourceCountIs('AWS::RDS::DBInstance', 3);
    template.resourcePropertiesCountIs('AWS::RDS::DBInstance', { DBInstanceClass: 'db.r6gd.xlarge' }, 3);
    expect(cluster.readerInstanceIdentifiers).toHaveLength(2);
  });

  test('promotion tiers: writer 0, first reader 1, the rest 2', () => {
    const tier = (id: string) => instances[logicalIdOf(cluster.cluster.node.findChild(id))].Properties.PromotionTier;
    expect([tier('Writer'), tier('Reader1'), tier('Reader2')]).toEqual([0, 1, 2]);
  });

  test('I/O-Optimized, encrypted, IAM auth, RDS-managed master password, logs exported, protected, backed up', () => {
    template.hasResourceProperties('AWS::RDS::DBCluster', {
      Engine: 'aurora-postgresql',
      EngineVersion: DEFAULT_ENGINE_VERSION,
      StorageType: 'aurora-iopt1',
      StorageEncrypted: true,
      KmsKeyId: key,
      EnableIAMDatabaseAuthentication: true,
      ManageMasterUserPassword: true,
      MasterUserSecret: { KmsKeyId: key },
      MasterUserPassword: Match.absent(),
      MasterUsername: 'postgres',
      DatabaseName: 'app',
      EnableCloudwatchLogsExports: ['postgresql'],
      DeletionProtection: true,
      BackupRetentionPeriod: 7,
      CopyTagsToSnapshot: true,
    });
    template.hasResource('AWS::RDS::DBCluster', { DeletionPolicy: 'Snapshot', UpdateReplacePolicy: 'Snapshot' });
    expect(DEFAULT_ENGINE_VERSION).toBe('17.9');
  });

  test('every instance: Performance Insights with the key, enhanced monitoring at 60 s, not public', () => {
    template.resourcePropertiesCountIs(
      'AWS::RDS::DBInstance',
      {
        Engine: 'aurora-postgresql',
        EnablePerformanceInsights: true,
        PerformanceInsightsKMSKeyId: key,
        MonitoringInterval: 60,
        MonitoringRoleArn: Match.anyValue(),
        PubliclyAccessible: false,
        AutoMinorVersionUpgrade: false,
        // An instance runs its cluster's version; a version of its own could only lag behind it.
        EngineVersion: Match.absent(),
      },
      3,
    );
  });

  test('minor engine upgrades are deliberate: off on the cluster as on every instance', () => {
    template.hasResourceProperties('AWS::RDS::DBCluster', { AutoMinorVersionUpgrade: false });
    template.resourcePropertiesCountIs('AWS::RDS::DBInstance', { AutoMinorVersionUpgrade: false }, 3);
  });

  test('the key is customer-managed, rotated, retained, and lets CloudWatch Logs of the region use it for the PostgreSQL log group only', () => {
    const logGroupArn = {
      'Fn::Join': [
        '',
        ['arn:', { Ref: 'AWS::Partition' }, ':logs:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, `:log-group:/aws/rds/cluster/${cluster.clusterIdentifier}/postgresql`],
      ],
    };
    template.hasResource('AWS::KMS::Key', {
      DeletionPolicy: 'Retain',
      Properties: {
        EnableKeyRotation: true,
        PendingWindowInDays: KMS_DELETION_WINDOW_DAYS,
        KeyPolicy: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Principal: { Service: { 'Fn::Join': ['', ['logs.', { Ref: 'AWS::Region' }, '.amazonaws.com']] } },
              Condition: { ArnEquals: { [LOGS_ENCRYPTION_CONTEXT_KEY]: [logGroupArn] } },
            }),
          ]),
        },
      },
    });
  });

  test('parameter group forces TLS and preloads pg_stat_statements, for the engine major', () => {
    // GIVEN
    const group = new Capture();
    template.hasResourceProperties('AWS::RDS::DBCluster', { DBClusterParameterGroupName: { Ref: group } });
    // THEN
    const params = template.findResources('AWS::RDS::DBClusterParameterGroup')[group.asString()].Properties;
    expect(params.Family).toBe('aurora-postgresql17');
    expect(params.Parameters['rds.force_ssl']).toBe('1');
    expect(params.Parameters.shared_preload_libraries.split(',')).toContain('pg_stat_statements');
  });

  test('the PostgreSQL log group exists before the cluster: named for the cluster, encrypted, retained', () => {
    // GIVEN
    const identifier = new Capture();
    template.hasResourceProperties('AWS::RDS::DBCluster', { DBClusterIdentifier: identifier });
    // THEN
    expect(identifier.asString()).toBe(cluster.clusterIdentifier);
    expect(identifier.asString()).toMatch(/^[a-z][a-z0-9-]{0,62}$/);
    template.hasResourceProperties('AWS::Logs::LogGroup', {
      LogGroupName: `/aws/rds/cluster/${identifier.asString()}/postgresql`,
      RetentionInDays: 30,
      KmsKeyId: key,
    });
    template.hasResource('AWS::RDS::DBCluster', { DependsOn: Match.arrayWith([logicalIdOf(cluster.logGroup)]) });
  });

  test('placed in the isolated subnets, with its own security group that admits nobody yet', () => {
    // GIVEN
    const groups = new Capture();
    template.hasResourceProperties('AWS::RDS::DBCluster', { VpcSecurityGroupIds: groups });
    // THEN
    template.hasResourceProperties('AWS::RDS::DBSubnetGroup', { SubnetIds: isolatedSubnetRefs(vpc) });
    expect(groups.asArray()).toEqual([getAtt(cluster.connections.securityGroups[0], 'GroupId')]);
    const sg = template.findResources('AWS::EC2::SecurityGroup')[logicalIdOf(cluster.connections.securityGroups[0])];
    expect(sg.Properties.SecurityGroupIngress).toBeUndefined();
    // allowAllOutbound: false leaves CDK's match-nothing placeholder.
    expect(sg.Properties.SecurityGroupEgress).toEqual([expect.objectContaining({ CidrIp: '255.255.255.255/32' })]);
    template.resourceCountIs('AWS::EC2::SecurityGroupIngress', 0);
  });

  test('nothing in the stack is open to 0.0.0.0/0', () => {
    const json = JSON.stringify(template.toJSON());
    expect(json).not.toContain('0.0.0.0/0');
    expect(json).not.toContain('::/0');
  });

  test('sizing is the model sizing of its instance class', () => {
    expect(cluster.instanceSpec).toBe(findInstanceClass('db.r6gd.xlarge'));
    expect(cluster.sizing).toEqual(optimizedReadsSizing(findInstanceClass('db.r6gd.xlarge')!));
    // AWS publishes 3479 for db.r6g.xlarge, the same Graviton2 and 32 GiB.
    expect(cluster.sizing.maxConnections).toBe(3479);
    expect(cluster.sizing.maxConnectionsBasis).toBe('published-same-memory');
    expect(cluster.sizing.temporaryObjectsGiB).toBe(64);
  });

  test('instance identifiers are the writer first, then the readers', () => {
    expect(cluster.instanceIdentifiers.map((id) => stack.resolve(id))).toEqual([
      ref(cluster.cluster.node.findChild('Writer')),
      ref(cluster.cluster.node.findChild('Reader1')),
      ref(cluster.cluster.node.findChild('Reader2')),
    ]);
  });

  test.each([
    ['metricCpuUtilization', 'CPUUtilization'],
    ['metricDatabaseConnections', 'DatabaseConnections'],
    ['metricFreeableMemory', 'FreeableMemory'],
    ['metricBufferCacheHitRatio', 'BufferCacheHitRatio'],
    ['metricReplicaLag', 'AuroraReplicaLag'],
    ['metricFreeLocalStorage', 'FreeLocalStorage'],
    ['metricFreeEphemeralStorage', 'FreeEphemeralStorage'],
    ['metricReadIopsEphemeralStorage', 'ReadIOPSEphemeralStorage'],
    ['metricReadLatencyEphemeralStorage', 'ReadLatencyEphemeralStorage'],
    ['metricOptimizedReadsCacheHitRatio', 'AuroraOptimizedReadsCacheHitRatio'],
  ] as const)('%s: AWS/RDS %s of one instance, with the catalog statistic', (method, metricName) => {
    // GIVEN
    const readerId = cluster.readerInstanceIdentifiers[1];
    const spec = METRIC_CATALOG.find((m) => m.scope === 'instance' && m.metricName === metricName)!;
    // WHEN
    const metric = cluster[method](readerId);
    // THEN
    expect(metric.namespace).toBe('AWS/RDS');
    expect(metric.metricName).toBe(metricName);
    expect(metric.statistic).toBe(spec.statistics[0]);
    expect(Object.keys(metric.dimensions!)).toEqual(['DBInstanceIdentifier']);
    expect(stack.resolve(metric.dimensions!.DBInstanceIdentifier)).toEqual(ref(cluster.cluster.node.findChild('Reader2')));
  });

  test('no warnings for a catalog engine version', () => {
    Annotations.fromStack(stack).hasNoWarning('*', Match.anyValue());
  });
});

describe('AuroraOptimizedReads with options', () => {
  test('instance class and reader count apply to every instance; tiers past the first reader are 2', () => {
    // GIVEN
    const { stack } = clusterStack({ instanceClass: 'db.r8gd.2xlarge', readers: 3, engineVersion: '16.13' });
    // WHEN
    const template = Template.fromStack(stack);
    // THEN
    template.resourcePropertiesCountIs('AWS::RDS::DBInstance', { DBInstanceClass: 'db.r8gd.2xlarge' }, 4);
    const tiers = Object.values(template.findResources('AWS::RDS::DBInstance')).map((r) => r.Properties.PromotionTier).sort();
    expect(tiers).toEqual([0, 1, 2, 2]);
    template.hasResourceProperties('AWS::RDS::DBCluster', { EngineVersion: '16.13' });
    template.hasResourceProperties('AWS::RDS::DBClusterParameterGroup', { Family: 'aurora-postgresql16' });
  });

  test('zero readers is a writer-only cluster', () => {
    const { stack, cluster } = clusterStack({ readers: 0 });
    Template.fromStack(stack).resourceCountIs('AWS::RDS::DBInstance', 1);
    expect(cluster.readerInstanceIdentifiers).toEqual([]);
  });

  test('deletionProtection: false, retention and a given key and identifier are honoured', () => {
    // GIVEN
    const { stack } = newStack();
    const vpc = isolatedVpc(stack, 'Vpc', '10.0.0.0/16');
    const key = new kms.Key(stack, 'MyKey', { enableKeyRotation: true });
    // WHEN
    new AuroraOptimizedReads(stack, 'Cluster', {
      vpc,
      deletionProtection: false,
      backupRetentionDays: 35,
      encryptionKey: key,
      clusterIdentifier: 'orders-db',
      logRetention: logs.RetentionDays.ONE_YEAR,
    });
    // THEN
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::RDS::DBCluster', {
      DeletionProtection: false,
      BackupRetentionPeriod: 35,
      KmsKeyId: getAtt(key, 'Arn'),
      DBClusterIdentifier: 'orders-db',
    });
    template.hasResourceProperties('AWS::Logs::LogGroup', { LogGroupName: '/aws/rds/cluster/orders-db/postgresql', RetentionInDays: 365 });
    // Only the given key: the construct makes none of its own.
    template.resourceCountIs('AWS::KMS::Key', 1);
  });

  test('extra parameters are merged with the kit parameters', () => {
    const { stack } = clusterStack({ parameters: { 'pg_stat_statements.track': 'all' } });
    Template.fromStack(stack).hasResourceProperties('AWS::RDS::DBClusterParameterGroup', {
      Parameters: { 'rds.force_ssl': '1', shared_preload_libraries: Match.stringLikeRegexp('pg_stat_statements'), 'pg_stat_statements.track': 'all' },
    });
  });

  test('requested preload libraries are loaded beside pg_stat_statements, not instead of it', () => {
    // GIVEN a user who wants another library
    const { stack } = clusterStack({ parameters: { shared_preload_libraries: 'pg_hint_plan, pg_stat_statements' } });
    // THEN both are loaded, pg_stat_statements once
    Template.fromStack(stack).hasResourceProperties('AWS::RDS::DBClusterParameterGroup', {
      Parameters: Match.objectLike({ shared_preload_libraries: 'pg_stat_statements,pg_hint_plan' }),
    });
  });

  test('a parameter override that turns TLS off is rejected', () => {
    // WHEN / THEN
    expect(() => clusterStack({ parameters: { 'rds.force_ssl': '0' } })).toThrow(
      kitError('Stack/Cluster', rejectionMessage('parameters-keep-tls', { parameters: { 'rds.force_ssl': '0' } })),
    );
  });

  test('autoMinorVersionUpgrade: true turns upgrades on for the cluster and every instance, and synth says what to do after one', () => {
    // GIVEN
    const { stack } = clusterStack({ autoMinorVersionUpgrade: true });
    const template = Template.fromStack(stack);
    // THEN
    template.hasResourceProperties('AWS::RDS::DBCluster', { AutoMinorVersionUpgrade: true });
    template.resourcePropertiesCountIs('AWS::RDS::DBInstance', { AutoMinorVersionUpgrade: true }, 3);
    Annotations.fromStack(stack).hasWarning('/Stack/Cluster', Match.stringLikeRegexp(escapeRegExp(autoMinorVersionUpgradeWarning(DEFAULT_ENGINE_VERSION))));
  });

  test('an unknown but well-formed future version synthesizes with a warning', () => {
    // GIVEN
    const { stack, cluster } = clusterStack({ engineVersion: '17.99' });
    // aws-cdk-lib's built-in template validation does not know 17.99 either; it prints a warning report.
    const report = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    // THEN
    Annotations.fromStack(stack).hasWarning(
      '/Stack/Cluster',
      Match.stringLikeRegexp("engineVersion 17\\.99 is not in the kit's catalog of offered versions"),
    );
    Template.fromStack(stack).hasResourceProperties('AWS::RDS::DBCluster', { EngineVersion: '17.99' });
    expect(cluster.engineVersion).toBe('17.99');
    expect(report.mock.calls.flat().join('\n')).toMatch(/EngineVersion: '17\.99' is not one of/);
    report.mockRestore();
  });
});

describe('AuroraOptimizedReads validation', () => {
  const build = (props: Partial<AuroraOptimizedReadsProps>) => () => clusterStack(props);

  test('instanceClass without NVMe names the class and the Optimized Reads families', () => {
    expect(build({ instanceClass: 'db.r6g.xlarge' })).toThrow(
      kitError(
        'Stack/Cluster',
        'instanceClass db.r6g.xlarge has no local NVMe: Optimized Reads needs db.r6gd, db.r6id, db.r8gd (e.g. db.r6gd.xlarge)',
      ),
    );
  });

  test('instanceClass of a size Aurora does not offer', () => {
    expect(build({ instanceClass: 'db.r6gd.large' })).toThrow(
      kitError('Stack/Cluster', rejectionMessage('instance-class', { instanceClass: 'db.r6gd.large' })),
    );
  });

  test('engineVersion below the family floor', () => {
    expect(build({ engineVersion: '14.6' })).toThrow(
      kitError('Stack/Cluster', 'engineVersion 14.6 is below the Optimized Reads floor 14.9 for r6gd: use 14.22 or later'),
    );
    expect(build({ instanceClass: 'db.r8gd.xlarge', engineVersion: '16.2' })).toThrow(
      kitError('Stack/Cluster', rejectionMessage('engine-version', { engineVersion: '16.2', instanceClass: 'db.r8gd.xlarge' })),
    );
  });

  test('a deprecated engine version', () => {
    expect(build({ engineVersion: '15.4' })).toThrow(
      kitError('Stack/Cluster', 'engineVersion 15.4 is deprecated and no longer offered by Amazon RDS: use 15.17'),
    );
  });

  test('a malformed or too old engine version', () => {
    expect(build({ engineVersion: '17' })).toThrow(kitError('Stack/Cluster', rejectionMessage('engine-version', { engineVersion: '17' })));
    expect(build({ engineVersion: '13.9' })).toThrow(
      kitError('Stack/Cluster', rejectionMessage('engine-version', { engineVersion: '13.9', instanceClass: 'db.r6gd.xlarge' })),
    );
  });

  test.each(['vec--tors', 'Vectors', 'a'.repeat(51)])('clusterIdentifier %s is not a valid identifier', (clusterIdentifier) => {
    expect(build({ clusterIdentifier })).toThrow(kitError('Stack/Cluster', rejectionMessage('cluster-identifier', { clusterIdentifier })));
  });

  test.each([0, 7])('monitoringInterval of %s s is not an enhanced monitoring interval', (seconds) => {
    expect(build({ monitoringInterval: Duration.seconds(seconds) })).toThrow(
      kitError('Stack/Cluster', rejectionMessage('monitoring-interval', { monitoringInterval: seconds })),
    );
  });

  test.each([16, -1, 1.5])('readers %s is out of range', (readers) => {
    expect(build({ readers })).toThrow(kitError('Stack/Cluster', rejectionMessage('readers', { readers })));
  });

  test.each([6, 36])('backupRetentionDays %s is out of range', (backupRetentionDays) => {
    expect(build({ backupRetentionDays })).toThrow(
      kitError('Stack/Cluster', rejectionMessage('backup-retention', { backupRetentionDays })),
    );
  });

  test('every violation is reported at once, one per line', () => {
    expect(build({ instanceClass: 'db.r6g.xlarge', readers: 16, backupRetentionDays: 36 })).toThrow(
      kitError(
        'Stack/Cluster',
        rejectionMessage('instance-class', { instanceClass: 'db.r6g.xlarge' }),
        rejectionMessage('readers', { readers: 16 }),
        rejectionMessage('backup-retention', { backupRetentionDays: 36 }),
      ),
    );
  });

  test('the error names the full construct path of a nested cluster', () => {
    // GIVEN
    const { stack } = newStack('Prod');
    const vpc = isolatedVpc(stack, 'Vpc', '10.0.0.0/16');
    const data = new Construct(stack, 'Data');
    // WHEN / THEN
    expect(() => new AuroraOptimizedReads(data, 'Orders', { vpc, readers: 16 })).toThrow(
      kitError('Prod/Data/Orders', rejectionMessage('readers', { readers: 16 })),
    );
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
