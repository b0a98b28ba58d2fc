/**
 * The dashboard metric catalog: every CloudWatch metric the kit charts, with the dimension set it is
 * published under. The CDK dashboard and the Terraform dashboard module both render from this list, and
 * tests check that every entry appears on both.
 *
 * Sources: "Amazon CloudWatch metrics for Amazon Aurora" (instance-level metrics, the Optimized Reads
 * ones appear only on NVMe instances), "Monitoring RDS Proxy metrics with Amazon CloudWatch" (the
 * four dimension sets), and "Lambda function metrics".
 */

/**
 * What a metric is split by:
 * - `instance`: AWS/RDS, DBInstanceIdentifier.
 * - `proxy-endpoint`: AWS/RDS, ProxyName + EndpointName (client-side proxy metrics, one line per endpoint).
 * - `proxy-target-role`: AWS/RDS, ProxyName + TargetGroup + TargetRole (database-side proxy metrics,
 *   split READ_WRITE / READ_ONLY; RDS Proxy does not publish these per endpoint).
 * - `function`: AWS/Lambda, FunctionName.
 */
export type MetricScope = 'instance' | 'proxy-endpoint' | 'proxy-target-role' | 'function';

export type MetricStatistic = 'Average' | 'Sum' | 'Maximum' | 'Minimum' | 'p50' | 'p99';

export interface MetricSpec {
  readonly namespace: 'AWS/RDS' | 'AWS/Lambda';
  readonly metricName: string;
  readonly scope: MetricScope;
  /** Statistics charted; the first is the one alarms use. */
  readonly statistics: ReadonlyArray<MetricStatistic>;
  readonly unit: string;
  /** Published only on Optimized Reads (NVMe) instances. */
  readonly optimizedReadsOnly?: boolean;
  readonly description: string;
}

