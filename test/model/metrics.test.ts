import { DEFAULT_ALARM_THRESHOLDS, METRIC_CATALOG, MetricScope, metricsOfScope } from '../../lib/model';
import { POOLER_METRICS, POOLER_METRICS_NAMESPACE } from '../../lib/model/pgbouncer-metrics';

/** The namespace each scope's metrics are published in. */
const SCOPE_NAMESPACES: Record<MetricScope, string> = {
  instance: 'AWS/RDS',
  'proxy-endpoint': 'AWS/RDS',
  'proxy-target-role': 'AWS/RDS',
  'pooler-target': POOLER_METRICS_NAMESPACE,
  'pooler-target-group': 'AWS/NetworkELB',
  function: 'AWS/Lambda',
};

/** The metrics DESIGN requires on the dashboard, by scope. */
const REQUIRED: ReadonlyArray<readonly [MetricScope, string]> = [
  ['instance', 'DatabaseConnections'],
  ['instance', 'CPUUtilization'],
  ['instance', 'FreeableMemory'],
  ['instance', 'BufferCacheHitRatio'],
  ['instance', 'AuroraReplicaLag'],
  ['instance', 'FreeLocalStorage'],
  ['instance', 'FreeEphemeralStorage'],
  ['instance', 'ReadIOPSEphemeralStorage'],
  ['instance', 'ReadLatencyEphemeralStorage'],
  ['instance', 'AuroraOptimizedReadsCacheHitRatio'],
  ['proxy-endpoint', 'ClientConnections'],
  ['proxy-target-role', 'DatabaseConnections'],
  ['proxy-target-role', 'DatabaseConnectionsCurrentlySessionPinned'],
  ['proxy-endpoint', 'DatabaseConnectionsBorrowLatency'],
  ['proxy-endpoint', 'QueryDatabaseResponseLatency'],
  ['proxy-target-role', 'AvailabilityPercentage'],
  // The PgBouncer engine (issue 9): client connections, server connections per target, waiting clients,
  // max wait, transaction and query rates; and the load balancer's view of the hosts.
  ['pooler-target', 'ClientConnections'],
  ['pooler-target', 'ServerConnections'],
  ['pooler-target', 'ClientsWaiting'],
  ['pooler-target', 'MaxWait'],
  ['pooler-target', 'Transactions'],
  ['pooler-target', 'Queries'],
  ['pooler-target-group', 'HealthyHostCount'],
  ['pooler-target-group', 'UnHealthyHostCount'],
  ['function', 'Invocations'],
  ['function', 'Errors'],
  ['function', 'Throttles'],
  ['function', 'Duration'],
  ['function', 'ConcurrentExecutions'],
];

const find = (scope: MetricScope, name: string) => METRIC_CATALOG.find((m) => m.scope === scope && m.metricName === name);

describe('metric catalog', () => {
  test.each(REQUIRED)('has %s %s', (scope, name) => {
    expect(find(scope, name)).toBeDefined();
  });

  test('Lambda Duration is charted at p50 and p99', () => {
    expect(find('function', 'Duration')!.statistics).toEqual(expect.arrayContaining(['p50', 'p99']));
  });

  test('the Optimized Reads metrics, and only they, are flagged NVMe-only', () => {
    const flagged = METRIC_CATALOG.filter((m) => m.optimizedReadsOnly).map((m) => m.metricName).sort();
    expect(flagged).toEqual(['AuroraOptimizedReadsCacheHitRatio', 'FreeEphemeralStorage', 'ReadIOPSEphemeralStorage', 'ReadLatencyEphemeralStorage']);
  });

  test('each (scope, metric) appears once; namespaces follow the scope; statistics and units are set', () => {
    const keys = METRIC_CATALOG.map((m) => `${m.scope}/${m.metricName}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const m of METRIC_CATALOG) {
      expect([m.metricName, m.namespace]).toEqual([m.metricName, SCOPE_NAMESPACES[m.scope]]);
      expect(m.statistics.length).toBeGreaterThan(0);
      expect(new Set(m.statistics).size).toBe(m.statistics.length);
      expect(m.unit).not.toBe('');
      expect(m.description).not.toBe('');
    }
  });

  test('metricsOfScope partitions the catalog', () => {
    const scopes = Object.keys(SCOPE_NAMESPACES) as MetricScope[];
    expect(scopes.flatMap((s) => metricsOfScope(s)).length).toBe(METRIC_CATALOG.length);
    expect(metricsOfScope('function').every((m) => m.scope === 'function')).toBe(true);
  });

  test('the PgBouncer engine\'s entries are its exporter\'s table, at the statistic and unit the hosts publish', () => {
    // GIVEN the exporter's table; WHEN the catalog's pooler-target scope is read
    const charted = metricsOfScope('pooler-target').map((m) => [m.metricName, m.statistics, m.unit, m.description]);
    // THEN it holds every metric the hosts publish, and nothing else
    expect(charted).toEqual(POOLER_METRICS.map((m) => [m.metricName, [m.statistic], m.unit, m.description]));
  });

  test('the pool-utilization alarm has both of its inputs in the catalog', () => {
    expect(find('proxy-target-role', 'DatabaseConnections')).toBeDefined();
    expect(find('proxy-target-role', 'MaxDatabaseConnectionsAllowed')).toBeDefined();
  });

  test('default alarm thresholds are sane', () => {
    expect(DEFAULT_ALARM_THRESHOLDS.cpuUtilizationPercent).toBeGreaterThan(0);
    expect(DEFAULT_ALARM_THRESHOLDS.cpuUtilizationPercent).toBeLessThanOrEqual(100);
    expect(DEFAULT_ALARM_THRESHOLDS.proxyPoolUtilizationPercent).toBeGreaterThan(0);
    expect(DEFAULT_ALARM_THRESHOLDS.proxyPoolUtilizationPercent).toBeLessThanOrEqual(100);
    expect(DEFAULT_ALARM_THRESHOLDS.freeableMemoryBytes).toBe(2 ** 30);
    expect(DEFAULT_ALARM_THRESHOLDS.freeEphemeralStorageBytes).toBe(10 * 2 ** 30);
    for (const value of Object.values(DEFAULT_ALARM_THRESHOLDS)) expect(value).toBeGreaterThanOrEqual(0);
  });
});
