import { POOLER_METRICS, POOLER_METRICS_NAMESPACE, POOLER_METRIC_DIMENSIONS, type PoolerMetricDimension } from './pgbouncer-metrics';
import type { AwsSource } from './rule-table';
import type { EndpointRole } from './vocabulary';

/**
 * The dashboard metric catalog: every CloudWatch metric the kit charts, with the dimension set it is
 * published under. The CDK dashboard and the Terraform dashboard module both render from this list, and
 * tests check that every entry appears on both. An entry whose choice rests on a fact of AWS's metric
 * tables (unit, statistic, which instances publish it) carries that fact and its source in `aws`.
 *
 * Sources: "Amazon CloudWatch metrics for Amazon Aurora" (instance-level metrics, the Optimized Reads
 * ones appear only on NVMe instances), "Monitoring RDS Proxy metrics with Amazon CloudWatch" (the
 * four dimension sets), "CloudWatch metrics for your Network Load Balancer" (the PgBouncer engine's target
 * groups), and "Lambda function metrics". The PgBouncer engine's own metrics come from its exporter's
 * table (lib/model/pgbouncer-metrics.ts).
 */

const AURORA_INSTANCE_METRICS = 'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/Aurora.AuroraMonitoring.Metrics.html#Aurora.AuroraMySQL.Monitoring.Metrics.instances';
const RDS_PROXY_METRICS = 'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/rds-proxy.monitoring.html';
const NLB_METRICS = 'https://docs.aws.amazon.com/elasticloadbalancing/latest/network/load-balancer-cloudwatch-metrics.html';

/**
 * What a metric is split by:
 * - `instance`: AWS/RDS, DBInstanceIdentifier.
 * - `proxy-endpoint`: AWS/RDS, ProxyName + EndpointName (client-side proxy metrics, one line per endpoint).
 * - `proxy-target-role`: AWS/RDS, ProxyName + TargetGroup + TargetRole (database-side proxy metrics,
 *   split READ_WRITE / READ_ONLY; RDS Proxy does not publish these per endpoint).
 * - `pooler-target`: AuroraProxyKit/PgBouncer, Fleet + Listener + Target (the PgBouncer engine's hosts
 *   publish every metric with all three: one line per listener and pool target, the writer or a reader).
 * - `pooler-target-group`: AWS/NetworkELB, TargetGroup + LoadBalancer (the PgBouncer engine's load
 *   balancer, one line per listener's target group).
 * - `function`: AWS/Lambda, FunctionName.
 */
export type MetricScope = 'instance' | 'proxy-endpoint' | 'proxy-target-role' | 'pooler-target' | 'pooler-target-group' | 'function';

/** The scopes of each pooling engine's lines (ProxyEngine's values); instances and functions are charted with either. */
export const ENGINE_SCOPES: Readonly<Record<'RDS_PROXY' | 'PGBOUNCER', ReadonlyArray<MetricScope>>> = {
  RDS_PROXY: ['proxy-endpoint', 'proxy-target-role'],
  PGBOUNCER: ['pooler-target', 'pooler-target-group'],
};

export type MetricStatistic = 'Average' | 'Sum' | 'Maximum' | 'Minimum' | 'p50' | 'p99';

/** Which instances publish an instance metric: all, the writer (AWS: "primary") or the readers. */
export type InstanceSelection = 'all' | 'writer' | 'readers';

export interface MetricSpec {
  readonly namespace: 'AWS/RDS' | 'AWS/Lambda' | typeof POOLER_METRICS_NAMESPACE | 'AWS/NetworkELB';
  readonly metricName: string;
  readonly scope: MetricScope;
  /** Statistics charted; the first is the one alarms use (ALARM_CATALOG). */
  readonly statistics: ReadonlyArray<MetricStatistic>;
  /** The unit AWS publishes the metric in; the graph's axis label. */
  readonly unit: string;
  /** Published only on Optimized Reads (NVMe) instances. */
  readonly optimizedReadsOnly?: boolean;
  /**
   * The instances charted (`instance` scope only).
   * @default 'all'
   */
  readonly instances?: InstanceSelection;
  readonly description: string;
  /** The AWS fact this entry's unit, statistic or instances follow, and where it is written down. */
  readonly aws?: AwsSource;
}

