import { App, Names, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { LambdaConsumer } from '../../lib/lambda-consumer';
import { Dashboard, DashboardProps } from '../../lib/dashboard';
import { DEFAULT_ALARM_THRESHOLDS, ENGINE_SCOPES, METRIC_CATALOG } from '../../lib/model';
import { AuroraOptimizedReads } from '../../lib/aurora-optimized-reads';
import { RdsProxy } from '../../lib/rds-proxy';
import { RdsProxyEndpoint } from '../../lib/rds-proxy-endpoint';
import { getAtt, isolatedVpc, joinIntrinsic, kitError, logicalIdOf, newStack, ref } from '../helpers/cdk';

/** A metric line of a graph widget: [namespace, metricName, dim1, value1, ..., options?]. */
type MetricLine = Array<string | Record<string, unknown>>;

interface Widget {
  type: string;
  properties: { title?: string; markdown?: string; metrics?: MetricLine[] };
}

function dashboardWidgets(template: Template): Widget[] {
  const dashboards = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
  expect(dashboards).toHaveLength(1);
  return (JSON.parse(joinIntrinsic(dashboards[0].Properties.DashboardBody)) as { widgets: Widget[] }).widgets;
}

/** The lines of every graph of `metricName`, with their dimensions as an object. */
function linesOf(widgets: Widget[], metricName: string): Array<{ namespace: string; dimensions: Record<string, string>; options: Record<string, unknown> }> {
  return widgets
    .flatMap((w) => w.properties.metrics ?? [])
    .filter((line) => line[1] === metricName)
    .map((line) => {
      const strings = line.filter((p): p is string => typeof p === 'string');
      const options = { ...(line.find((p) => typeof p === 'object') ?? {}) } as Record<string, unknown>;
      // A dashboard line leaves out `stat` when it is CloudWatch's default, Average.
      options.stat ??= 'Average';
      const dimensions: Record<string, string> = {};
      for (let i = 2; i + 1 < strings.length; i += 2) dimensions[strings[i]] = strings[i + 1];
      return { namespace: strings[0], dimensions, options };
    });
}

/** The catalog an RDS Proxy deployment charts: every entry but the PgBouncer engine's. */
const RDS_PROXY_CATALOG = METRIC_CATALOG.filter((m) => !ENGINE_SCOPES.PGBOUNCER.includes(m.scope));

/** How a `{ Ref }` appears inside the joined dashboard body. */
const refText = (construct: Parameters<typeof logicalIdOf>[0]) => `{{Ref:${logicalIdOf(construct)}}}`;

describe('Dashboard over the whole data path', () => {
  let stack: Stack;
  let cluster: AuroraOptimizedReads;
  let proxy: RdsProxy;
  let readOnly: RdsProxyEndpoint;
  let readWrite: RdsProxyEndpoint;
  let functions: LambdaConsumer[];
  let dashboard: Dashboard;
  let template: Template;
  let widgets: Widget[];

  beforeAll(() => {
    // GIVEN
    ({ stack } = newStack());
    const dataVpc = isolatedVpc(stack, 'DataVpc', '10.10.0.0/16');
    const consumerVpc = isolatedVpc(stack, 'ConsumerVpc', '10.20.0.0/16');
    cluster = new AuroraOptimizedReads(stack, 'Cluster', { vpc: dataVpc, readers: 2 });
    proxy = new RdsProxy(stack, 'Proxy', { cluster });
    readOnly = proxy.addReadOnlyEndpoint('ReadOnly', { vpc: consumerVpc, endpointName: 'consumer-ro' }) as RdsProxyEndpoint;
    readWrite = proxy.addReadWriteEndpoint('ReadWrite', { vpc: consumerVpc, endpointName: 'consumer-rw' }) as RdsProxyEndpoint;
    functions = [
      new LambdaConsumer(stack, 'Reader', { endpoint: readOnly, dbUser: 'app', databaseName: 'app' }),
      new LambdaConsumer(stack, 'Writer', { endpoint: readWrite, dbUser: 'app', databaseName: 'app' }),
    ];
    // WHEN
    dashboard = new Dashboard(stack, 'Dashboard', { cluster, proxy, functions });
    template = Template.fromStack(stack);
    widgets = dashboardWidgets(template);
  });

  test.each(RDS_PROXY_CATALOG.map((m) => [m.scope, m.metricName, m] as const))('charts %s %s', (_scope, metricName, spec) => {
    // THEN: at least one line per statistic, in the right namespace
    const lines = linesOf(widgets, metricName).filter((l) => l.namespace === spec.namespace);
    expect(lines.length).toBeGreaterThan(0);
    for (const statistic of spec.statistics) {
      expect(lines.some((l) => l.options.stat === statistic)).toBe(true);
    }
  });

  test('the body mentions every catalog metric name of its engine, and no PgBouncer engine namespace', () => {
    const body = joinIntrinsic(Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0].Properties.DashboardBody);
    for (const m of RDS_PROXY_CATALOG) expect(body).toContain(`"${m.metricName}"`);
    expect(widgets.flatMap((w) => w.properties.metrics ?? []).map((line) => line[0])).not.toEqual(expect.arrayContaining([expect.stringMatching(/PgBouncer|NetworkELB/)]));
  });

  test.each(METRIC_CATALOG.filter((m) => m.optimizedReadsOnly).map((m) => [m.metricName, m.instances ?? 'all']))(
    'Optimized Reads metric %s has one line per instance that publishes it (%s)',
    (metricName, instances) => {
      const writer = refText(cluster.cluster.node.findChild('Writer'));
      const readers = [refText(cluster.cluster.node.findChild('Reader1')), refText(cluster.cluster.node.findChild('Reader2'))];
      const ids = linesOf(widgets, metricName).map((l) => l.dimensions.DBInstanceIdentifier);
      expect(ids.sort()).toEqual((instances === 'writer' ? [writer] : [writer, ...readers]).sort());
      expect(widgets.some((w) => w.properties.title === `${metricName} (Optimized Reads)`)).toBe(true);
    },
  );

  test('the tiered cache hit ratio is charted for the writer only: AWS publishes it for the primary', () => {
    const ids = linesOf(widgets, 'AuroraOptimizedReadsCacheHitRatio').map((l) => l.dimensions.DBInstanceIdentifier);
    expect(ids).toEqual([refText(cluster.cluster.node.findChild('Writer'))]);
  });

  test('NVMe storage left is charted as FreeEphemeralStorage on every instance, beside FreeLocalStorage', () => {
    expect(linesOf(widgets, 'FreeEphemeralStorage')).toHaveLength(3);
    expect(linesOf(widgets, 'FreeLocalStorage')).toHaveLength(3);
  });

  test('NVMe read latency is charted in seconds, the unit AWS publishes it in', () => {
    const graph = widgets.find((w) => w.properties.title === 'ReadLatencyEphemeralStorage (Optimized Reads)') as unknown as { properties: { yAxis: { left: { label: string } } } };
    expect(graph.properties.yAxis.left.label).toBe('Seconds');
  });

  test('replica lag is charted for the readers only', () => {
    const ids = linesOf(widgets, 'AuroraReplicaLag').map((l) => l.dimensions.DBInstanceIdentifier);
    expect(ids.sort()).toEqual([refText(cluster.cluster.node.findChild('Reader1')), refText(cluster.cluster.node.findChild('Reader2'))].sort());
  });

  test.each(METRIC_CATALOG.filter((m) => m.scope === 'proxy-endpoint').map((m) => [m.metricName]))(
    'proxy endpoint metric %s carries ProxyName and EndpointName, one line per endpoint',
    (metricName) => {
      const lines = linesOf(widgets, metricName);
      for (const l of lines) expect(Object.keys(l.dimensions).sort()).toEqual(['EndpointName', 'ProxyName']);
      expect(new Set(lines.map((l) => l.dimensions.ProxyName))).toEqual(new Set([refText(proxy.proxy)]));
      expect(new Set(lines.map((l) => l.dimensions.EndpointName))).toEqual(new Set(['default', 'consumer-ro', 'consumer-rw']));
    },
  );

  test.each(METRIC_CATALOG.filter((m) => m.scope === 'proxy-target-role').map((m) => [m.metricName]))(
    'proxy target-role metric %s is split READ_WRITE / READ_ONLY',
    (metricName) => {
      const lines = linesOf(widgets, metricName).filter((l) => 'TargetRole' in l.dimensions);
      expect(lines.map((l) => l.dimensions.TargetRole).sort()).toEqual(['READ_ONLY', 'READ_WRITE']);
      for (const l of lines) expect(l.dimensions.TargetGroup).toBe('default');
    },
  );

  test('Lambda metrics have one line per function (and statistic)', () => {
    const lines = linesOf(widgets, 'Duration');
    expect(lines.map((l) => `${l.dimensions.FunctionName} ${String(l.options.stat)}`).sort()).toEqual(
      functions.flatMap((f) => ['p50', 'p99'].map((stat) => `${refText(f.function)} ${stat}`)).sort(),
    );
  });

  test('alarms: CPU, memory and NVMe storage per instance, lag per reader, pool and pinning per role, errors and throttles per function', () => {
    // GIVEN
    const instances = cluster.instanceIdentifiers.length;
    const readers = cluster.readerInstanceIdentifiers.length;
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'));
    const count = (metricName: string) => alarms.filter((a) => a.Properties.MetricName === metricName).length;
    // THEN
    expect(count('CPUUtilization')).toBe(instances);
    expect(count('FreeableMemory')).toBe(instances);
    expect(count('FreeEphemeralStorage')).toBe(instances);
    expect(count('FreeLocalStorage')).toBe(0);
    expect(count('AuroraReplicaLag')).toBe(readers);
    expect(count('DatabaseConnectionsCurrentlySessionPinned')).toBe(2);
    expect(alarms.filter((a) => a.Properties.Metrics !== undefined)).toHaveLength(2); // pool utilization, per role
    expect(count('Errors')).toBe(functions.length);
    expect(count('Throttles')).toBe(functions.length);
    expect(alarms).toHaveLength(dashboard.alarms.length);
    expect(alarms).toHaveLength(3 * instances + readers + 2 * 2 + 2 * functions.length);
  });

  test('default thresholds and directions', () => {
    const t = DEFAULT_ALARM_THRESHOLDS;
    const high = 'GreaterThanOrEqualToThreshold';
    const low = 'LessThanOrEqualToThreshold';
    template.allResourcesProperties('AWS::CloudWatch::Alarm', { TreatMissingData: 'notBreaching' });
    for (const [metricName, threshold, comparison, statistic] of [
      ['CPUUtilization', t.cpuUtilizationPercent, high, 'Average'],
      ['FreeableMemory', t.freeableMemoryBytes, low, 'Minimum'],
      ['FreeEphemeralStorage', t.freeEphemeralStorageBytes, low, 'Minimum'],
      ['AuroraReplicaLag', t.replicaLagMs, high, 'Maximum'],
      ['DatabaseConnectionsCurrentlySessionPinned', t.pinnedConnections, high, 'Sum'],
      ['Errors', t.functionErrors, high, 'Sum'],
      ['Throttles', t.functionThrottles, high, 'Sum'],
    ] as const) {
      const matching = Object.values(template.findResources('AWS::CloudWatch::Alarm', { Properties: { MetricName: metricName } }));
      for (const a of matching) {
        expect([metricName, a.Properties.Threshold, a.Properties.ComparisonOperator, a.Properties.Statistic]).toEqual([
          metricName,
          threshold,
          comparison,
          statistic,
        ]);
      }
    }
    expect(t.cpuUtilizationPercent).toBe(80);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Threshold: t.proxyPoolUtilizationPercent,
      ComparisonOperator: high,
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: '100 * connections / IF(allowed > 0, allowed, 1)' }),
        Match.objectLike({ Id: 'connections', MetricStat: Match.objectLike({ Metric: Match.objectLike({ MetricName: 'DatabaseConnections' }), Stat: 'Sum' }) }),
        // RDS Proxy publishes per proxy host: Sum on both sides, or utilization reads N times too high.
        Match.objectLike({ Id: 'allowed', MetricStat: Match.objectLike({ Metric: Match.objectLike({ MetricName: 'MaxDatabaseConnectionsAllowed' }), Stat: 'Sum' }) }),
      ]),
    });
  });

  test('every alarm notifies the topic on ALARM and on OK', () => {
    const topic = ref(dashboard.alarmTopic);
    template.allResourcesProperties('AWS::CloudWatch::Alarm', { AlarmActions: [topic], OKActions: [topic] });
  });

  test('every alarm is named with the prefix the topic policies admit', () => {
    const stack = Stack.of(dashboard);
    const prefix = Names.uniqueResourceName(dashboard, { maxLength: 128, separator: '-' });
    expect(dashboard.alarmNamePrefix).toBe(`${prefix}-`);
    for (const alarm of Object.values(template.findResources('AWS::CloudWatch::Alarm'))) {
      expect(stack.resolve(alarm.Properties.AlarmName)).toMatch(new RegExp(`^${prefix}-[A-Za-z0-9]+$`));
    }
  });

  test('the topic is KMS-encrypted, CloudWatch may use the key and publish for these alarms only, and publishing requires TLS', () => {
    // GIVEN
    const key = dashboard.node.findChild('AlarmTopicKey');
    const conditions = {
      StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
      ArnLike: {
        'aws:SourceArn': {
          'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':cloudwatch:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, `:alarm:${dashboard.alarmNamePrefix}*`]],
        },
      },
    };
    // THEN
    template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: getAtt(key, 'Arn') });
    template.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Allow',
            Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Condition: conditions,
          }),
        ]),
      },
    });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [ref(dashboard.alarmTopic)],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 'sns:Publish',
            Principal: '*',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
          // The topic policy replaces SNS's default one, so without this CloudWatch could not publish.
          Match.objectLike({
            Effect: 'Allow',
            Action: 'sns:Publish',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Resource: ref(dashboard.alarmTopic),
            Condition: conditions,
          }),
        ]),
      },
    });
  });
});

