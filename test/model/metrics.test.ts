import { DEFAULT_ALARM_THRESHOLDS, METRIC_CATALOG, MetricScope, metricsOfScope } from '../../lib/model';

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
      expect([m.metricName, m.namespace]).toEqual([m.metricName, m.scope === 'function' ? 'AWS/Lambda' : 'AWS/RDS']);
      expect(m.statistics.length).toBeGreaterThan(0);
      expect(new Set(m.statistics).size).toBe(m.statistics.length);
      expect(m.unit).not.toBe('');
      expect(m.description).not.toBe('');
    }
  });

  test('metricsOfScope partitions the catalog', () => {
    const scopes: MetricScope[] = ['instance', 'proxy-endpoint', 'proxy-target-role', 'function'];
    expect(scopes.flatMap((s) => metricsOfScope(s)).length).toBe(METRIC_CATALOG.length);
    expect(metricsOfScope('function').every((m) => m.scope === 'function')).toBe(true);
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