/** The period of every charted line and every alarm. */
export const METRIC_PERIOD_SECONDS = 60;

export const METRIC_CATALOG: ReadonlyArray<MetricSpec> = [
  // Aurora, per instance
  { namespace: 'AWS/RDS', metricName: 'DatabaseConnections', scope: 'instance', statistics: ['Average', 'Maximum'], unit: 'Count', description: 'Server connections open on the instance' },
  { namespace: 'AWS/RDS', metricName: 'CPUUtilization', scope: 'instance', statistics: ['Average'], unit: 'Percent', description: 'Instance CPU' },
  { namespace: 'AWS/RDS', metricName: 'FreeableMemory', scope: 'instance', statistics: ['Minimum'], unit: 'Bytes', description: 'Memory left; each server connection costs some' },
  { namespace: 'AWS/RDS', metricName: 'BufferCacheHitRatio', scope: 'instance', statistics: ['Average'], unit: 'Percent', description: 'Reads served from the in-memory buffer pool' },
  {
    namespace: 'AWS/RDS',
    metricName: 'AuroraReplicaLag',
    scope: 'instance',
    statistics: ['Maximum'],
    unit: 'Milliseconds',
    instances: 'readers',
    description: 'Reader lag behind the writer',
    aws: { constraint: 'AuroraReplicaLag applies to Aurora Replicas only: the writer publishes none.', sources: [AURORA_INSTANCE_METRICS] },
  },
  {
    namespace: 'AWS/RDS',
    metricName: 'FreeLocalStorage',
    scope: 'instance',
    statistics: ['Minimum'],
    unit: 'Bytes',
    description: 'Local storage left on the instance (depends on the instance class; not the NVMe)',
    aws: {
      constraint: 'FreeLocalStorage is "the amount of local storage available" to each instance, for Aurora MySQL and PostgreSQL; the ephemeral NVMe of Optimized Reads is FreeEphemeralStorage.',
      sources: [AURORA_INSTANCE_METRICS],
    },
  },
  {
    namespace: 'AWS/RDS',
    metricName: 'FreeEphemeralStorage',
    scope: 'instance',
    statistics: ['Minimum'],
    unit: 'Bytes',
    optimizedReadsOnly: true,
    description: 'NVMe storage left for temporary objects and the tiered cache',
    aws: { constraint: 'FreeEphemeralStorage is "the amount of available Ephemeral NVMe storage" (Aurora PostgreSQL, Bytes).', sources: [AURORA_INSTANCE_METRICS] },
  },
  { namespace: 'AWS/RDS', metricName: 'ReadIOPSEphemeralStorage', scope: 'instance', statistics: ['Average'], unit: 'Count/Second', optimizedReadsOnly: true, description: 'Read IOPS on the local NVMe storage' },
  {
    namespace: 'AWS/RDS',
    metricName: 'ReadLatencyEphemeralStorage',
    scope: 'instance',
    statistics: ['Average'],
    unit: 'Seconds',
    optimizedReadsOnly: true,
    description: 'Read latency of the local NVMe storage',
    aws: { constraint: 'ReadLatencyEphemeralStorage, the average time per read I/O on Ephemeral NVMe storage, is published in Seconds.', sources: [AURORA_INSTANCE_METRICS] },
  },
  {
    namespace: 'AWS/RDS',
    metricName: 'AuroraOptimizedReadsCacheHitRatio',
    scope: 'instance',
    statistics: ['Average'],
    unit: 'Percent',
    optimizedReadsOnly: true,
    instances: 'writer',
    description: 'Reads served from the NVMe tiered cache',
    aws: { constraint: 'AuroraOptimizedReadsCacheHitRatio applies to the "Primary for Aurora PostgreSQL": the writer only.', sources: [AURORA_INSTANCE_METRICS] },
  },
  // RDS Proxy, per endpoint (client side)
  { namespace: 'AWS/RDS', metricName: 'ClientConnections', scope: 'proxy-endpoint', statistics: ['Sum'], unit: 'Count', description: 'Client connections open on the endpoint' },
  { namespace: 'AWS/RDS', metricName: 'ClientConnectionsSetupFailedAuth', scope: 'proxy-endpoint', statistics: ['Sum'], unit: 'Count', description: 'Client connection attempts that failed authentication' },
  { namespace: 'AWS/RDS', metricName: 'DatabaseConnectionsBorrowLatency', scope: 'proxy-endpoint', statistics: ['Average', 'p99'], unit: 'Microseconds', description: 'Time to borrow a pooled connection' },
  { namespace: 'AWS/RDS', metricName: 'QueryDatabaseResponseLatency', scope: 'proxy-endpoint', statistics: ['Average', 'p99'], unit: 'Microseconds', description: 'Database response time seen by the proxy' },
  { namespace: 'AWS/RDS', metricName: 'QueryResponseLatency', scope: 'proxy-endpoint', statistics: ['Average', 'p99'], unit: 'Microseconds', description: 'Query response time seen by clients' },
  { namespace: 'AWS/RDS', metricName: 'QueryRequests', scope: 'proxy-endpoint', statistics: ['Sum'], unit: 'Count', description: 'Queries received' },
  // RDS Proxy, per target role (database side)
  {
    namespace: 'AWS/RDS',
    metricName: 'DatabaseConnections',
    scope: 'proxy-target-role',
    statistics: ['Sum'],
    unit: 'Count',
    description: 'Server connections the proxy holds',
    aws: {
      constraint: 'RDS Proxy publishes DatabaseConnections for each EC2 instance serving the proxy; "the most useful statistic for this metric is Sum".',
      sources: [RDS_PROXY_METRICS],
    },
  },
  { namespace: 'AWS/RDS', metricName: 'DatabaseConnectionsCurrentlySessionPinned', scope: 'proxy-target-role', statistics: ['Sum'], unit: 'Count', description: 'Server connections pinned to one client session' },
  {
    namespace: 'AWS/RDS',
    metricName: 'MaxDatabaseConnectionsAllowed',
    scope: 'proxy-target-role',
    statistics: ['Sum'],
    unit: 'Count',
    description: 'Pool ceiling from MaxConnectionsPercent',
    aws: {
      constraint:
        'RDS Proxy publishes its metrics for each EC2 instance serving the proxy, to be aggregated across them; for DatabaseConnections and MaxDatabaseConnectionsAllowed "the most useful statistic ... is Sum".',
      sources: [RDS_PROXY_METRICS],
    },
  },
  { namespace: 'AWS/RDS', metricName: 'AvailabilityPercentage', scope: 'proxy-target-role', statistics: ['Minimum'], unit: 'Percent', description: 'Share of time the target role was available' },
  // PgBouncer engine, per listener and pool target: what its hosts publish (POOLER_METRICS, at its statistic)
  ...POOLER_METRICS.map((m): MetricSpec => ({ namespace: POOLER_METRICS_NAMESPACE, metricName: m.metricName, scope: 'pooler-target', statistics: [m.statistic], unit: m.unit, description: m.description })),
  // PgBouncer engine, per load balancer target group
  ...(['HealthyHostCount', 'UnHealthyHostCount'] as const).map(
    (metricName): MetricSpec => ({
      namespace: 'AWS/NetworkELB',
      metricName,
      scope: 'pooler-target-group',
      // The fewest healthy hosts and the most unhealthy ones in the period: a host leaving rotation shows.
      statistics: [metricName === 'HealthyHostCount' ? 'Minimum' : 'Maximum'],
      unit: 'Count',
      description: metricName === 'HealthyHostCount' ? 'PgBouncer hosts passing the health checks of the listener' : 'PgBouncer hosts failing the health checks of the listener',
      aws: {
        constraint: `${metricName} is published per target group with the dimensions LoadBalancer and TargetGroup (the final portions of their ARNs, net/<name>/<id> and targetgroup/<name>/<id>), only while health checks are enabled; the most useful statistics are Maximum and Minimum.`,
        sources: [NLB_METRICS],
      },
    }),
  ),
  // Lambda, per function
  { namespace: 'AWS/Lambda', metricName: 'Invocations', scope: 'function', statistics: ['Sum'], unit: 'Count', description: 'Invocations' },
  { namespace: 'AWS/Lambda', metricName: 'Errors', scope: 'function', statistics: ['Sum'], unit: 'Count', description: 'Invocations that failed' },
  { namespace: 'AWS/Lambda', metricName: 'Throttles', scope: 'function', statistics: ['Sum'], unit: 'Count', description: 'Invocations throttled' },
  { namespace: 'AWS/Lambda', metricName: 'Duration', scope: 'function', statistics: ['p50', 'p99'], unit: 'Milliseconds', description: 'Invocation duration' },
  { namespace: 'AWS/Lambda', metricName: 'ConcurrentExecutions', scope: 'function', statistics: ['Maximum'], unit: 'Count', description: 'Concurrent executions' },
];

