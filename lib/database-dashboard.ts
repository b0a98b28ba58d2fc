import { Duration, Names, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { DatabaseConsumerFunction } from './database-consumer-function';
import {
  AlarmThresholds,
  DEFAULT_ALARM_THRESHOLDS,
  EndpointRole,
  METRIC_CATALOG,
  DASHBOARD_RULES,
  MetricSpec,
  runRules,
} from './model';
import { OptimizedReadsCluster } from './optimized-reads-cluster';
import { PoolingProxy } from './pooling-proxy';
import { throwIfInvalid } from './private/validation';

/** Properties of a DatabaseDashboard. */
export interface DatabaseDashboardProps {
  /** The cluster whose instances are charted. */
  readonly cluster: OptimizedReadsCluster;
  /**
   * The proxy whose endpoints and target roles are charted.
   * @default - no proxy widgets or alarms
   */
  readonly proxy?: PoolingProxy;
  /**
   * The consumer functions charted.
   * @default - no Lambda widgets or alarms
   */
  readonly functions?: DatabaseConsumerFunction[];
  /**
   * Name of the dashboard.
   * @default - a name CDK generates
   */
  readonly dashboardName?: string;
  /**
   * Alarm thresholds; any left out take the kit's defaults (DEFAULT_ALARM_THRESHOLDS).
   * @default DEFAULT_ALARM_THRESHOLDS
   */
  readonly thresholds?: Partial<AlarmThresholds>;
  /**
   * Topic every alarm notifies. It must be encrypted and let CloudWatch use its key.
   * @default - a new topic encrypted with a new KMS key, TLS-only publishing
   */
  readonly alarmTopic?: sns.ITopic;
}

const HIGH = cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD;
const LOW = cloudwatch.ComparisonOperator.LESS_THAN_OR_EQUAL_TO_THRESHOLD;

/**
 * One CloudWatch dashboard for a deployment: every metric of the kit's catalog (Aurora and Optimized
 * Reads per instance, RDS Proxy per endpoint and per target role, Lambda per function), and alarms
 * with configurable thresholds that notify an encrypted SNS topic.
 */
export class DatabaseDashboard extends Construct {
  public readonly dashboard: cloudwatch.Dashboard;
  public readonly alarmTopic: sns.ITopic;
  public readonly alarms: cloudwatch.Alarm[] = [];
  public readonly thresholds: AlarmThresholds;
  private readonly props: DatabaseDashboardProps;

  constructor(scope: Construct, id: string, props: DatabaseDashboardProps) {
    super(scope, id);
    this.props = props;
    this.thresholds = { ...DEFAULT_ALARM_THRESHOLDS, ...props.thresholds };
    throwIfInvalid(
      this,
      // One threshold at a time, so the messages come in the thresholds' order.
      (Object.keys(this.thresholds) as Array<keyof AlarmThresholds>).flatMap((name) => runRules(DASHBOARD_RULES, { [name]: this.thresholds[name] })),
    );

    this.alarmTopic = props.alarmTopic ?? this.createTopic();
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: props.dashboardName,
      defaultInterval: Duration.hours(3),
    });

    this.addSection('Aurora instances', METRIC_CATALOG.filter((m) => m.scope === 'instance'));
    if (props.proxy) {
      this.addSection('RDS Proxy endpoints (client side)', METRIC_CATALOG.filter((m) => m.scope === 'proxy-endpoint'));
      this.addSection('RDS Proxy target roles (database side)', METRIC_CATALOG.filter((m) => m.scope === 'proxy-target-role'));
    }
    if (props.functions && props.functions.length > 0) {
      this.addSection('Lambda consumers', METRIC_CATALOG.filter((m) => m.scope === 'function'));
    }
    this.addAlarms();
  }

  /** The metric lines of one catalog entry: one per instance, endpoint, role or function, per statistic. */
  public metricsFor(spec: MetricSpec): cloudwatch.IMetric[] {
    return this.seriesFor(spec).flatMap(({ label, dimensions }) =>
      spec.statistics.map(
        (statistic) =>
          new cloudwatch.Metric({
            namespace: spec.namespace,
            metricName: spec.metricName,
            dimensionsMap: dimensions,
            statistic,
            period: Duration.minutes(1),
            label: spec.statistics.length > 1 ? `${label} ${statistic}` : label,
          }),
      ),
    );
  }

  private seriesFor(spec: MetricSpec): Array<{ label: string; dimensions: Record<string, string> }> {
    const { cluster, proxy, functions = [] } = this.props;
    switch (spec.scope) {
      case 'instance':
        return cluster.instanceIdentifiers
          // Replica lag is a reader metric; the writer has none.
          .filter((_, i) => spec.metricName !== 'AuroraReplicaLag' || i > 0)
          .map((instanceId, i) => ({
            label: i === 0 ? 'writer' : `reader-${i}`,
            dimensions: { DBInstanceIdentifier: instanceId },
          }));
      case 'proxy-endpoint':
        if (!proxy) return [];
        return [
          { label: 'default', dimensions: { ProxyName: proxy.proxy.dbProxyName, EndpointName: 'default' } },
          ...proxy.endpoints.map((e) => ({
            label: `${e.node.id} (${e.role})`,
            dimensions: { ProxyName: proxy.proxy.dbProxyName, EndpointName: e.endpointName },
          })),
        ];
      case 'proxy-target-role':
        if (!proxy) return [];
        return (['READ_WRITE', 'READ_ONLY'] as EndpointRole[]).map((role) => ({
          label: role,
          dimensions: { ProxyName: proxy.proxy.dbProxyName, TargetGroup: 'default', TargetRole: role },
        }));
      case 'function':
        return functions.map((f) => ({ label: this.functionName(f), dimensions: { FunctionName: f.function.functionName } }));
    }
  }

  private addSection(title: string, specs: MetricSpec[]): void {
    this.dashboard.addWidgets(new cloudwatch.TextWidget({ markdown: `## ${title}`, width: 24, height: 1 }));
    const widgets = specs.map(
      (spec) =>
        new cloudwatch.GraphWidget({
          title: spec.optimizedReadsOnly ? `${spec.metricName} (Optimized Reads)` : spec.metricName,
          left: this.metricsFor(spec),
          leftYAxis: { label: spec.unit, showUnits: false, min: 0 },
          width: 8,
          height: 6,
        }),
    );
    for (let i = 0; i < widgets.length; i += 3) this.dashboard.addWidgets(...widgets.slice(i, i + 3));
  }

  private addAlarms(): void {
    const { cluster, proxy, functions = [] } = this.props;
    const t = this.thresholds;
    cluster.instanceIdentifiers.forEach((instanceId, i) => {
      const name = i === 0 ? 'Writer' : `Reader${i}`;
      this.alarm(`${name}Cpu`, cluster.metricCpuUtilization(instanceId), t.cpuUtilizationPercent, HIGH, 5, 3);
      this.alarm(`${name}FreeableMemory`, cluster.metricFreeableMemory(instanceId), t.freeableMemoryBytes, LOW, 5, 3);
      this.alarm(`${name}FreeLocalStorage`, cluster.metricFreeLocalStorage(instanceId), t.freeLocalStorageBytes, LOW, 5, 3);
      if (i > 0) this.alarm(`${name}ReplicaLag`, cluster.metricReplicaLag(instanceId), t.replicaLagMs, HIGH, 5, 3);
    });
    if (proxy) {
      for (const role of ['READ_WRITE', 'READ_ONLY'] as EndpointRole[]) {
        const label = role === 'READ_WRITE' ? 'ReadWrite' : 'ReadOnly';
        const utilization = new cloudwatch.MathExpression({
          expression: '100 * connections / IF(allowed > 0, allowed, 1)',
          usingMetrics: {
            connections: proxy.metricDatabaseConnections(role),
            allowed: proxy.metricMaxDatabaseConnectionsAllowed(role),
          },
          label: `${role} pool utilization (%)`,
          period: Duration.minutes(1),
        });
        this.alarm(`Proxy${label}PoolUtilization`, utilization, t.proxyPoolUtilizationPercent, HIGH, 5, 3);
        this.alarm(`Proxy${label}Pinned`, proxy.metricDatabaseConnectionsCurrentlySessionPinned(role), t.pinnedConnections, HIGH, 5, 3);
      }
    }
    for (const fn of functions) {
      this.alarm(`${this.functionName(fn)}Errors`, fn.metricErrors(), t.functionErrors, HIGH, 5, 1);
      this.alarm(`${this.functionName(fn)}Throttles`, fn.metricThrottles(), t.functionThrottles, HIGH, 5, 1);
    }
  }

  /**
   * A function's name in alarm ids and graph labels: its construct id, or, when another charted
   * function has the same id (e.g. two `Reader`s under different parents), its path-unique id.
   */
  private functionName(fn: DatabaseConsumerFunction): string {
    const clash = (this.props.functions ?? []).some((other) => other !== fn && other.node.id === fn.node.id);
    return clash ? Names.uniqueId(fn) : fn.node.id;
  }

  private alarm(
    id: string,
    metric: cloudwatch.IMetric,
    threshold: number,
    comparison: cloudwatch.ComparisonOperator,
    evaluationPeriods: number,
    datapointsToAlarm: number,
  ): void {
    const alarm = new cloudwatch.Alarm(this, `${id}Alarm`, {
      metric,
      threshold,
      comparisonOperator: comparison,
      evaluationPeriods,
      datapointsToAlarm,
      // No data means no traffic (or an instance without NVMe metrics yet), not a failure.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `aurora-proxy-kit ${this.node.path}: ${id} ${comparison === HIGH ? '>=' : '<='} ${threshold}`,
    });
    alarm.addAlarmAction(new actions.SnsAction(this.alarmTopic));
    alarm.addOkAction(new actions.SnsAction(this.alarmTopic));
    this.alarms.push(alarm);
  }

  private createTopic(): sns.Topic {
    const key = new kms.Key(this, 'AlarmTopicKey', {
      description: `Encrypts the alarm topic of ${this.node.path}`,
      enableKeyRotation: true,
    });
    // CloudWatch publishes alarm notifications to the topic and needs the key for that: only for
    // alarms of this account.
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        resources: ['*'],
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
    );
    return new sns.Topic(this, 'AlarmTopic', { masterKey: key, enforceSSL: true, displayName: 'aurora-proxy-kit alarms' });
  }
}
