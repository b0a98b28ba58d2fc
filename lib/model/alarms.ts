import { type AlarmThresholds, type InstanceSelection, type MetricScope, type MetricSpec, type MetricStatistic, catalogMetric } from './metrics';
import type { AwsSource } from './rule-table';
import { EndpointRole } from './vocabulary';
import { POOLER_METRIC_LISTENERS } from './pgbouncer-metrics';

/**
 * The alarm set of the dashboard: which alarms exist, on which metric, in which direction, against which
 * threshold and per which line (instance, target role, function). Dashboard creates these and the
 * Terraform generator renders them into modules/dashboard/metrics.tf, so neither flavour restates them.
 * An alarm's statistic is its metric's first charted one (METRIC_CATALOG).
 */

export type AlarmComparison = 'GreaterThanOrEqualToThreshold' | 'LessThanOrEqualToThreshold';

/** A metric alarmed on: a catalog entry of the alarm's scope, at the entry's first statistic. */
export interface AlarmInput {
  readonly namespace: MetricSpec['namespace'];
  readonly metricName: string;
  readonly statistic: MetricStatistic;
}

export interface AlarmSpec {
  /** The alarm's name after its line's: `Cpu` gives WriterCpu, Reader1Cpu. */
  readonly name: string;
  readonly scope: MetricScope;
  /** The instances alarmed (`instance` scope): those that publish the metric. */
  readonly instances: InstanceSelection;
  /** The metric alarmed on, or, with `expression`, the metrics the expression reads by id. */
  readonly inputs: Readonly<Record<string, AlarmInput>>;
  /** A metric math expression over `inputs`; without it the alarm watches its one input. */
  readonly expression?: { readonly expression: string; readonly label: string };
  readonly comparison: AlarmComparison;
  readonly threshold: keyof AlarmThresholds;
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm: number;
  /**
   * What a period without data counts as: `notBreaching` where no data means no traffic (or an instance
   * without NVMe metrics yet), `breaching` where no data means what the alarm watches is gone.
   */
  readonly missingData: 'breaching' | 'notBreaching';
}

/**
 * The token an expression alarm writes for the PgBouncer fleet's host count (a fixed-size group): each flavour
 * replaces it with the number (alarmExpression), as metric math takes a number where a metric id is not.
 */
export const FLEET_HOSTS_TOKEN = 'FLEET_HOSTS';

/** An expression alarm's expression for a line, with the fleet's host count in place of FLEET_HOSTS_TOKEN. */
export function alarmExpression(spec: AlarmSpec, fleetHosts?: number): string {
  const expression = spec.expression!.expression;
  if (!expression.includes(FLEET_HOSTS_TOKEN)) return expression;
  if (fleetHosts === undefined) throw new Error(`alarm ${spec.name} needs the fleet's host count`);
  return expression.replaceAll(FLEET_HOSTS_TOKEN, String(fleetHosts));
}

const HIGH: AlarmComparison = 'GreaterThanOrEqualToThreshold';
const LOW: AlarmComparison = 'LessThanOrEqualToThreshold';

/** How an alarm's description writes its comparison. */
export const COMPARISON_SYMBOLS: Readonly<Record<AlarmComparison, string>> = { [HIGH]: '>=', [LOW]: '<=' };

type AlarmRow = Omit<AlarmSpec, 'inputs' | 'instances' | 'missingData'> & { readonly metrics: Readonly<Record<string, string>>; readonly missingData?: AlarmSpec['missingData'] };

function alarm(row: AlarmRow): AlarmSpec {
  const { metrics, missingData = 'notBreaching', ...rest } = row;
  const specs = Object.values(metrics).map((metricName) => catalogMetric(row.scope, metricName));
  const inputs = Object.fromEntries(
    Object.entries(metrics).map(([id, metricName]) => {
      const spec = catalogMetric(row.scope, metricName);
      return [id, { namespace: spec.namespace, metricName, statistic: spec.statistics[0] }];
    }),
  );
  // An instance alarm reaches the instances that publish every metric it reads.
  const selections = [...new Set(specs.map((s) => s.instances ?? 'all'))].filter((s) => s !== 'all');
  if (selections.length > 1) throw new Error(`alarm ${row.name} reads metrics of different instances: ${selections.join(', ')}`);
  return { ...rest, instances: selections[0] ?? 'all', inputs, missingData };
}