export function metricsOfScope(scope: MetricScope): MetricSpec[] {
  return METRIC_CATALOG.filter((m) => m.scope === scope);
}

/** The catalog entry of a metric in a scope; throws for one the catalog does not hold. */
export function catalogMetric(scope: MetricScope, metricName: string): MetricSpec {
  const spec = METRIC_CATALOG.find((m) => m.scope === scope && m.metricName === metricName);
  if (!spec) throw new Error(`${metricName} is not in the metric catalog for scope ${scope}`);
  return spec;
}

/** The values a line's dimensions take: which instance, proxy, endpoint, target role, fleet listener and target, target group or function it is of. */
export interface MetricSubject {
  readonly instanceIdentifier?: string;
  readonly proxyName?: string;
  readonly endpointName?: string;
  readonly targetRole?: EndpointRole;
  readonly fleetName?: string;
  /** A PgBouncer listener's Listener dimension: its endpoint role, with `_SESSION` for session pooling (POOLER_METRIC_LISTENERS). */
  readonly listener?: string;
  /** A pool target: the first label of its server host (poolerMetricTarget). */
  readonly target?: string;
  /** A load balancer's ARN suffix, `net/<name>/<id>`. */
  readonly loadBalancer?: string;
  /** A target group's ARN suffix, `targetgroup/<name>/<id>`. */
  readonly targetGroup?: string;
  readonly functionName?: string;
}

