import {
  CLUSTER_RULES,
  DASHBOARD_RULES,
  DEFAULT_ALARM_THRESHOLDS,
  DEPLOYMENT_RULES,
  ENDPOINT_RULES,
  FUNCTION_RULES,
  MAX_PROXY_ENDPOINTS,
  PROXY_RULES,
  PGBOUNCER_PROXY_RULES,
  ROLE_BOOTSTRAP_RULES,
  RULE_TABLES,
  Rule,
  evaluateRules,
  isValueRule,
  runRules,
  terraformUses,
} from '../../lib/model';
import { FLEET_RULES } from '../../lib/model/pgbouncer-fleet-rules';
import { POOLER_HOST_RULES } from '../../lib/model/pgbouncer-hosts';
import { ValidationVector, loadVectors } from '../helpers/vectors';

type Input = Record<string, unknown>;

/** How each rule id of the vectors file is evaluated, and which input keys it may be given. */
interface RuleDriver {
  /** Input keys the rule's input interface has (the model's property names). */
  readonly keys: ReadonlyArray<string>;
  /** Keys every vector of this rule must set (else the rule would be skipped, and pass vacuously). */
  readonly required: ReadonlyArray<string>;
  readonly evaluate: (input: Input) => string | undefined;
}

const CLUSTER_KEYS = ['instanceClass', 'engineVersion', 'readers', 'backupRetentionDays', 'parameters', 'clusterIdentifier', 'monitoringInterval', 'createKmsKey', 'kmsKeyArn'];
const PROXY_KEYS = ['proxyName', 'maxConnectionsPercent', 'maxIdleConnectionsPercent', 'connectionBorrowTimeoutSeconds', 'sessionPinningFilters', 'idleClientTimeoutSeconds', 'endpoints', 'readers', 'targetRole'];
const ENDPOINT_KEYS = ['endpointName', 'targetRole'];
const LAMBDA_CODE_KEYS = ['filename', 's3Bucket', 's3Key'];
const API_ROUTE_KEYS = ['subnetsHaveEgress', 'vpcEndpoints'];
const FUNCTION_KEYS = ['dbUser', 'memorySizeMb', 'timeoutSeconds', 'reservedConcurrentExecutions', 'connectionMode', 'targetRole', 'isProxyDefaultEndpoint', 'proxyDefaultEndpoint', 'tlsCaCertificate', 'passwordSecretArn', 'connectArnPrefix', 'auth', 'createKmsKey', 'kmsKeyArn', ...LAMBDA_CODE_KEYS, ...API_ROUTE_KEYS];
const DASHBOARD_KEYS = [...Object.keys(DEFAULT_ALARM_THRESHOLDS), 'instanceIdentifiers'];
const DEPLOYMENT_KEYS = ['readOnlyEndpoints'];
const FLEET_KEYS = ['hosts', 'vcpusPerHost', 'readers', 'maxConnections', 'pool', 'tcpIdleTimeoutSeconds', 'maxClientConnections', 'sessionRoles', 'sessionMaxConnectionsPercent'];
const POOLER_HOST_KEYS = ['instanceType', 'imageId', 'readOnlyServerUser', 'consumerUser'];
const PGBOUNCER_PROXY_KEYS = ['fleetName', 'loadBalancerName', 'consumerUsers', 's3PrefixListId', 'vpcCidrBlock', 'tlsSecretArn', 'tlsCaCertificate', 'certificateFunction', 'packagesBucket', 'packagesKey', 'poolMode', 'endpointName', ...API_ROUTE_KEYS];

function tableDriver<I>(rule: Rule<I>, keys: string[]): RuleDriver {
  return {
    keys,
    // A value rule applies to each of its properties alone: a vector sets one of them.
    required: isValueRule(rule) && rule.properties.length > 1 ? [] : rule.properties,
    // runRules, not the row itself: the vectors must also hold under the table runner's skipping.
    evaluate: (input) => {
      if (isValueRule(rule) && rule.properties.length > 1) expect(Object.keys(input).filter((k) => (rule.properties as ReadonlyArray<string>).includes(k))).toHaveLength(1);
      const messages = runRules([rule], input as I);
      expect(messages.length).toBeLessThanOrEqual(1);
      return messages[0];
    },
  };
}