export const ALARM_CATALOG: ReadonlyArray<AlarmSpec> = [
  alarm({ name: 'Cpu', scope: 'instance', metrics: { m: 'CPUUtilization' }, comparison: HIGH, threshold: 'cpuUtilizationPercent', evaluationPeriods: 5, datapointsToAlarm: 3 }),
  alarm({ name: 'FreeableMemory', scope: 'instance', metrics: { m: 'FreeableMemory' }, comparison: LOW, threshold: 'freeableMemoryBytes', evaluationPeriods: 5, datapointsToAlarm: 3 }),
  alarm({
    name: 'FreeEphemeralStorage',
    scope: 'instance',
    metrics: { m: 'FreeEphemeralStorage' },
    comparison: LOW,
    threshold: 'freeEphemeralStorageBytes',
    evaluationPeriods: 5,
    datapointsToAlarm: 3,
  }),
  alarm({ name: 'ReplicaLag', scope: 'instance', metrics: { m: 'AuroraReplicaLag' }, comparison: HIGH, threshold: 'replicaLagMs', evaluationPeriods: 5, datapointsToAlarm: 3 }),
  alarm({
    name: 'PoolUtilization',
    scope: 'proxy-target-role',
    metrics: { connections: 'DatabaseConnections', allowed: 'MaxDatabaseConnectionsAllowed' },
    expression: { expression: '100 * connections / IF(allowed > 0, allowed, 1)', label: 'pool utilization (%)' },
    comparison: HIGH,
    threshold: 'proxyPoolUtilizationPercent',
    evaluationPeriods: 5,
    datapointsToAlarm: 3,
  }),
  alarm({
    name: 'Pinned',
    scope: 'proxy-target-role',
    metrics: { m: 'DatabaseConnectionsCurrentlySessionPinned' },
    comparison: HIGH,
    threshold: 'pinnedConnections',
    evaluationPeriods: 5,
    datapointsToAlarm: 3,
  }),
  alarm({ name: 'ClientsWaiting', scope: 'pooler-target', metrics: { m: 'ClientsWaiting' }, comparison: HIGH, threshold: 'poolerClientsWaiting', evaluationPeriods: 5, datapointsToAlarm: 3 }),
  alarm({ name: 'MaxWait', scope: 'pooler-target', metrics: { m: 'MaxWait' }, comparison: HIGH, threshold: 'poolerMaxWaitSeconds', evaluationPeriods: 5, datapointsToAlarm: 3 }),
  alarm({
    name: 'UnhealthyHosts',
    scope: 'pooler-target-group',
    metrics: { m: 'UnHealthyHostCount' },
    comparison: HIGH,
    threshold: 'poolerUnhealthyHosts',
    evaluationPeriods: 5,
    datapointsToAlarm: 3,
  }),
  // Hosts powered off or terminated are neither healthy nor unhealthy: the healthy count below the fleet's (a
  // fixed-size group) finds them, and no data at all (no host registered) counts as missing too.
  alarm({
    name: 'MissingHosts',
    scope: 'pooler-target-group',
    metrics: { healthy: 'HealthyHostCount' },
    expression: { expression: `${FLEET_HOSTS_TOKEN} - healthy`, label: 'hosts missing' },
    comparison: HIGH,
    threshold: 'poolerMissingHosts',
    evaluationPeriods: 5,
    datapointsToAlarm: 3,
    missingData: 'breaching',
  }),
  alarm({ name: 'Errors', scope: 'function', metrics: { m: 'Errors' }, comparison: HIGH, threshold: 'functionErrors', evaluationPeriods: 5, datapointsToAlarm: 1 }),
  alarm({ name: 'Throttles', scope: 'function', metrics: { m: 'Throttles' }, comparison: HIGH, threshold: 'functionThrottles', evaluationPeriods: 5, datapointsToAlarm: 1 }),
];

/** The proxy's target roles, each with the name its alarms start with (ProxyReadWritePinned). */
export const TARGET_ROLE_SERIES: ReadonlyArray<{ readonly role: EndpointRole; readonly alarmName: string }> = [
  { role: EndpointRole.READ_WRITE, alarmName: 'ProxyReadWrite' },
  { role: EndpointRole.READ_ONLY, alarmName: 'ProxyReadOnly' },
];

/**
 * The PgBouncer engine's listeners: their Listener dimension (the role, with `_SESSION` for a session-pooling
 * listener, which exists only where some endpoint uses it), the start of their lines' alarm names (per pool
 * target, and per load balancer target group), and what their pool targets are called in graphs. The
 * READ_WRITE listeners pool for the writer only; the READ_ONLY listeners' readers are numbered as the
 * instances are.
 */