/** Which subject value each of the PgBouncer hosts' dimensions takes. */
const POOLER_DIMENSION_SUBJECTS: Readonly<Record<PoolerMetricDimension, keyof MetricSubject>> = { Fleet: 'fleetName', Listener: 'listener', Target: 'target' };

/** One dimension of a scope: its value comes from the subject, or is fixed. */
export type MetricDimension = { readonly name: string; readonly subject: keyof MetricSubject } | { readonly name: string; readonly value: string };

/**
 * The dimension set of each scope, in AWS's order (RDS Proxy's dimension sets 2 and 4; the kit's proxies
 * have one target group, `default`).
 */
export const SCOPE_DIMENSIONS: Readonly<Record<MetricScope, ReadonlyArray<MetricDimension>>> = {
  instance: [{ name: 'DBInstanceIdentifier', subject: 'instanceIdentifier' }],
  'proxy-endpoint': [
    { name: 'ProxyName', subject: 'proxyName' },
    { name: 'EndpointName', subject: 'endpointName' },
  ],
  'proxy-target-role': [
    { name: 'ProxyName', subject: 'proxyName' },
    { name: 'TargetGroup', value: 'default' },
    { name: 'TargetRole', subject: 'targetRole' },
  ],
  'pooler-target': POOLER_METRIC_DIMENSIONS.map((name) => ({ name, subject: POOLER_DIMENSION_SUBJECTS[name] })),
  'pooler-target-group': [
    { name: 'TargetGroup', subject: 'targetGroup' },
    { name: 'LoadBalancer', subject: 'loadBalancer' },
  ],
  function: [{ name: 'FunctionName', subject: 'functionName' }],
};