const DRIVERS: Record<string, RuleDriver> = {
  ...Object.fromEntries(CLUSTER_RULES.map((r) => [r.id, tableDriver(r, CLUSTER_KEYS)])),
  ...Object.fromEntries(PROXY_RULES.map((r) => [r.id, tableDriver(r, PROXY_KEYS)])),
  ...Object.fromEntries(ENDPOINT_RULES.map((r) => [r.id, tableDriver(r, ENDPOINT_KEYS)])),
  ...Object.fromEntries(FUNCTION_RULES.map((r) => [r.id, tableDriver(r, FUNCTION_KEYS)])),
  ...Object.fromEntries(DASHBOARD_RULES.map((r) => [r.id, tableDriver(r, DASHBOARD_KEYS)])),
  ...Object.fromEntries(DEPLOYMENT_RULES.map((r) => [r.id, tableDriver(r, DEPLOYMENT_KEYS)])),
  ...Object.fromEntries(ROLE_BOOTSTRAP_RULES.map((r) => [r.id, tableDriver(r, [...LAMBDA_CODE_KEYS, ...API_ROUTE_KEYS])])),
  ...Object.fromEntries(FLEET_RULES.map((r) => [r.id, tableDriver(r, FLEET_KEYS)])),
  ...Object.fromEntries(POOLER_HOST_RULES.map((r) => [r.id, tableDriver(r, POOLER_HOST_KEYS)])),
  ...Object.fromEntries(PGBOUNCER_PROXY_RULES.map((r) => [r.id, tableDriver(r, PGBOUNCER_PROXY_KEYS)])),
};

/** Rules about a missing or empty value: the message names the property, without a value. */
const NO_VALUE_RULES = [
  'cluster-kms-key',
  'function-kms-key',
  'instance-identifiers',
  'consumer-tls-server-name',
  'consumer-credential',
  'function-code-source',
  'role-bootstrap-code-source',
  'pooler-tls-certificate-pair',
  'pooler-certificate-function',
  'role-bootstrap-api-route',
  'consumer-api-route',
  'pooler-api-route',
  'pooler-signal-route',
];

/**
 * Messages name the property the user set. For the function rules that is the construct prop, whose
 * unit is implied (`memorySize`, `timeout`), not the model's unit-suffixed key.
 */
const MESSAGE_NAME: Record<string, string> = { memorySizeMb: 'memorySize', timeoutSeconds: 'timeout' };

function formatValue(value: unknown): string {
  if (Array.isArray(value)) return value.join(',');
  // A map of settings (cluster parameters) is named by its entries, key=value.
  if (value && typeof value === 'object') return Object.entries(value).map(([k, v]) => `${k}=${v}`).join(',');
  return String(value);
}

const vectors = loadVectors();
const describeVector = (v: ValidationVector) => `${v.rule} ${JSON.stringify(v.input)} ${v.accepted ? 'accepted' : 'rejected'}`;