describe('Dashboard options', () => {
  function clusterOnly(props: Partial<DashboardProps> = {}) {
    const { stack } = newStack();
    const vpc = isolatedVpc(stack, 'Vpc', '10.10.0.0/16');
    const cluster = new AuroraOptimizedReads(stack, 'Cluster', { vpc, readers: 1 });
    return { stack, cluster, build: () => new Dashboard(stack, 'Dashboard', { cluster, ...props }) };
  }

  test('overridden thresholds apply; the others keep their defaults', () => {
    // GIVEN
    const { stack, build } = clusterOnly({ thresholds: { cpuUtilizationPercent: 65, replicaLagMs: 250 } });
    // WHEN
    const dashboard = build();
    const template = Template.fromStack(stack);
    // THEN
    template.resourcePropertiesCountIs('AWS::CloudWatch::Alarm', { MetricName: 'CPUUtilization', Threshold: 65 }, 2);
    template.resourcePropertiesCountIs('AWS::CloudWatch::Alarm', { MetricName: 'AuroraReplicaLag', Threshold: 250 }, 1);
    template.resourcePropertiesCountIs('AWS::CloudWatch::Alarm', { MetricName: 'FreeableMemory', Threshold: DEFAULT_ALARM_THRESHOLDS.freeableMemoryBytes }, 2);
    expect(dashboard.thresholds).toEqual({ ...DEFAULT_ALARM_THRESHOLDS, cpuUtilizationPercent: 65, replicaLagMs: 250 });
  });

  test('without proxy or functions: instance widgets and alarms only', () => {
    const { stack, build } = clusterOnly();
    build();
    const template = Template.fromStack(stack);
    const widgets = dashboardWidgets(template);
    expect(linesOf(widgets, 'ClientConnections')).toEqual([]);
    expect(linesOf(widgets, 'Invocations')).toEqual([]);
    expect(linesOf(widgets, 'CPUUtilization')).toHaveLength(2);
    template.resourceCountIs('AWS::CloudWatch::Alarm', 3 * 2 + 1);
  });

  test('a given topic is used, and no topic or key is created', () => {
    // GIVEN
    const { stack, cluster } = clusterOnly();
    const topic = new sns.Topic(stack, 'OpsTopic');
    // WHEN
    const dashboard = new Dashboard(stack, 'Dashboard', { cluster, alarmTopic: topic });
    // THEN
    const template = Template.fromStack(stack);
    expect(dashboard.alarmTopic).toBe(topic);
    expect(dashboard.node.tryFindChild('AlarmTopicKey')).toBeUndefined();
    template.resourceCountIs('AWS::SNS::Topic', 1);
    template.allResourcesProperties('AWS::CloudWatch::Alarm', { AlarmActions: [ref(topic)], OKActions: [ref(topic)] });
  });

  test('two consumers with the same id under different parents get distinct alarms and labels', () => {
    // GIVEN (no bundling: only the construct tree is inspected)
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Stack');
    const vpc = isolatedVpc(stack, 'Vpc', '10.10.0.0/16');
    const cluster = new AuroraOptimizedReads(stack, 'Cluster', { vpc, readers: 1 });
    const proxy = new RdsProxy(stack, 'Proxy', { cluster });
    const endpoint = proxy.addReadOnlyEndpoint('ReadOnly', { vpc });
    const functions = ['TeamA', 'TeamB'].map(
      (team) => new LambdaConsumer(new Construct(stack, team), 'Reader', { endpoint, dbUser: team.toLowerCase(), databaseName: 'app' }),
    );
    // WHEN
    const dashboard = new Dashboard(stack, 'Dashboard', { cluster, proxy, functions });
    // THEN
    const errorAlarms = dashboard.alarms.filter((a) => a.node.id.endsWith('ErrorsAlarm')).map((a) => a.node.id);
    expect(errorAlarms).toHaveLength(2);
    expect(new Set(errorAlarms).size).toBe(2);
    const labels = dashboard['metricsFor'](METRIC_CATALOG.find((m) => m.metricName === 'Errors')!).map((m) => m.toMetricConfig().renderingProperties?.label);
    expect(new Set(labels).size).toBe(2);
  });

  test('a percentage threshold of 150 is rejected', () => {
    const { build } = clusterOnly({ thresholds: { cpuUtilizationPercent: 150 } });
    expect(build).toThrow(kitError('Stack/Dashboard', 'cpuUtilizationPercent 150 is not a percentage: use a value above 0 and at most 100'));
  });

  test('a negative threshold is rejected', () => {
    const { build } = clusterOnly({ thresholds: { replicaLagMs: -5 } });
    expect(build).toThrow(kitError('Stack/Dashboard', 'replicaLagMs -5 is negative: use 0 or more'));
  });

  test('every bad threshold at once', () => {
    const { build } = clusterOnly({ thresholds: { proxyPoolUtilizationPercent: 0, functionErrors: -1 } });
    expect(build).toThrow(
      kitError(
        'Stack/Dashboard',
        'proxyPoolUtilizationPercent 0 is not a percentage: use a value above 0 and at most 100',
        'functionErrors -1 is negative: use 0 or more',
      ),
    );
  });
});