/** The dimensions map of a line of `scope` about `subject`; throws when the subject lacks a value the scope needs. */
export function metricDimensions(scope: MetricScope, subject: MetricSubject): Record<string, string> {
  return Object.fromEntries(
    SCOPE_DIMENSIONS[scope].map((d) => {
      if ('value' in d) return [d.name, d.value];
      const value = subject[d.subject];
      if (value === undefined) throw new Error(`a ${scope} metric needs ${d.subject}`);
      return [d.name, value];
    }),
  );
}

/** The name RDS Proxy gives its default endpoint, the EndpointName of its metrics. */
export const DEFAULT_PROXY_ENDPOINT_NAME = 'default';

/** Alarm thresholds the dashboard sets by default; each is a prop of Dashboard. */
export interface AlarmThresholds {
  /** Instance CPUUtilization (Average, percent) at or above which to alarm. */
  readonly cpuUtilizationPercent: number;
  /** Instance FreeableMemory (Minimum, bytes) at or below which to alarm. */
  readonly freeableMemoryBytes: number;
  /** Reader AuroraReplicaLag (Maximum, ms) at or above which to alarm. */
  readonly replicaLagMs: number;
  /** Instance FreeEphemeralStorage (Minimum, bytes: the Optimized Reads NVMe left) at or below which to alarm. */
  readonly freeEphemeralStorageBytes: number;
  /** Share of the pool ceiling (Sum of DatabaseConnections / Sum of MaxDatabaseConnectionsAllowed, percent) at or above which to alarm. */
  readonly proxyPoolUtilizationPercent: number;
  /** DatabaseConnectionsCurrentlySessionPinned (Sum) at or above which to alarm. */
  readonly pinnedConnections: number;
  /** PgBouncer ClientsWaiting (Sum over the hosts, per listener and target) at or above which to alarm. */
  readonly poolerClientsWaiting: number;
  /** PgBouncer MaxWait (Maximum over the hosts, per listener and target, seconds) at or above which to alarm. */
  readonly poolerMaxWaitSeconds: number;
  /** The load balancer's UnHealthyHostCount (Maximum, per listener's target group) at or above which to alarm. */
  readonly poolerUnhealthyHosts: number;
  /**
   * Hosts missing from a load balancer target group's healthy hosts (the fleet's hosts minus HealthyHostCount,
   * Minimum) at or above which to alarm: powered-off or terminated hosts are neither healthy nor unhealthy.
   */
  readonly poolerMissingHosts: number;
  /** Lambda Errors (Sum per period) at or above which to alarm. */
  readonly functionErrors: number;
  /** Lambda Throttles (Sum per period) at or above which to alarm. */
  readonly functionThrottles: number;
}

/**
 * AlarmThresholds with every threshold optional: what a Dashboard is given, each threshold left
 * out taking its default. Spelled out rather than `Partial<AlarmThresholds>`, which jsii cannot carry
 * to other languages; ALARM_THRESHOLD_OPTIONS_MATCH keeps the two in step.
 */
