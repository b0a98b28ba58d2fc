import {
  ALARM_CATALOG,
  ALARM_THRESHOLD_UNITS,
  ALARM_TOPIC_ACCESS,
  FLEET_HOSTS_TOKEN,
  METRIC_CATALOG,
  alarmExpression,
  alarmArnPattern,
  catalogMetric,
  coversInstance,
  metricDimensions,
  poolerTargetSeries,
} from '../../lib/model';
import { EndpointRole } from '../../lambda/src/environment';

describe('alarm catalog', () => {
  test('names are unique per scope', () => {
    const keys = ALARM_CATALOG.map((a) => `${a.scope}/${a.name}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  test.each(ALARM_CATALOG.map((a) => [a.name, a] as const))('%s reads catalog metrics of its scope at their first statistic', (_name, alarm) => {
    for (const input of Object.values(alarm.inputs)) {
      const spec = catalogMetric(alarm.scope, input.metricName);
      expect([input.namespace, input.statistic]).toEqual([spec.namespace, spec.statistics[0]]);
    }
    // An expression reads two metrics, or one and the fleet's host count.
    expect(Object.keys(alarm.inputs).length).toBe(alarm.expression ? (alarm.expression.expression.includes(FLEET_HOSTS_TOKEN) ? 1 : 2) : 1);
  });

  test('every threshold has an alarm', () => {
    expect(new Set(ALARM_CATALOG.map((a) => a.threshold))).toEqual(new Set(Object.keys(ALARM_THRESHOLD_UNITS)));
  });

  test('the NVMe-left alarm watches FreeEphemeralStorage (the ephemeral NVMe), falling to its threshold', () => {
    const nvme = ALARM_CATALOG.find((a) => a.threshold === 'freeEphemeralStorageBytes')!;
    expect([nvme.inputs.m.metricName, nvme.comparison]).toEqual(['FreeEphemeralStorage', 'LessThanOrEqualToThreshold']);
    expect(ALARM_CATALOG.some((a) => Object.values(a.inputs).some((i) => i.metricName === 'FreeLocalStorage'))).toBe(false);
  });

  test('pool utilization sums both of its inputs over the proxy hosts', () => {
    const pool = ALARM_CATALOG.find((a) => a.name === 'PoolUtilization')!;
    expect(pool.inputs).toEqual({
      connections: { namespace: 'AWS/RDS', metricName: 'DatabaseConnections', statistic: 'Sum' },
      allowed: { namespace: 'AWS/RDS', metricName: 'MaxDatabaseConnectionsAllowed', statistic: 'Sum' },
    });
  });

  test('the PgBouncer engine alarms on waiting clients and their wait per pool target, and on unhealthy and missing hosts per target group', () => {
    const pooler = ALARM_CATALOG.filter((a) => a.scope.startsWith('pooler-')).map((a) => {
      const [id, input] = Object.entries(a.inputs)[0]!;
      return [a.name, a.scope, a.expression?.expression ?? id, input.metricName, input.statistic, a.comparison, a.threshold, a.missingData];
    });
    expect(pooler).toEqual([
      ['ClientsWaiting', 'pooler-target', 'm', 'ClientsWaiting', 'Sum', 'GreaterThanOrEqualToThreshold', 'poolerClientsWaiting', 'notBreaching'],
      ['MaxWait', 'pooler-target', 'm', 'MaxWait', 'Maximum', 'GreaterThanOrEqualToThreshold', 'poolerMaxWaitSeconds', 'notBreaching'],
      ['UnhealthyHosts', 'pooler-target-group', 'm', 'UnHealthyHostCount', 'Maximum', 'GreaterThanOrEqualToThreshold', 'poolerUnhealthyHosts', 'notBreaching'],
      // Powered-off or terminated hosts are neither healthy nor unhealthy; no data at all is no host.
      ['MissingHosts', 'pooler-target-group', 'FLEET_HOSTS - healthy', 'HealthyHostCount', 'Minimum', 'GreaterThanOrEqualToThreshold', 'poolerMissingHosts', 'breaching'],
    ]);
    expect(ALARM_CATALOG.filter((a) => a.missingData === 'breaching').map((a) => a.name)).toEqual(['MissingHosts']);
  });

  test('GIVEN the missing hosts alarm WHEN its expression is written for a fleet THEN the fleet\'s host count stands for the token, and an alarm without the token is unchanged', () => {
    const missing = ALARM_CATALOG.find((a) => a.name === 'MissingHosts')!;
    expect(alarmExpression(missing, 3)).toBe('3 - healthy');
    expect(() => alarmExpression(missing)).toThrow('alarm MissingHosts needs the fleet\'s host count');
    expect(alarmExpression(ALARM_CATALOG.find((a) => a.name === 'PoolUtilization')!)).toBe('100 * connections / IF(allowed > 0, allowed, 1)');
  });

  test('replica lag is alarmed on the readers only, which publish it', () => {
    expect(ALARM_CATALOG.find((a) => a.name === 'ReplicaLag')!.instances).toBe('readers');
    expect(ALARM_CATALOG.filter((a) => a.name !== 'ReplicaLag').every((a) => a.instances === 'all')).toBe(true);
  });
});

describe('AWS metric facts', () => {
  test.each([
    ['instance', 'FreeEphemeralStorage', { unit: 'Bytes', optimizedReadsOnly: true }],
    ['instance', 'ReadLatencyEphemeralStorage', { unit: 'Seconds' }],
    ['instance', 'AuroraOptimizedReadsCacheHitRatio', { instances: 'writer' }],
    ['instance', 'AuroraReplicaLag', { instances: 'readers' }],
    ['proxy-target-role', 'DatabaseConnections', { statistics: ['Sum'] }],
    ['proxy-target-role', 'MaxDatabaseConnectionsAllowed', { statistics: ['Sum'] }],
    ['pooler-target-group', 'HealthyHostCount', { namespace: 'AWS/NetworkELB', statistics: ['Minimum'], unit: 'Count' }],
    ['pooler-target-group', 'UnHealthyHostCount', { namespace: 'AWS/NetworkELB', statistics: ['Maximum'], unit: 'Count' }],
  ] as const)('%s %s follows AWS (%j), with its source', (scope, metricName, fact) => {
    const spec = catalogMetric(scope, metricName);
    expect(spec).toMatchObject(fact);
    expect(spec.aws!.sources.length).toBeGreaterThan(0);
    for (const source of spec.aws!.sources) expect(source).toMatch(/^https:\/\/docs\.aws\.amazon\.com\//);
  });

  test('every recorded fact names a constraint and documented sources', () => {
    for (const spec of METRIC_CATALOG.filter((m) => m.aws)) {
      expect(spec.aws!.constraint).not.toBe('');
      for (const source of spec.aws!.sources) expect(source).toMatch(/^https:\/\//);
    }
    for (const source of ALARM_TOPIC_ACCESS.aws.sources) expect(source).toMatch(/^https:\/\//);
  });
});

describe('dimensions and lines', () => {
  test('each scope has its dimension set, in AWS order, with the one target group', () => {
    expect(metricDimensions('instance', { instanceIdentifier: 'w' })).toEqual({ DBInstanceIdentifier: 'w' });
    expect(Object.entries(metricDimensions('proxy-endpoint', { proxyName: 'p', endpointName: 'e' }))).toEqual([
      ['ProxyName', 'p'],
      ['EndpointName', 'e'],
    ]);
    expect(Object.entries(metricDimensions('proxy-target-role', { proxyName: 'p', targetRole: EndpointRole.READ_ONLY }))).toEqual([
      ['ProxyName', 'p'],
      ['TargetGroup', 'default'],
      ['TargetRole', 'READ_ONLY'],
    ]);
    expect(metricDimensions('function', { functionName: 'f' })).toEqual({ FunctionName: 'f' });
  });

  test('the PgBouncer engine\'s scopes: the hosts\' Fleet, Listener and Target; the load balancer\'s TargetGroup and LoadBalancer', () => {
    expect(Object.entries(metricDimensions('pooler-target', { fleetName: 'f', listener: EndpointRole.READ_ONLY, target: 'r1' }))).toEqual([
      ['Fleet', 'f'],
      ['Listener', 'READ_ONLY'],
      ['Target', 'r1'],
    ]);
    expect(metricDimensions('pooler-target-group', { loadBalancer: 'net/lb/1', targetGroup: 'targetgroup/tg/2' })).toEqual({ LoadBalancer: 'net/lb/1', TargetGroup: 'targetgroup/tg/2' });
    expect(() => metricDimensions('pooler-target', { fleetName: 'f', listener: EndpointRole.READ_WRITE })).toThrow('a pooler-target metric needs target');
  });

  test('pool target lines: the writer once, the readers numbered as the instances are', () => {
    expect(poolerTargetSeries(EndpointRole.READ_WRITE, ['c'])).toEqual([{ label: 'READ_WRITE writer', alarmName: 'PoolerReadWrite', target: 'c' }]);
    expect(poolerTargetSeries(EndpointRole.READ_ONLY, ['a', 'b'])).toEqual([
      { label: 'READ_ONLY reader-1', alarmName: 'PoolerReadOnly1', target: 'a' },
      { label: 'READ_ONLY reader-2', alarmName: 'PoolerReadOnly2', target: 'b' },
    ]);
    expect(() => poolerTargetSeries(EndpointRole.READ_WRITE, ['a', 'b'])).toThrow('the READ_WRITE listener pools for one target, not 2');
    // A session-pooling listener's lines: the same targets, named and alarmed apart.
    expect(poolerTargetSeries(EndpointRole.READ_ONLY, ['a'], true)).toEqual([{ label: 'READ_ONLY_SESSION reader-1', alarmName: 'PoolerReadOnlySession1', target: 'a' }]);
  });

  test('a subject without a value its scope needs is refused', () => {
    expect(() => metricDimensions('proxy-target-role', { proxyName: 'p' })).toThrow('a proxy-target-role metric needs targetRole');
  });

  test('instance selections: the writer is index 0', () => {
    expect([0, 1, 2].map((i) => coversInstance('all', i))).toEqual([true, true, true]);
    expect([0, 1, 2].map((i) => coversInstance('writer', i))).toEqual([true, false, false]);
    expect([0, 1, 2].map((i) => coversInstance('readers', i))).toEqual([false, true, true]);
  });

  test('the alarm ARN pattern matches the alarms of one prefix', () => {
    expect(alarmArnPattern('aws', 'eu-west-1', '111122223333', 'kit-')).toBe('arn:aws:cloudwatch:eu-west-1:111122223333:alarm:kit-*');
  });
});
