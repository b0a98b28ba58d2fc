import { Duration, Names, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { LambdaConsumer } from './lambda-consumer';
import {
  ALARM_CATALOG,
  ALARM_TOPIC_ACCESS,
  AlarmInput,
  AlarmSpec,
  AlarmThresholdOptions,
  AlarmThresholds,
  COMPARISON_SYMBOLS,
  DASHBOARD_RULES,
  DEFAULT_ALARM_THRESHOLDS,
  InstanceSelection,
  METRIC_CATALOG,
  METRIC_PERIOD_SECONDS,
  MetricScope,
  MetricSpec,
  MetricSubject,
  alarmArnPattern,
  alarmExpression,
  coversInstance,
  metricDimensions,
  runRules,
  singleInput,
} from './model';
import { IAuroraOptimizedReads } from './aurora-optimized-reads-attributes';
import { IPoolingTier } from './pooling-tier';
import type { Series, TierDashboard } from './private/tier-dashboard';
import { throwIfInvalid } from './private/validation';

/** Properties of a Dashboard. */
export interface DashboardProps {
  /** The cluster whose instances are charted: of this app, or imported (AuroraOptimizedReads.fromAuroraOptimizedReadsAttributes). */
  readonly cluster: IAuroraOptimizedReads;
  /**
   * The pooling tier charted, of either engine: an RdsProxy (RDS Proxy: its endpoints and target
   * roles) or a PgBouncerProxy (its listeners' pool targets and the load balancer's target groups).
   * @default - no proxy widgets or alarms
   */
  readonly proxy?: IPoolingTier;
  /**
   * The consumer functions charted.
   * @default - no Lambda widgets or alarms
   */
  readonly functions?: LambdaConsumer[];
  /**
   * Name of the dashboard. Every alarm's name starts with it and a hyphen, so the alarm topic's
   * policies can admit exactly these alarms.
   * @default - a name CDK generates for the dashboard; the alarms start with a name unique to this construct
   */
  readonly dashboardName?: string;
  /**
   * Alarm thresholds; any left out take the kit's defaults (Dashboard.DEFAULT_THRESHOLDS).
   * @default Dashboard.DEFAULT_THRESHOLDS
   */
  readonly thresholds?: AlarmThresholdOptions;
  /**
   * Topic every alarm notifies. Its policy must let cloudwatch.amazonaws.com publish (sns:Publish) and, as
   * it must be encrypted, its key policy let CloudWatch use the key (kms:Decrypt, kms:GenerateDataKey*), for
   * the alarms named `alarmNamePrefix`*; the kit cannot add statements to an imported topic.
   * @default - a new topic encrypted with a new KMS key, TLS-only publishing, that this dashboard's alarms may publish to
   */
  readonly alarmTopic?: sns.ITopic;
}

/**
 * One CloudWatch dashboard for a deployment: every metric of the kit's catalog (Aurora and Optimized
 * Reads per instance; RDS Proxy per endpoint and per target role, or the PgBouncer engine per listener and
 * pool target and per load balancer target group; Lambda per function), and the alarms of
 * the kit's alarm catalog with configurable thresholds, notifying an encrypted SNS topic.
 */
export class Dashboard extends Construct {
  /** The thresholds a dashboard's alarms take when its props leave them out. */
  public static readonly DEFAULT_THRESHOLDS: AlarmThresholds = DEFAULT_ALARM_THRESHOLDS;

  public readonly dashboard: cloudwatch.Dashboard;
  public readonly alarmTopic: sns.ITopic;
  public readonly alarms: cloudwatch.Alarm[] = [];
  public readonly thresholds: AlarmThresholds;
  /** What every alarm's name starts with: the dashboard's name (or a name unique to this construct) and a hyphen. */
  public readonly alarmNamePrefix: string;
  private readonly props: DashboardProps;
  /** The pooling tier's sections and lines, whichever its engine. */
  private readonly tier?: TierDashboard;

  constructor(scope: Construct, id: string, props: DashboardProps) {
    super(scope, id);
    this.props = props;
    this.thresholds = { ...DEFAULT_ALARM_THRESHOLDS, ...props.thresholds };
    const { proxy } = props;
    // Each engine's lines read the tier's own resources: a tier of another class has none to chart.
    const known = proxy === undefined || typeof (proxy as Partial<IPoolingTier>)._dashboard === 'function';
    throwIfInvalid(this, [
      // One threshold at a time, so the messages come in the thresholds' order.
      ...(Object.keys(this.thresholds) as Array<keyof AlarmThresholds>).flatMap((name) => runRules(DASHBOARD_RULES, { [name]: this.thresholds[name] })),
      known ? undefined : `proxy ${proxy!.node.path} (engine ${proxy!.engine}) is neither an RdsProxy (RDS_PROXY) nor a PgBouncerProxy (PGBOUNCER): pass one of the kit's pooling tiers`,
    ]);
    this.tier = proxy?._dashboard();
    this.alarmNamePrefix = `${props.dashboardName ?? Names.uniqueResourceName(this, { maxLength: 128, separator: '-' })}-`;

    this.alarmTopic = props.alarmTopic ?? this.createTopic();
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: props.dashboardName,
      defaultInterval: Duration.hours(3),
    });

    this.addSection('Aurora instances', 'instance');
    for (const { title, scope } of this.tier?.sections ?? []) this.addSection(title, scope);
    if (props.functions && props.functions.length > 0) {
      this.addSection('Lambda consumers', 'function');
    }
    for (const spec of ALARM_CATALOG) for (const series of this.seriesOf(spec.scope, spec.instances)) this.addAlarm(spec, series);
  }

  /** The metric lines of one catalog entry: one per instance, endpoint, role or function, per statistic. */
  private metricsFor(spec: MetricSpec): cloudwatch.IMetric[] {
    return this.seriesOf(spec.scope, spec.instances ?? 'all').flatMap(({ label, subject }) =>
      spec.statistics.map((statistic) =>
        this.metricOf({ namespace: spec.namespace, metricName: spec.metricName, statistic }, spec.scope, subject, spec.statistics.length > 1 ? `${label} ${statistic}` : label),
      ),
    );
  }

  private metricOf(input: AlarmInput, scope: MetricScope, subject: MetricSubject, label?: string): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: input.namespace,
      metricName: input.metricName,
      dimensionsMap: metricDimensions(scope, subject),
      statistic: input.statistic,
      period: Duration.seconds(METRIC_PERIOD_SECONDS),
      label,
    });
  }

  /** The lines of a scope; of the instances, those `instances` selects. */
  private seriesOf(scope: MetricScope, instances: InstanceSelection): Series[] {
    const { cluster, functions = [] } = this.props;
    switch (scope) {
      case 'instance':
        return cluster.instanceIdentifiers
          .map((instanceIdentifier, i) => ({
            label: i === 0 ? 'writer' : `reader-${i}`,
            alarmName: i === 0 ? 'Writer' : `Reader${i}`,
            instanceIndex: i,
            subject: { instanceIdentifier },
          }))
          .filter((s) => coversInstance(instances, s.instanceIndex));
      case 'function':
        return functions.map((f) => ({ label: this.functionName(f), alarmName: this.functionName(f), subject: { functionName: f.function.functionName } }));
      default:
        // The pooling tier's scopes: its own lines, none for the other engine's.
        return this.tier?.series(scope) ?? [];
    }
  }

  private addSection(title: string, scope: MetricScope): void {
    this.dashboard.addWidgets(new cloudwatch.TextWidget({ markdown: `## ${title}`, width: 24, height: 1 }));
    const widgets = METRIC_CATALOG.filter((spec) => spec.scope === scope).map(
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

  /**
   * A function's name in alarm ids and graph labels: its construct id, or, when another charted
   * function has the same id (e.g. two `Reader`s under different parents), its path-unique id.
   */
  private functionName(fn: LambdaConsumer): string {
    const clash = (this.props.functions ?? []).some((other) => other !== fn && other.node.id === fn.node.id);
    return clash ? Names.uniqueId(fn) : fn.node.id;
  }

  private addAlarm(spec: AlarmSpec, series: Series): void {
    if (series.alarmName === undefined) throw new Error(`alarm ${spec.name}: ${spec.scope} lines have no alarm names`);
    const id = `${series.alarmName}${spec.name}`;
    const threshold = this.thresholds[spec.threshold];
    const metric = spec.expression
      ? new cloudwatch.MathExpression({
          expression: alarmExpression(spec, this.tier?.fleetHosts),
          usingMetrics: Object.fromEntries(Object.entries(spec.inputs).map(([name, input]) => [name, this.metricOf(input, spec.scope, series.subject)])),
          label: `${series.label} ${spec.expression.label}`,
          period: Duration.seconds(METRIC_PERIOD_SECONDS),
        })
      : this.metricOf(singleInput(spec), spec.scope, series.subject);
    const alarm = new cloudwatch.Alarm(this, `${id}Alarm`, {
      alarmName: `${this.alarmNamePrefix}${id}`,
      metric,
      threshold,
      comparisonOperator: spec.comparison as cloudwatch.ComparisonOperator,
      evaluationPeriods: spec.evaluationPeriods,
      datapointsToAlarm: spec.datapointsToAlarm,
      // No data means no traffic (or an instance without NVMe metrics yet), not a failure; for MissingHosts, no host.
      treatMissingData: spec.missingData === 'breaching' ? cloudwatch.TreatMissingData.BREACHING : cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `aurora-proxy-kit ${this.node.path}: ${id} ${COMPARISON_SYMBOLS[spec.comparison]} ${threshold}`,
    });
    alarm.addAlarmAction(new actions.SnsAction(this.alarmTopic));
    alarm.addOkAction(new actions.SnsAction(this.alarmTopic));
    this.alarms.push(alarm);
  }

  /**
   * A topic only this dashboard's alarms may publish to: SNS replaces its default policy with the topic
   * policy that `enforceSSL` creates, and CloudWatch needs the topic's key to publish to an encrypted topic.
   */
  private createTopic(): sns.Topic {
    const stack = Stack.of(this);
    const cloudWatch = new iam.ServicePrincipal(ALARM_TOPIC_ACCESS.principal);
    const conditions = {
      StringEquals: { 'aws:SourceAccount': stack.account },
      ArnLike: { 'aws:SourceArn': alarmArnPattern(stack.partition, stack.region, stack.account, this.alarmNamePrefix) },
    };
    const key = new kms.Key(this, 'AlarmTopicKey', {
      description: `Encrypts the alarm topic of ${this.node.path}`,
      enableKeyRotation: true,
    });
    key.addToResourcePolicy(
      new iam.PolicyStatement({ sid: ALARM_TOPIC_ACCESS.sid, actions: [...ALARM_TOPIC_ACCESS.keyActions], principals: [cloudWatch], resources: ['*'], conditions }),
    );
    const topic = new sns.Topic(this, 'AlarmTopic', { masterKey: key, enforceSSL: true, displayName: 'aurora-proxy-kit alarms' });
    topic.addToResourcePolicy(
      new iam.PolicyStatement({ sid: ALARM_TOPIC_ACCESS.sid, actions: [...ALARM_TOPIC_ACCESS.topicActions], principals: [cloudWatch], resources: [topic.topicArn], conditions }),
    );
    return topic;
  }
}
