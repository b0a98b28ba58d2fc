import { Stack } from 'aws-cdk-lib';
import { Capture, Match, Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { PoolMode } from '../../lib';
import { EndpointRole } from '../../lambda/src/environment';
import { Dashboard } from '../../lib/dashboard';
import { DEFAULT_ALARM_THRESHOLDS, ENGINE_SCOPES, METRIC_CATALOG } from '../../lib/model';
import { POOLER_METRICS_NAMESPACE } from '../../lib/model/pgbouncer-metrics';
import { AuroraOptimizedReads } from '../../lib/aurora-optimized-reads';
import { PgBouncerProxy } from '../../lib/pgbouncer-proxy';
import type { PgBouncerProxyProps } from '../../lib/pgbouncer-proxy-props';
import { IPoolingTier, ProxyEngine } from '../../lib/pooling-tier';
import { getAtt, isolatedVpc, joinIntrinsic, kitError, newStack } from '../helpers/cdk';

/** A cluster of a writer and `readers` readers with a PgBouncer fleet in front of it. */
function fleetStack(props: Partial<PgBouncerProxyProps> = {}, readers = 2) {
  const { stack } = newStack();
  const vpc = isolatedVpc(stack, 'DataVpc', '10.10.0.0/16');
  const cluster = new AuroraOptimizedReads(stack, 'Cluster', { vpc, readers });
  const packages = { bucket: s3.Bucket.fromBucketName(stack, 'Packages', 'kit-packages'), key: 'pgbouncer/packages.tar' };
  const create = () => new PgBouncerProxy(stack, 'Pooler', { cluster, packages, ...props });
  return { stack, cluster, create };
}

/** `Fn::Select` of the first DNS label of an endpoint attribute: the Target the hosts publish for that server. */
const firstLabel = (attribute: { 'Fn::GetAtt': [string, string] }) => ({ 'Fn::Select': [0, { 'Fn::Split': ['.', attribute] }] });

/** The dimensions of an alarm as CloudFormation lists them. */
const dimensions = (entries: Record<string, unknown>) => Object.entries(entries).map(([Name, Value]) => ({ Name, Value }));

const PGBOUNCER_CATALOG = METRIC_CATALOG.filter((m) => ENGINE_SCOPES.PGBOUNCER.includes(m.scope));

describe('Dashboard over a PgBouncer fleet', () => {
  let stack: Stack;
  let cluster: AuroraOptimizedReads;
  let pooler: PgBouncerProxy;
  let dashboard: Dashboard;
  let template: Template;
  let lines: unknown[][];

  beforeAll(() => {
    // GIVEN a fleet in front of a writer and two readers
    let create: () => PgBouncerProxy;
    ({ stack, cluster, create } = fleetStack({ fleetName: 'kit-fleet' }));
    pooler = create();
    // WHEN it is charted with two thresholds of its own
    dashboard = new Dashboard(stack, 'Dashboard', { cluster, proxy: pooler, thresholds: { poolerClientsWaiting: 25, poolerMaxWaitSeconds: 2 } });
    template = Template.fromStack(stack);
    const body = Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0].Properties.DashboardBody;
    lines = (JSON.parse(joinIntrinsic(body)) as { widgets: Array<{ properties: { metrics?: unknown[][] } }> }).widgets.flatMap((w) => w.properties.metrics ?? []);
  });

  test.each(PGBOUNCER_CATALOG.map((m) => [m.scope, m.metricName, m] as const))('charts %s %s at its statistic', (_scope, metricName, spec) => {
    // THEN
    const charted = lines.filter((l) => l[0] === spec.namespace && l[1] === metricName);
    expect(charted.length).toBeGreaterThan(0);
    for (const statistic of spec.statistics) expect(charted.some((l) => (l.find((p) => typeof p === 'object') as { stat?: string }).stat === statistic)).toBe(true);
  });

  test('no RDS Proxy lines: the dashboard charts the engine it is given', () => {
    expect(lines.filter((l) => l.includes('ProxyName'))).toEqual([]);
  });

  test('one line per pool target of each listener: the writer through READ_WRITE, each reader and then the writer instance (a reader after a failover) through READ_ONLY', () => {
    // THEN
    const clientLines = lines.filter((l) => l[0] === POOLER_METRICS_NAMESPACE && l[1] === 'ClientConnections');
    expect(clientLines.map((l) => [l[2], l[3], l[4], l[5], l[6]])).toEqual([
      ['Fleet', 'kit-fleet', 'Listener', 'READ_WRITE', 'Target'],
      ['Fleet', 'kit-fleet', 'Listener', 'READ_ONLY', 'Target'],
      ['Fleet', 'kit-fleet', 'Listener', 'READ_ONLY', 'Target'],
      ['Fleet', 'kit-fleet', 'Listener', 'READ_ONLY', 'Target'],
    ]);
    expect(clientLines.map((l) => (l[8] as { label: string }).label)).toEqual(['READ_WRITE writer', 'READ_ONLY reader-1', 'READ_ONLY reader-2', 'READ_ONLY reader-3']);
  });

  test('waiting clients and max wait alarm per pool target at the given thresholds, each Target the first label of its server\'s endpoint', () => {
    // GIVEN the endpoints the hosts pool for, in the order the lines are
    const endpoints = [getAtt(cluster.cluster.node.defaultChild as Construct, 'Endpoint.Address'), ...['Reader1', 'Reader2', 'Writer'].map((id) => getAtt(cluster.cluster.node.findChild(id), 'Endpoint.Address'))];
    const series = [
      ['PoolerReadWrite', 'READ_WRITE', endpoints[0]],
      ['PoolerReadOnly1', 'READ_ONLY', endpoints[1]],
      ['PoolerReadOnly2', 'READ_ONLY', endpoints[2]],
      // The writer instance: the promoted reader's pools pool for it after a failover.
      ['PoolerReadOnly3', 'READ_ONLY', endpoints[3]],
    ] as const;
    // THEN
    for (const [alarmName, listener, endpoint] of series) {
      for (const [metricName, statistic, threshold] of [
        ['ClientsWaiting', 'Sum', 25],
        ['MaxWait', 'Maximum', 2],
      ] as const) {
        template.hasResourceProperties('AWS::CloudWatch::Alarm', {
          AlarmName: `${dashboard.alarmNamePrefix}${alarmName}${metricName}`,
          Namespace: POOLER_METRICS_NAMESPACE,
          MetricName: metricName,
          Statistic: statistic,
          Threshold: threshold,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          Period: 60,
          Dimensions: dimensions({ Fleet: 'kit-fleet', Listener: listener, Target: firstLabel(endpoint) }),
        });
      }
    }
    template.resourcePropertiesCountIs('AWS::CloudWatch::Alarm', { Namespace: POOLER_METRICS_NAMESPACE }, 8);
  });

  test('unhealthy hosts alarm per listener\'s target group, at the default threshold, on the load balancer\'s own metric', () => {
    for (const [alarmName, listener] of [
      ['LoadBalancerReadWrite', EndpointRole.READ_WRITE],
      ['LoadBalancerReadOnly', EndpointRole.READ_ONLY],
    ] as const) {
      // GIVEN
      const targetGroup = new Capture();
      // THEN
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        AlarmName: `${dashboard.alarmNamePrefix}${alarmName}UnhealthyHosts`,
        Namespace: 'AWS/NetworkELB',
        MetricName: 'UnHealthyHostCount',
        Statistic: 'Maximum',
        Threshold: DEFAULT_ALARM_THRESHOLDS.poolerUnhealthyHosts,
        Dimensions: Match.arrayWith([{ Name: 'LoadBalancer', Value: getAtt(pooler.loadBalancer, 'LoadBalancerFullName') }, { Name: 'TargetGroup', Value: targetGroup }]),
      });
      expect(targetGroup.asObject()).toEqual(getAtt(pooler.targetGroup(listener), 'TargetGroupFullName'));
    }
    template.resourcePropertiesCountIs('AWS::CloudWatch::Alarm', { Namespace: 'AWS/NetworkELB' }, 2);
  });

  test('missing hosts alarm per listener\'s target group: the healthy hosts below the fleet\'s, no data counting as missing (powered-off or terminated hosts are neither healthy nor unhealthy)', () => {
    for (const [alarmName, listener] of [
      ['LoadBalancerReadWrite', EndpointRole.READ_WRITE],
      ['LoadBalancerReadOnly', EndpointRole.READ_ONLY],
    ] as const) {
      // THEN
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        AlarmName: `${dashboard.alarmNamePrefix}${alarmName}MissingHosts`,
        Metrics: [
          Match.objectLike({ Id: 'expr_1', Expression: `${pooler.hosts} - healthy` }),
          Match.objectLike({
            Id: 'healthy',
            MetricStat: Match.objectLike({
              Stat: 'Minimum',
              Metric: { Namespace: 'AWS/NetworkELB', MetricName: 'HealthyHostCount', Dimensions: [{ Name: 'LoadBalancer', Value: getAtt(pooler.loadBalancer, 'LoadBalancerFullName') }, { Name: 'TargetGroup', Value: getAtt(pooler.targetGroup(listener), 'TargetGroupFullName') }] },
            }),
          }),
        ],
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        Threshold: DEFAULT_ALARM_THRESHOLDS.poolerMissingHosts,
        TreatMissingData: 'breaching',
      });
    }
    expect(pooler.hosts).toBe(2);
  });

  test('GIVEN a fleet of three hosts and a threshold of two WHEN charted THEN its missing hosts alarms compare 3 - healthy with 2', () => {
    // GIVEN
    const { stack: other, cluster: otherCluster, create: createOther } = fleetStack({ hosts: 3 });
    // WHEN
    new Dashboard(other, 'Dashboard', { cluster: otherCluster, proxy: createOther(), thresholds: { poolerMissingHosts: 2 } });
    // THEN
    const missing = Object.values(Template.fromStack(other).findResources('AWS::CloudWatch::Alarm')).filter((a) => String(a.Properties.AlarmName).endsWith('MissingHosts'));
    expect(missing.map((a) => [(a.Properties.Metrics as Array<{ Expression?: string }>)[0].Expression, a.Properties.Threshold])).toEqual([
      ['3 - healthy', 2],
      ['3 - healthy', 2],
    ]);
  });

  test('alarms: the instances\' and the fleet\'s, nothing of RDS Proxy', () => {
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'));
    // The only expression alarms: the fleet's MissingHosts (RDS Proxy's pool utilization is one too).
    expect(alarms.filter((a) => a.Properties.Metrics !== undefined).map((a) => String(a.Properties.AlarmName).replace(dashboard.alarmNamePrefix, '')).sort()).toEqual([
      'LoadBalancerReadOnlyMissingHosts',
      'LoadBalancerReadWriteMissingHosts',
    ]);
    expect(alarms).toHaveLength(3 * 3 + 2 + 2 * 4 + 2 + 2);
  });
});