export interface AlarmThresholdOptions {
  /**
   * Instance CPUUtilization (Average, percent) at or above which to alarm.
   * @default 80
   */
  readonly cpuUtilizationPercent?: number;
  /**
   * Instance FreeableMemory (Minimum, bytes) at or below which to alarm.
   * @default 1 GiB
   */
  readonly freeableMemoryBytes?: number;
  /**
   * Reader AuroraReplicaLag (Maximum, ms) at or above which to alarm.
   * @default 1000
   */
  readonly replicaLagMs?: number;
  /**
   * Instance FreeEphemeralStorage (Minimum, bytes: the Optimized Reads NVMe left) at or below which to alarm.
   * @default 10 GiB
   */
  readonly freeEphemeralStorageBytes?: number;
  /**
   * Share of the pool ceiling (Sum of DatabaseConnections / Sum of MaxDatabaseConnectionsAllowed, percent) at or above which to alarm.
   * @default 90
   */
  readonly proxyPoolUtilizationPercent?: number;
  /**
   * DatabaseConnectionsCurrentlySessionPinned (Sum) at or above which to alarm.
   * @default 10
   */
  readonly pinnedConnections?: number;
  /**
   * PgBouncer ClientsWaiting (Sum over the hosts, per listener and target) at or above which to alarm.
   * @default 10
   */
  readonly poolerClientsWaiting?: number;
  /**
   * PgBouncer MaxWait (Maximum over the hosts, per listener and target, seconds) at or above which to alarm.
   * @default 5
   */
  readonly poolerMaxWaitSeconds?: number;
  /**
   * The load balancer's UnHealthyHostCount (Maximum, per listener's target group) at or above which to alarm.
   * @default 1
   */
  readonly poolerUnhealthyHosts?: number;
  /**
   * Hosts missing from a load balancer target group's healthy hosts (the fleet's hosts minus HealthyHostCount,
   * Minimum) at or above which to alarm: powered-off or terminated hosts are neither healthy nor unhealthy.
   * @default 1
   */
  readonly poolerMissingHosts?: number;
  /**
   * Lambda Errors (Sum per period) at or above which to alarm.
   * @default 1
   */
  readonly functionErrors?: number;
  /**
   * Lambda Throttles (Sum per period) at or above which to alarm.
   * @default 1
   */
  readonly functionThrottles?: number;
}

/** Fails to compile when AlarmThresholdOptions names other thresholds than AlarmThresholds. */
export const ALARM_THRESHOLD_OPTIONS_MATCH: [Required<AlarmThresholdOptions>, AlarmThresholds] extends [AlarmThresholds, Required<AlarmThresholdOptions>] ? true : never = true;

export const DEFAULT_ALARM_THRESHOLDS: AlarmThresholds = {
  cpuUtilizationPercent: 80,
  freeableMemoryBytes: 1 * 1024 ** 3,
  replicaLagMs: 1000,
  freeEphemeralStorageBytes: 10 * 1024 ** 3,
  proxyPoolUtilizationPercent: 90,
  pinnedConnections: 10,
  // A waiting client is normal under transaction pooling for an instant; ten for minutes is a pool too small.
  poolerClientsWaiting: 10,
  poolerMaxWaitSeconds: 5,
  poolerUnhealthyHosts: 1,
  poolerMissingHosts: 1,
  functionErrors: 1,
  functionThrottles: 1,
};

/**
 * The unit of each alarm threshold. A `percent` threshold is a share (above 0, at most 100); the others
 * are amounts (0 or more). The rule table and the Terraform module read this, not the names.
 */
export const ALARM_THRESHOLD_UNITS: Readonly<Record<keyof AlarmThresholds, 'percent' | 'bytes' | 'milliseconds' | 'seconds' | 'count'>> = {
  cpuUtilizationPercent: 'percent',
  freeableMemoryBytes: 'bytes',
  replicaLagMs: 'milliseconds',
  freeEphemeralStorageBytes: 'bytes',
  proxyPoolUtilizationPercent: 'percent',
  pinnedConnections: 'count',
  poolerClientsWaiting: 'count',
  poolerMaxWaitSeconds: 'seconds',
  poolerUnhealthyHosts: 'count',
  poolerMissingHosts: 'count',
  functionErrors: 'count',
  functionThrottles: 'count',
};