describe('shared validation vectors', () => {
  test('rule ids are unique across the tables', () => {
    const ids = Object.values(RULE_TABLES).flatMap((rules: ReadonlyArray<Rule<never>>) => rules.map((r) => r.id));
    expect(new Set(ids).size).toBe(ids.length);
  });

  test.each(Object.keys(DRIVERS))('rule %s has at least one accepted and one rejected vector', (rule) => {
    expect(vectors.filter((v) => v.rule === rule && v.accepted).length).toBeGreaterThan(0);
    expect(vectors.filter((v) => v.rule === rule && !v.accepted).length).toBeGreaterThan(0);
  });

  test('every vector names a known rule, sets the keys the rule reads, and only keys of its input', () => {
    for (const v of vectors) {
      const driver = DRIVERS[v.rule];
      expect([describeVector(v), driver !== undefined]).toEqual([describeVector(v), true]);
      for (const key of driver.required) expect([describeVector(v), key, key in v.input]).toEqual([describeVector(v), key, true]);
      for (const key of Object.keys(v.input)) expect(driver.keys).toContain(key);
      expect(v.accepted ? v.message === null : typeof v.message === 'string').toBe(true);
    }
  });

  test('no vector is listed twice', () => {
    const keys = vectors.map((v) => `${v.rule} ${JSON.stringify(v.input)}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  test.each(vectors.map((v) => [describeVector(v), v] as const))('%s', (_name, v) => {
    // WHEN
    const message = DRIVERS[v.rule].evaluate(v.input);
    // THEN
    expect(message ?? null).toBe(v.message);
  });

  test.each(vectors.filter((v) => !v.accepted && !NO_VALUE_RULES.includes(v.rule)).map((v) => [describeVector(v), v] as const))(
    '%s: the message starts with the property and the bad value',
    (_name, v) => {
      const [key, value] = Object.entries(v.input).find(([k]) => k !== 'instanceClass' || v.rule === 'instance-class')!;
      expect(v.message!.startsWith(`${MESSAGE_NAME[key] ?? key} ${formatValue(value)} `)).toBe(true);
    },
  );

  test.each(vectors.filter((v) => !v.accepted && NO_VALUE_RULES.includes(v.rule)).map((v) => [describeVector(v), v] as const))(
    '%s: the message starts with the missing property',
    (_name, v) => {
      expect(v.message).toMatch(
        /^(kmsKeyArn is not set|instanceIdentifiers is empty|proxyDefaultEndpoint is not set|(s3Bucket|s3Key|filename) is not set|filename is set with s3Bucket or s3Key|(passwordSecretArn|tlsCaCertificate|connectArnPrefix|tlsSecretArn) is not set|(connectArnPrefix|passwordSecretArn) is set with auth (secret|iam)|certificateFunction has (neither filename nor s3_bucket and s3_key|filename with s3_bucket or s3_key|only one of s3_bucket and s3_key)|no route from [^:]+):/,
      );
    },
  );

  // The boundaries the design names; a vector file without them would not prove the rules.
  test.each([
    ['readers', { readers: 15 }, true],
    ['readers', { readers: 16 }, false],
    ['max-connections-percent', { maxConnectionsPercent: 1 }, true],
    ['max-connections-percent', { maxConnectionsPercent: 100 }, true],
    ['max-connections-percent', { maxConnectionsPercent: 0 }, false],
    ['max-connections-percent', { maxConnectionsPercent: 150 }, false],
    ['idle-within-max', { maxIdleConnectionsPercent: 60, maxConnectionsPercent: 50 }, false],
    ['borrow-timeout', { connectionBorrowTimeoutSeconds: 300 }, true],
    ['borrow-timeout', { connectionBorrowTimeoutSeconds: 301 }, false],
    ['endpoint-count', { endpoints: MAX_PROXY_ENDPOINTS }, true],
    ['endpoint-count', { endpoints: MAX_PROXY_ENDPOINTS + 1 }, false],
    ['instance-class', { instanceClass: 'db.r6g.xlarge' }, false],
    ['instance-class', { instanceClass: 'db.r6gd.large' }, false],
    ['engine-version', { engineVersion: '14.6', instanceClass: 'db.r6gd.xlarge' }, false],
    ['engine-version', { engineVersion: '15.4', instanceClass: 'db.r6gd.xlarge' }, false],
    ['engine-version', { engineVersion: '16.2', instanceClass: 'db.r8gd.xlarge' }, false],
    ['engine-version', { engineVersion: '17.9', instanceClass: 'db.r6gd.xlarge' }, true],
    ['engine-version', { engineVersion: '17' }, false],
    ['engine-version', { engineVersion: '13.9', instanceClass: 'db.r6gd.xlarge' }, false],
    ['fleet-tcp-idle-timeout', { tcpIdleTimeoutSeconds: 60 }, true],
    ['fleet-tcp-idle-timeout', { tcpIdleTimeoutSeconds: 6000 }, true],
    ['fleet-tcp-idle-timeout', { tcpIdleTimeoutSeconds: 59 }, false],
    ['fleet-tcp-idle-timeout', { tcpIdleTimeoutSeconds: 6001 }, false],
    ['fleet-hosts', { hosts: 1 }, false],
    ['fleet-readers', { readers: 0 }, false],
    ['fleet-name', { fleetName: 'f'.repeat(255) }, true],
    ['fleet-name', { fleetName: 'f'.repeat(256) }, false],
    ['fleet-load-balancer-name', { loadBalancerName: 'f'.repeat(29) }, true],
    ['fleet-load-balancer-name', { loadBalancerName: 'f'.repeat(30) }, false],
    ['pooler-consumer-users', { consumerUsers: Array.from({ length: 15 }, (_, i) => `app_${i + 1}`) }, true],
    ['pooler-consumer-users', { consumerUsers: Array.from({ length: 16 }, (_, i) => `app_${i + 1}`) }, false],
  ] as const)('the vectors include %s %j (accepted: %s)', (rule, input, accepted) => {
    const found = vectors.find((v) => v.rule === rule && JSON.stringify(v.input) === JSON.stringify(input));
    expect(found).toBeDefined();
    expect(found!.accepted).toBe(accepted);
  });

  test('specific reasons: 14.6 on r6gd fails the floor, 15.4 on r6gd is deprecated', () => {
    const message = (rule: string, input: object) => vectors.find((v) => v.rule === rule && JSON.stringify(v.input) === JSON.stringify(input))!.message;
    expect(message('engine-version', { engineVersion: '14.6', instanceClass: 'db.r6gd.xlarge' })).toMatch(/below the Optimized Reads floor 14\.9 for r6gd/);
    expect(message('engine-version', { engineVersion: '15.4', instanceClass: 'db.r6gd.xlarge' })).toMatch(/is deprecated/);
    expect(message('engine-version', { engineVersion: '16.2', instanceClass: 'db.r8gd.xlarge' })).toMatch(/floor 16\.3 for r8gd/);
    expect(message('engine-version', { engineVersion: '13.9', instanceClass: 'db.r6gd.xlarge' })).toMatch(/predates Optimized Reads/);
    expect(message('engine-version', { engineVersion: '17' })).toMatch(/not of the form MAJOR\.MINOR/);
  });
});

describe('the PgBouncer engine\'s names', () => {
  const rule = (id: string) => PGBOUNCER_PROXY_RULES.find((r) => r.id === id)!;
  // Every string of up to 3 characters over letters of both cases, digits and the punctuation either pattern names.
  const alphabet = ['a', 'z', 'A', '0', '9', '-', '_', '.', '/', ':', ' '];
  const longer = (names: string[]) => names.flatMap((x) => alphabet.map((c) => x + c));
  const one = longer(['']);
  const two = longer(one);
  const strings = ['', ...one, ...two, ...longer(two)];

  test('GIVEN every short name WHEN the module\'s load balancer rule accepts it THEN it is a valid Fleet dimension too (why fleet-name is not restated in Terraform)', () => {
    const loadBalancer = strings.filter((name) => runRules([rule('fleet-load-balancer-name')], { loadBalancerName: name }).length === 0);
    // a lower-case letter first (a, z), then letters, digits or hyphens, the last no hyphen: 2 + 2 x 4 + 2 x 5 x 4.
    expect(loadBalancer).toHaveLength(50);
    // Not one of those is refused as a Fleet dimension.
    expect(loadBalancer.filter((name) => runRules([rule('fleet-name')], { fleetName: name }).length > 0)).toEqual([]);
    for (const v of vectors.filter((x) => x.rule === 'fleet-load-balancer-name' && x.accepted)) expect(runRules([rule('fleet-name')], { fleetName: v.input.loadBalancerName as string })).toEqual([]);
  });

  test('GIVEN a CDK fleet name (the stack and construct path) WHEN it is checked THEN it is a valid Fleet dimension but no load balancer name, which CDK leaves to CloudFormation', () => {
    expect(runRules(PGBOUNCER_PROXY_RULES, { fleetName: 'MyStack/Pooling/PgBouncer' })).toEqual([]);
    expect(runRules([rule('fleet-load-balancer-name')], { loadBalancerName: 'MyStack/Pooling/PgBouncer' })).toHaveLength(1);
  });
});

describe('runRules', () => {
  test('reports every failing rule of a table, in table order', () => {
    // WHEN
    const messages = runRules(CLUSTER_RULES, { instanceClass: 'db.r6g.xlarge', engineVersion: '17.9', readers: 16, backupRetentionDays: 6 });
    // THEN
    expect(messages).toHaveLength(3);
    expect(messages[0]).toMatch(/^instanceClass db\.r6g\.xlarge /);
    expect(messages[1]).toMatch(/^readers 16 /);
    expect(messages[2]).toMatch(/^backupRetentionDays 6 /);
  });

  test('skips a rule whose properties are not all set', () => {
    expect(runRules(PROXY_RULES, { maxIdleConnectionsPercent: 60 })).toEqual([]);
    expect(runRules(PROXY_RULES, { maxIdleConnectionsPercent: 60, maxConnectionsPercent: 50 })).toHaveLength(1);
    expect(runRules(FUNCTION_RULES, {})).toEqual([]);
  });

  test('the engine-version floor is applied only when the instance class is a catalog class', () => {
    // 14.6 is deprecated; with an unknown class no floor applies, so the deprecation is what is reported.
    expect(runRules(CLUSTER_RULES, { engineVersion: '14.6', instanceClass: 'db.r6g.xlarge' })).toEqual([
      expect.stringMatching(/^instanceClass db\.r6g\.xlarge has no local NVMe/),
      expect.stringMatching(/^engineVersion 14\.6 is deprecated/),
    ]);
  });

  test('thresholds reject NaN', () => {
    expect(runRules(DASHBOARD_RULES, { cpuUtilizationPercent: NaN })).toEqual(['cpuUtilizationPercent NaN is not a percentage: use a value above 0 and at most 100']);
    expect(runRules(DASHBOARD_RULES, { replicaLagMs: NaN })).toEqual([expect.stringMatching(/^replicaLagMs NaN /)]);
  });

  test('evaluateRules names properties as a flavour asks, e.g. by Terraform variable', () => {
    const terraform = (rule: Rule<typeof input>) => terraformUses(rule)[0]?.names;
    const input = { maxConnectionsPercent: 150 };
    expect(evaluateRules(PROXY_RULES, input, terraform).map((v) => v.message)).toEqual([
      'max_connections_percent 150 is out of range: set the share of the target\'s max_connections the proxy may use (an integer from 1 to 100)',
    ]);
    expect(runRules(PROXY_RULES, input)).toEqual([
      'maxConnectionsPercent 150 is out of range: set the share of the target\'s max_connections the proxy may use (an integer from 1 to 100)',
    ]);
  });
});