describe('Dashboard over a PgBouncer fleet with a session-pooling endpoint', () => {
  test('GIVEN a READ_WRITE endpoint in session pooling added before the dashboard WHEN charted THEN its listener\'s pools and target group have lines and alarms of their own (Listener READ_WRITE_SESSION), and no read-only session listener is charted', () => {
    // GIVEN
    const { stack, cluster, create } = fleetStack({ fleetName: 'kit-fleet' });
    const pooler = create();
    const vpc = isolatedVpc(stack, 'ConsumerVpc', '10.30.0.0/16');
    pooler.addEndpoint('Locks', { vpc, role: EndpointRole.READ_WRITE, poolMode: PoolMode.SESSION });
    // WHEN
    const dashboard = new Dashboard(stack, 'Dashboard', { cluster, proxy: pooler });
    const template = Template.fromStack(stack);
    // THEN
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: `${dashboard.alarmNamePrefix}PoolerReadWriteSessionClientsWaiting`,
      Dimensions: dimensions({ Fleet: 'kit-fleet', Listener: 'READ_WRITE_SESSION', Target: firstLabel(getAtt(cluster.cluster.node.defaultChild as Construct, 'Endpoint.Address')) }),
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: `${dashboard.alarmNamePrefix}LoadBalancerReadWriteSessionUnhealthyHosts`,
      Dimensions: Match.arrayWith([{ Name: 'TargetGroup', Value: getAtt(pooler.targetGroup(EndpointRole.READ_WRITE, PoolMode.SESSION), 'TargetGroupFullName') }]),
    });
    const names = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a) => String(a.Properties.AlarmName));
    expect(names.filter((n) => n.includes('Session')).map((n) => n.slice(dashboard.alarmNamePrefix.length)).sort()).toEqual([
      'LoadBalancerReadWriteSessionMissingHosts',
      'LoadBalancerReadWriteSessionUnhealthyHosts',
      'PoolerReadWriteSessionClientsWaiting',
      'PoolerReadWriteSessionMaxWait',
    ]);
  });
});