export const METRIC_CATALOG: ReadonlyArray<MetricSpec> = [
  // Aurora, per instance
  { namespace: 'AWS/RDS', metricName: 'DatabaseConnections', scope: 'instance', statistics: ['Average', 'Maximum'], unit: 'Count', description: 'Server connections open on the instance' },
  { namespace: 'AWS/RDS', metricName: 'CPUUtilization', scope: 'instance', statistics: ['Average'], unit: 'Percent', description: 'Instance CPU' },
  { namespace: 'AWS/RDS', metricName: 'FreeableMemory', scope: 'instance', statistics: ['Minimum'], unit: 'Bytes', description: 'Memory left; each server connection costs some' },
  { namespace: 'AWS/RDS', metricName: 'BufferCacheHitRatio', scope: 'instance', statistics: ['Average'], unit: 'Percent', description: 'Reads served from the in-memory buffer pool' },
  { namespace: 'AWS/RDS', metricName: 'AuroraReplicaLag', scope: 'instance', statistics: ['Maximum'], unit: 'Milliseconds', description: 'Reader lag behind the writer' },
  { namespace: 'AWS/RDS', metricName: 'FreeLocalStorage', scope: 'instance', statistics: ['Minimum'], unit: 'Bytes', description: 'Local NVMe storage left for temporary objects' },
  { namespace: 'AWS/RDS', metricName: 'ReadIOPSEphemeralStorage', scope: 'instance', statistics: ['Average'], unit: 'Count/Second', optimizedReadsOnly: true, description: 'Read IOPS on the local NVMe storage' },
  { namespace: 'AWS/RDS', metricName: 'ReadLatencyEphemeralStorage', scope: 'instance', statistics: ['Average'], unit: 'Milliseconds', optimizedReadsOnly: true, description: 'Read latency of the local NVMe storage' },
  { namespace: 'AWS/RDS', metricName: 'AuroraOptimizedReadsCacheHitRatio', scope: 'instance', statistics: ['Average'], unit: 'Percent', optimizedReadsOnly: true, description: 'Reads served from the NVMe tiered cache' },
  // RDS Proxy, per endpoint (client side)
  { namespace: 'AWS/RDS', metricName: 'ClientConnections', scope: 'proxy-endpoint', statistics: ['Sum'], unit: 'Count', description: 'Client connections open on the endpoint' },
  { namespace: 'AWS/RDS', metricName: 'ClientConnectionsSetupFailedAuth', scope: 'proxy-endpoint', statistics: ['Sum'], unit: 'Count', description: 'Client connection attempts that failed authentication' },
  { namespace: 'AWS/RDS', metricName: 'DatabaseConnectionsBorrowLatency', scope: 'proxy-endpoint', statistics: ['Average', 'p99'], unit: 'Microseconds', description: 'Time to borrow a pooled connection' },
  { namespace: 'AWS/RDS', metricName: 'QueryDatabaseResponseLatency', scope: 'proxy-endpoint', statistics: ['Average', 'p99'], unit: 'Microseconds', description: 'Database response time seen by the proxy' },
  { namespace: 'AWS/RDS', metricName: 'QueryResponseLatency', scope: 'proxy-endpoint', statistics: ['Average', 'p99'], unit: 'Microseconds', description: 'Query response time seen by clients' },
  { namespace: 'AWS/RDS', metricName: 'QueryRequests', scope: 'proxy-endpoint', statistics: ['Sum'], unit: 'Count', description: 'Queries received' },
  // RDS Proxy, per target role (database side)
  { namespace: 'AWS/RDS', metricName: 'DatabaseConnections', scope: 'proxy-target-role', statistics: ['Sum'], unit: 'Count', description: 'Server connections the proxy holds' },
  { namespace: 'AWS/RDS', metricName: 'DatabaseConnectionsCurrentlySessionPinned', scope: 'proxy-target-role', statistics: ['Sum'], unit: 'Count', description: 'Server connections pinned to one client session' },
  { namespace: 'AWS/RDS', metricName: 'MaxDatabaseConnectionsAllowed', scope: 'proxy-target-role', statistics: ['Maximum'], unit: 'Count', description: 'Pool ceiling from MaxConnectionsPercent' },
  { namespace: 'AWS/RDS', metricName: 'AvailabilityPercentage', scope: 'proxy-target-role', statistics: ['Minimum'], unit: 'Percent', description: 'Share of time the target role was available' },
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

/** Alarm thresholds the dashboard sets by default; each is a prop of DatabaseDashboard. */
export interface AlarmThresholds {
  /** Instance CPUUtilization (Average, percent) at or above which to alarm. */
  readonly cpuUtilizationPercent: number;
  /** Instance FreeableMemory (Minimum, bytes) at or below which to alarm. */
  readonly freeableMemoryBytes: number;
  /** Reader AuroraReplicaLag (Maximum, ms) at or above which to alarm. */
  readonly replicaLagMs: number;
  /** Instance FreeLocalStorage (Minimum, bytes) at or below which to alarm. */
  readonly freeLocalStorageBytes: number;
  /** Share of the pool ceiling (DatabaseConnections / MaxDatabaseConnectionsAllowed, percent) at or above which to alarm. */
  readonly proxyPoolUtilizationPercent: number;
  /** DatabaseConnectionsCurrentlySessionPinned (Sum) at or above which to alarm. */
  readonly pinnedConnections: number;
  /** Lambda Errors (Sum per period) at or above which to alarm. */
  readonly functionErrors: number;
  /** Lambda Throttles (Sum per period) at or above which to alarm. */
  readonly functionThrottles: number;
}

export const DEFAULT_ALARM_THRESHOLDS: AlarmThresholds = {
  cpuUtilizationPercent: 80,
  freeableMemoryBytes: 1 * 1024 ** 3,
  replicaLagMs: 1000,
  freeLocalStorageBytes: 10 * 1024 ** 3,
  proxyPoolUtilizationPercent: 90,
  pinnedConnections: 10,
  functionErrors: 1,
  functionThrottles: 1,
};

/**
 * The unit of each alarm threshold. A `percent` threshold is a share (above 0, at most 100); the others
 * are amounts (0 or more). The rule table and the Terraform module read this, not the names.
 */
export const ALARM_THRESHOLD_UNITS: Readonly<Record<keyof AlarmThresholds, 'percent' | 'bytes' | 'milliseconds' | 'count'>> = {
  cpuUtilizationPercent: 'percent',
  freeableMemoryBytes: 'bytes',
  replicaLagMs: 'milliseconds',
  freeLocalStorageBytes: 'bytes',
  proxyPoolUtilizationPercent: 'percent',
  pinnedConnections: 'count',
  functionErrors: 'count',
  functionThrottles: 'count',
};