export const POOLER_LISTENER_SERIES: ReadonlyArray<{
  readonly listener: string;
  readonly role: EndpointRole;
  readonly session: boolean;
  readonly alarmName: string;
  readonly targetGroupAlarmName: string;
  readonly targetLabel: string;
  readonly numbered: boolean;
}> = [
  { listener: POOLER_METRIC_LISTENERS.readWrite, role: EndpointRole.READ_WRITE, session: false, alarmName: 'PoolerReadWrite', targetGroupAlarmName: 'LoadBalancerReadWrite', targetLabel: 'writer', numbered: false },
  { listener: POOLER_METRIC_LISTENERS.readOnly, role: EndpointRole.READ_ONLY, session: false, alarmName: 'PoolerReadOnly', targetGroupAlarmName: 'LoadBalancerReadOnly', targetLabel: 'reader', numbered: true },
  { listener: POOLER_METRIC_LISTENERS.readWriteSession, role: EndpointRole.READ_WRITE, session: true, alarmName: 'PoolerReadWriteSession', targetGroupAlarmName: 'LoadBalancerReadWriteSession', targetLabel: 'writer', numbered: false },
  { listener: POOLER_METRIC_LISTENERS.readOnlySession, role: EndpointRole.READ_ONLY, session: true, alarmName: 'PoolerReadOnlySession', targetGroupAlarmName: 'LoadBalancerReadOnlySession', targetLabel: 'reader', numbered: true },
];

/** The lines of one listener's pool targets (`pooler-target` scope), in order: label, alarm name and target. */
export function poolerTargetSeries(role: EndpointRole, targets: ReadonlyArray<string>, session = false): Array<{ label: string; alarmName: string; target: string }> {
  const listener = POOLER_LISTENER_SERIES.find((l) => l.role === role && l.session === session)!;
  if (!listener.numbered && targets.length !== 1) throw new Error(`the ${listener.listener} listener pools for one target, not ${targets.length}`);
  return targets.map((target, i) => {
    const n = listener.numbered ? String(i + 1) : '';
    return { label: `${listener.listener} ${listener.targetLabel}${n && `-${n}`}`, alarmName: `${listener.alarmName}${n}`, target };
  });
}

/** The one input of a single-metric alarm. */
export function singleInput(spec: AlarmSpec): AlarmInput {
  const inputs = Object.values(spec.inputs);
  if (spec.expression || inputs.length !== 1) throw new Error(`alarm ${spec.name} is an expression over ${inputs.length} metrics`);
  return inputs[0];
}

/** Whether an instance alarm or graph of `selection` covers the instance at `index` (0: the writer). */
export function coversInstance(selection: InstanceSelection, index: number): boolean {
  return selection === 'all' || (selection === 'writer') === (index === 0);
}

/**
 * What CloudWatch needs to notify an encrypted SNS topic, which the alarm topic's policies grant (to
 * cloudwatch.amazonaws.com, only for this account's alarms whose names start with the dashboard's prefix).
 */
export const ALARM_TOPIC_ACCESS: {
  readonly sid: string;
  readonly principal: string;
  readonly topicActions: ReadonlyArray<string>;
  readonly keyActions: ReadonlyArray<string>;
  readonly aws: AwsSource;
} = {
  sid: 'CloudWatchAlarmsPublish',
  principal: 'cloudwatch.amazonaws.com',
  topicActions: ['sns:Publish'],
  keyActions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
  aws: {
    constraint:
      'A topic policy replaces SNS\'s default one, so CloudWatch (cloudwatch.amazonaws.com) needs an Allow for sns:Publish, scoped with aws:SourceAccount and an ArnLike aws:SourceArn on the alarms; an encrypted topic needs a customer managed key whose policy lets the service use kms:Decrypt and kms:GenerateDataKey*.',
    sources: [
      'https://repost.aws/knowledge-center/cloudwatch-receive-sns-for-alarm-trigger',
      'https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services',
      'https://docs.aws.amazon.com/sns/latest/dg/sns-access-policy-use-cases.html',
    ],
  },
};

/** The ARN pattern of the alarms whose names start with `prefix`: what aws:SourceArn is matched against. */
export function alarmArnPattern(partition: string, region: string, account: string, prefix: string): string {
  return `arn:${partition}:cloudwatch:${region}:${account}:alarm:${prefix}*`;
}
