/**
 * The PgBouncer engine's CloudWatch metrics: what each host's exporter publishes from PgBouncer's admin
 * console, and what the dashboard charts and alarms on. One table, so the exporter (host/apk_host.py, through kit.json)
 * and both flavours' dashboards name the same metrics, units and dimensions.
 *
 * RDS Proxy publishes its own metrics in AWS/RDS; a PgBouncer fleet publishes nothing by itself, so the
 * hosts do (PutMetricData through the VPC's monitoring interface endpoint). The figures mirror RDS Proxy's
 * (Monitoring RDS Proxy metrics with Amazon CloudWatch): client connections, server connections per
 * target, clients waiting for a connection, the longest wait, and transaction and query rates.
 *
 * Each host publishes once per period with the same dimensions as every other host of the fleet, so a
 * `Sum` over one period adds the hosts up (every count is a fleet total) and a `Maximum` is the worst host.
 */

/** The custom namespace the hosts publish to. */
export const POOLER_METRICS_NAMESPACE = 'AuroraProxyKit/PgBouncer';

/** How often each host publishes: one datapoint per metric per period, the dashboard's period. */
export const POOLER_METRICS_PERIOD_SECONDS = 60;

/**
 * The Listener dimension of each listener's processes: its endpoint role, with `_SESSION` for the session
 * pooling listeners, so their pools (a share of the same targets' budgets) are told apart from the
 * transaction pools'.
 */
export const POOLER_METRIC_LISTENERS = { readWrite: 'READ_WRITE', readOnly: 'READ_ONLY', readWriteSession: 'READ_WRITE_SESSION', readOnlySession: 'READ_ONLY_SESSION' } as const;

/**
 * The dimensions every datapoint carries:
 * - `Fleet`: the fleet's name (the PgBouncerProxy's `fleetName`, Terraform's `name`);
 * - `Listener`: the listener whose processes reported it (POOLER_METRIC_LISTENERS: `READ_WRITE`, `READ_ONLY`,
 *   `READ_WRITE_SESSION`, `READ_ONLY_SESSION`);
 * - `Target`: the first label of the pool's server host: the cluster identifier for the read/write
 *   listener (its pools use the cluster endpoint), the reader's instance identifier for the read-only one.
 */
export const POOLER_METRIC_DIMENSIONS = ['Fleet', 'Listener', 'Target'] as const;
export type PoolerMetricDimension = (typeof POOLER_METRIC_DIMENSIONS)[number];

/** Where a metric is read: a SHOW command of the admin console and the columns added up over every pool of every process. */
export interface PoolerMetricSource {
  readonly command: 'SHOW POOLS' | 'SHOW STATS';
  readonly columns: ReadonlyArray<string>;
  /**
   * `sum`: the columns added over the pools; `max`: the largest over the pools; `delta`: a counter's
   * increase since the previous publication (SHOW STATS totals only grow).
   */
  readonly combine: 'sum' | 'max' | 'delta';
}

export interface PoolerMetricSpec {
  readonly metricName: string;
  readonly unit: 'Count' | 'Seconds';
  readonly source: PoolerMetricSource;
  /** The statistic the dashboard charts and alarms use (see the header: Sum adds the hosts up). */
  readonly statistic: 'Sum' | 'Maximum';
  readonly description: string;
  /** The RDS Proxy metric it stands for on the dashboard. */
  readonly rdsProxyCounterpart: string;
}

export const POOLER_METRICS: ReadonlyArray<PoolerMetricSpec> = [
  {
    metricName: 'ClientConnections',
    unit: 'Count',
    source: { command: 'SHOW POOLS', columns: ['cl_active', 'cl_waiting', 'cl_active_cancel_req', 'cl_waiting_cancel_req'], combine: 'sum' },
    statistic: 'Sum',
    description: 'Client connections open on the fleet',
    rdsProxyCounterpart: 'ClientConnections',
  },
  {
    metricName: 'ServerConnections',
    unit: 'Count',
    source: { command: 'SHOW POOLS', columns: ['sv_active', 'sv_idle', 'sv_used', 'sv_tested', 'sv_login'], combine: 'sum' },
    statistic: 'Sum',
    description: 'Server connections the fleet holds open to the target',
    rdsProxyCounterpart: 'DatabaseConnections',
  },
  {
    metricName: 'ClientsWaiting',
    unit: 'Count',
    source: { command: 'SHOW POOLS', columns: ['cl_waiting'], combine: 'sum' },
    statistic: 'Sum',
    description: 'Clients waiting for a server connection',
    rdsProxyCounterpart: 'DatabaseConnectionsCurrentlySessionPinned',
  },
  {
    metricName: 'MaxWait',
    unit: 'Seconds',
    source: { command: 'SHOW POOLS', columns: ['maxwait', 'maxwait_us'], combine: 'max' },
    statistic: 'Maximum',
    description: 'The longest a waiting client has waited for a server connection',
    rdsProxyCounterpart: 'DatabaseConnectionsBorrowLatency',
  },
  {
    metricName: 'Transactions',
    unit: 'Count',
    source: { command: 'SHOW STATS', columns: ['total_xact_count'], combine: 'delta' },
    statistic: 'Sum',
    description: 'Transactions pooled in the period',
    rdsProxyCounterpart: 'DatabaseConnectionRequests',
  },
  {
    metricName: 'Queries',
    unit: 'Count',
    source: { command: 'SHOW STATS', columns: ['total_query_count'], combine: 'delta' },
    statistic: 'Sum',
    description: 'Queries pooled in the period',
    rdsProxyCounterpart: 'QueryRequests',
  },
];

/** The Target dimension of a pool's server host: its first DNS label (the cluster or instance identifier). */
export function poolerMetricTarget(serverHost: string): string {
  return serverHost.split('.')[0];
}

/**
 * The fleet's name, the Fleet dimension of every datapoint: at most 255 characters, as CloudFormation's
 * alarm dimensions take (the CloudWatch API itself accepts 1,024), and only characters that need no
 * quoting in the hosts' user data, where it is a shell value.
 */
export const FLEET_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._/:-]{0,254}$';

/**
 * The hosts' permission to publish: PutMetricData has no resource-level permissions (Resource "*"), and
 * the `cloudwatch:namespace` condition key limits it to the engine's namespace (Service Authorization
 * Reference, "Actions, resources, and condition keys for Amazon CloudWatch": PutMetricData takes
 * cloudwatch:namespace; CloudWatch User Guide, iam-cw-condition-keys-namespace).
 */
export const POOLER_METRICS_POLICY = {
  actions: ['cloudwatch:PutMetricData'],
  conditionKey: 'cloudwatch:namespace',
  sources: ['https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazoncloudwatch.html', 'https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/iam-cw-condition-keys-namespace.html'],
} as const;