describe('PgBouncerProxy metrics', () => {
  test('the helpers: the catalog\'s statistic, the listener and target given, READ_WRITE and its one target by default', () => {
    // GIVEN
    const { stack, create } = fleetStack({ fleetName: 'kit-fleet' });
    const pooler = create();
    const [reader1] = pooler.poolTargets(EndpointRole.READ_ONLY);
    // WHEN
    const waiting = pooler.metricClientsWaiting({ listener: EndpointRole.READ_ONLY, target: reader1 });
    const maxWait = pooler.metricMaxWait();
    const custom = pooler.metric('ServerConnections', { listener: EndpointRole.READ_ONLY, target: reader1, statistic: 'Average' });
    const unhealthy = pooler.metricUnHealthyHostCount(EndpointRole.READ_ONLY);
    // THEN
    expect([waiting.namespace, waiting.metricName, waiting.statistic, stack.resolve(waiting.dimensions)]).toEqual([
      POOLER_METRICS_NAMESPACE,
      'ClientsWaiting',
      'Sum',
      { Fleet: 'kit-fleet', Listener: 'READ_ONLY', Target: stack.resolve(reader1) },
    ]);
    expect([maxWait.statistic, stack.resolve(maxWait.dimensions)]).toEqual([
      'Maximum',
      { Fleet: 'kit-fleet', Listener: 'READ_WRITE', Target: firstLabel(getAtt(pooler.cluster.cluster.node.defaultChild as Construct, 'Endpoint.Address')) },
    ]);
    expect([custom.statistic, custom.period.toSeconds()]).toEqual(['Average', 60]);
    expect([unhealthy.namespace, unhealthy.statistic, stack.resolve(unhealthy.dimensions)]).toEqual([
      'AWS/NetworkELB',
      'Maximum',
      { TargetGroup: getAtt(pooler.targetGroup(EndpointRole.READ_ONLY), 'TargetGroupFullName'), LoadBalancer: getAtt(pooler.loadBalancer, 'LoadBalancerFullName') },
    ]);
    expect(pooler.metricHealthyHostCount(EndpointRole.READ_WRITE).statistic).toBe('Minimum');
  });

  test('GIVEN poolMode SESSION WHEN a metric is asked for THEN it is the session listener\'s pools (Listener READ_WRITE_SESSION), apart from the transaction pools of the same target', () => {
    const { stack, create } = fleetStack({ fleetName: 'kit-fleet' });
    const pooler = create();
    const session = pooler.metricPoolServerConnections({ poolMode: PoolMode.SESSION });
    const transaction = pooler.metricPoolServerConnections({ poolMode: PoolMode.TRANSACTION });
    expect([stack.resolve(session.dimensions).Listener, stack.resolve(transaction.dimensions).Listener]).toEqual(['READ_WRITE_SESSION', 'READ_WRITE']);
    expect(stack.resolve(session.dimensions).Target).toEqual(stack.resolve(transaction.dimensions).Target);
  });

  test('a READ_ONLY metric of a fleet pooling for two readers needs its target', () => {
    // GIVEN
    const pooler = fleetStack().create();
    // WHEN / THEN
    expect(() => pooler.metricPoolClientConnections({ listener: EndpointRole.READ_ONLY })).toThrow(
      kitError('Stack/Pooler', 'target is missing for ClientConnections of the READ_ONLY listener, which pools for 3 instances: pass one of poolTargets(READ_ONLY)'),
    );
  });

  test('with one reader the READ_ONLY targets are that reader and the writer instance, and a metric names one', () => {
    const { stack, create } = fleetStack({}, 1);
    const pooler = create();
    expect(pooler.poolTargets(EndpointRole.READ_ONLY)).toHaveLength(2);
    const [reader] = pooler.poolTargets(EndpointRole.READ_ONLY);
    expect(stack.resolve(pooler.metricQueries({ listener: EndpointRole.READ_ONLY, target: reader }).dimensions).Target).toEqual(stack.resolve(reader));
  });
});

describe('Dashboard proxy and PgBouncer thresholds', () => {
  test('a negative PgBouncer threshold is rejected, named as the prop is', () => {
    // GIVEN
    const { stack, cluster, create } = fleetStack();
    const proxy = create();
    // WHEN / THEN
    expect(() => new Dashboard(stack, 'Dashboard', { cluster, proxy, thresholds: { poolerMaxWaitSeconds: -1 } })).toThrow(
      kitError('Stack/Dashboard', 'poolerMaxWaitSeconds -1 is negative: use 0 or more'),
    );
  });

  test('a pooling tier that is neither of the kit\'s constructs is rejected', () => {
    // GIVEN a construct claiming an engine
    const { stack, cluster } = fleetStack();
    const impostor: IPoolingTier = Object.assign(new Construct(stack, 'Impostor'), { engine: ProxyEngine.PGBOUNCER }) as unknown as IPoolingTier;
    // WHEN / THEN
    expect(() => new Dashboard(stack, 'Dashboard', { cluster, proxy: impostor })).toThrow(
      kitError('Stack/Dashboard', 'proxy Stack/Impostor (engine PGBOUNCER) is neither an RdsProxy (RDS_PROXY) nor a PgBouncerProxy (PGBOUNCER): pass one of the kit\'s pooling tiers'),
    );
  });
});
