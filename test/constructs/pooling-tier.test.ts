/**
 * One engine interface: the same consumer, role bootstrap and dashboard code, written against IPoolingTier
 * only, built over RDS Proxy and over a PgBouncer fleet; each engine maps the interface's endpoints,
 * logins and named metrics to its own resources and CloudWatch metrics.
 */
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { EndpointRole } from '../../lambda/src/environment';
import { LambdaConsumer } from '../../lib/lambda-consumer';
import { Dashboard } from '../../lib/dashboard';
import { DatabaseRoleBootstrap } from '../../lib/database-role-bootstrap';
import { POOLER_METRICS_NAMESPACE } from '../../lib/model/pgbouncer-metrics';
import { PoolMode } from '../../lib/model/pgbouncer-ini';
import { AuroraOptimizedReads } from '../../lib/aurora-optimized-reads';
import { PgBouncerProxy } from '../../lib/pgbouncer-proxy';
import { PgBouncerProxyEndpoint } from '../../lib/pgbouncer-proxy-endpoint';
import { RdsProxy } from '../../lib/rds-proxy';
import { RdsProxyEndpoint } from '../../lib/rds-proxy-endpoint';
import { IPoolingTier, IProxyEndpoint, ProxyEngine } from '../../lib/pooling-tier';
import { isolatedVpc, joinIntrinsic, kitError, logicalIdOf, newStack } from '../helpers/cdk';

const ENGINES: ReadonlyArray<[string, ProxyEngine]> = [
  ['RDS Proxy', ProxyEngine.RDS_PROXY],
  ['a PgBouncer fleet', ProxyEngine.PGBOUNCER],
];

/** A writer and two readers in a data VPC, a consumer VPC, and a tier of `engine` in front of the cluster. */
function tierStack(engine: ProxyEngine) {
  const { stack } = newStack();
  const dataVpc = isolatedVpc(stack, 'DataVpc', '10.10.0.0/16');
  const consumerVpc = isolatedVpc(stack, 'ConsumerVpc', '10.20.0.0/16');
  const cluster = new AuroraOptimizedReads(stack, 'Cluster', { vpc: dataVpc, readers: 2 });
  const tier: IPoolingTier =
    engine === ProxyEngine.PGBOUNCER
      ? new PgBouncerProxy(stack, 'Tier', { cluster, packages: { bucket: s3.Bucket.fromBucketName(stack, 'Packages', 'kit-packages'), key: 'pgbouncer/packages.tar' } })
      : new RdsProxy(stack, 'Tier', { cluster });
  return { stack, cluster, consumerVpc, tier };
}

/** The app code under test: it knows the tier only as IPoolingTier. */
function consumersAndDashboard(stack: Stack, cluster: AuroraOptimizedReads, consumerVpc: ec2.IVpc, tier: IPoolingTier) {
  const readOnly = tier.addReadOnlyEndpoint('ReadOnly', { vpc: consumerVpc });
  const readWrite = tier.addReadWriteEndpoint('ReadWrite', { vpc: consumerVpc });
  const reader = new LambdaConsumer(stack, 'Reader', { endpoint: readOnly, dbUser: 'app_reader', databaseName: 'app' });
  const writer = new LambdaConsumer(stack, 'Writer', { endpoint: readWrite, dbUser: 'app_writer', databaseName: 'app' });
  const roles = new DatabaseRoleBootstrap(stack, 'Roles', {
    cluster,
    poolingTier: tier,
    roles: [
      { name: 'app_reader', access: EndpointRole.READ_ONLY },
      { name: 'app_writer', access: EndpointRole.READ_WRITE },
    ],
  });
  const dashboard = new Dashboard(stack, 'Dashboard', { cluster, proxy: tier, functions: [reader, writer] });
  // An alarm of the app's own on a shared signal, the same threshold on either engine.
  new cloudwatch.Alarm(stack, 'SlowBorrow', { metric: tier.metricConnectionBorrowLatency({ role: EndpointRole.READ_ONLY }), threshold: 500, evaluationPeriods: 3 });
  return { readOnly, readWrite, reader, writer, roles, dashboard };
}

/** The namespace and metric name of every line a dashboard body charts. */
function chartedMetrics(template: Template): string[] {
  const body = Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0]!.Properties.DashboardBody;
  const widgets = (JSON.parse(joinIntrinsic(body)) as { widgets: Array<{ properties: { metrics?: unknown[][] } }> }).widgets;
  return widgets.flatMap((w) => w.properties.metrics ?? []).map((l) => `${l[0]} ${l[1]}`);
}

/** What a metric renders as in an alarm: its metric math expression, or its namespace, name and statistic. */
function rendered(stack: Stack, metric: cloudwatch.IMetric): { expression?: string; lines: Array<{ namespace: string; metricName: string; statistic: string; dimensions: Record<string, unknown> }> } {
  const config = metric.toMetricConfig();
  const line = (m: cloudwatch.IMetric) => {
    const stat = m.toMetricConfig().metricStat!;
    return { namespace: stat.namespace, metricName: stat.metricName, statistic: stat.statistic, dimensions: Object.fromEntries((stat.dimensions ?? []).map((d) => [d.name, stack.resolve(d.value)])) };
  };
  if (config.mathExpression) return { expression: config.mathExpression.expression, lines: Object.values(config.mathExpression.usingMetrics).map(line) };
  return { lines: [line(metric)] };
}

describe.each(ENGINES)('the same consumers, roles and dashboard over %s', (_name, engine) => {
  let stack: Stack;
  let consumerVpc: ec2.IVpc;
  let tier: IPoolingTier;
  let built: ReturnType<typeof consumersAndDashboard>;
  let template: Template;

  beforeAll(() => {
    // GIVEN a tier of the engine
    let cluster: AuroraOptimizedReads;
    ({ stack, cluster, consumerVpc, tier } = tierStack(engine));
    // WHEN the app's code builds on it through the interface
    built = consumersAndDashboard(stack, cluster, consumerVpc, tier);
    template = Template.fromStack(stack);
  });

  test('the endpoints are the engine\'s, in the consumer VPC, one per role', () => {
    // THEN
    const endpointClass = engine === ProxyEngine.PGBOUNCER ? PgBouncerProxyEndpoint : RdsProxyEndpoint;
    for (const [endpoint, role] of [[built.readOnly, EndpointRole.READ_ONLY], [built.readWrite, EndpointRole.READ_WRITE]] as Array<[IProxyEndpoint, EndpointRole]>) {
      expect(endpoint).toBeInstanceOf(endpointClass);
      expect([endpoint.engine, endpoint.role, endpoint.node.path]).toEqual([engine, role, `Stack/Tier/${role === EndpointRole.READ_ONLY ? 'ReadOnly' : 'ReadWrite'}`]);
    }
    expect([built.readOnly.vpc, built.readWrite.vpc]).toEqual([consumerVpc, consumerVpc]);
    template.resourceCountIs('AWS::RDS::DBProxyEndpoint', engine === ProxyEngine.RDS_PROXY ? 2 : 0);
  });

  test('each consumer logs in the engine\'s way: IAM tokens on RDS Proxy, its password secret on PgBouncer', () => {
    // THEN
    const env = (fn: LambdaConsumer) => template.toJSON().Resources[logicalIdOf(fn.function)].Properties.Environment.Variables;
    for (const [fn, user] of [[built.reader, 'app_reader'], [built.writer, 'app_writer']] as const) {
      const secret = tier.consumerPasswordSecret(user);
      if (engine === ProxyEngine.PGBOUNCER) {
        expect(env(fn)).toMatchObject({ DB_AUTH: 'secret', DB_USER: user, DB_SECRET_ARN: stack.resolve(secret!.secretArn) });
      } else {
        expect(secret).toBeUndefined();
        expect(env(fn)).toMatchObject({ DB_AUTH: 'iam', DB_USER: user });
      }
    }
  });

  test('the role bootstrap makes the consumers\' roles with the tier\'s logins, and the tier\'s own roles', () => {
    // THEN
    const request = Object.values(template.findResources('Custom::DatabaseRoles'))[0]!.Properties.Request;
    const password = (user: string) => (engine === ProxyEngine.PGBOUNCER ? { passwordSecretArn: stack.resolve(tier.consumerPasswordSecret(user)!.secretArn) } : {});
    expect(request.roles).toEqual([
      { name: 'app_reader', access: 'READ_ONLY', ...password('app_reader') },
      { name: 'app_writer', access: 'READ_WRITE', ...password('app_writer') },
      ...tier.serverRoles.map((r) => stack.resolve(r)),
    ]);
    expect(tier.serverRoles.map((r) => r.name)).toEqual(engine === ProxyEngine.PGBOUNCER ? ['apk_pooler_reader'] : []);
  });

  test('what logs in as the tier\'s roles waits for the bootstrap: the PgBouncer hosts; nothing on RDS Proxy', () => {
    // THEN
    const rolesId = logicalIdOf(built.roles.resource);
    const dependents = Object.entries(template.toJSON().Resources as Record<string, { Type: string; DependsOn?: string[] }>)
      .filter(([, r]) => (r.DependsOn ?? []).includes(rolesId))
      .map(([, r]) => r.Type);
    expect(dependents).toEqual(engine === ProxyEngine.PGBOUNCER ? ['AWS::AutoScaling::AutoScalingGroup'] : []);
  });

  test('the dashboard charts the engine\'s own metrics and none of the other\'s', () => {
    // THEN
    const charted = chartedMetrics(template);
    const own = engine === ProxyEngine.PGBOUNCER ? `${POOLER_METRICS_NAMESPACE} ServerConnections` : 'AWS/RDS DatabaseConnectionsBorrowLatency';
    const other = engine === ProxyEngine.PGBOUNCER ? 'AWS/RDS DatabaseConnectionsBorrowLatency' : `${POOLER_METRICS_NAMESPACE} ServerConnections`;
    expect(charted).toContain(own);
    expect(charted).not.toContain(other);
  });

  test('the named metrics map to the engine\'s CloudWatch metrics at the statistic that adds up', () => {
    // WHEN
    const server = rendered(stack, tier.metricServerConnections({ role: EndpointRole.READ_ONLY }));
    const clients = rendered(stack, tier.metricClientConnections());
    // THEN server connections of the readers: RDS Proxy's per target role, the fleet's per pool target (both readers and the writer, summed)
    if (engine === ProxyEngine.PGBOUNCER) {
      expect(server.expression).toBe('SUM([m0, m1, m2])');
      expect(server.lines.map((l) => [l.namespace, l.metricName, l.statistic, l.dimensions.Listener])).toEqual(Array(3).fill([POOLER_METRICS_NAMESPACE, 'ServerConnections', 'Sum', 'READ_ONLY']));
      expect(new Set(server.lines.map((l) => JSON.stringify(l.dimensions.Target))).size).toBe(3);
      expect(clients.lines.map((l) => [l.metricName, l.statistic, l.dimensions.Listener])).toEqual([['ClientConnections', 'Sum', 'READ_WRITE']]);
    } else {
      expect(server.expression).toBeUndefined();
      expect(server.lines).toEqual([{ namespace: 'AWS/RDS', metricName: 'DatabaseConnections', statistic: 'Sum', dimensions: expect.objectContaining({ TargetGroup: 'default', TargetRole: 'READ_ONLY' }) }]);
      // The default endpoint and the READ_WRITE endpoint added.
      expect(clients.expression).toBe('SUM([m0, m1])');
      expect(clients.lines.map((l) => [l.metricName, l.statistic])).toEqual(Array(2).fill(['ClientConnections', 'Sum']));
      expect(clients.lines[0]!.dimensions.EndpointName).toBe('default');
    }
  });

  test('borrow latency is in milliseconds on either engine, from each engine\'s unit', () => {
    // WHEN
    const latency = rendered(stack, tier.metricConnectionBorrowLatency({ role: EndpointRole.READ_ONLY }));
    // THEN RDS Proxy publishes microseconds (Average), the fleet the longest wait in seconds (Maximum)
    if (engine === ProxyEngine.PGBOUNCER) {
      expect(latency.expression).toBe('MAX([m0, m1, m2]) * 1000');
      expect(latency.lines.map((l) => [l.metricName, l.statistic])).toEqual(Array(3).fill(['MaxWait', 'Maximum']));
    } else {
      expect(latency.expression).toBe('m0 * 0.001');
      expect(latency.lines.map((l) => [l.metricName, l.statistic])).toEqual([['DatabaseConnectionsBorrowLatency', 'Average']]);
    }
    template.resourceCountIs('AWS::CloudWatch::Alarm', built.dashboard.alarms.length + 1);
  });

  test('availability is a percentage on either engine', () => {
    // WHEN
    const availability = rendered(stack, tier.metricAvailability());
    // THEN the fleet's healthy hosts of 2, times 50; RDS Proxy's own percentage
    if (engine === ProxyEngine.PGBOUNCER) {
      expect(availability.expression).toBe('m0 * 50');
      expect(availability.lines.map((l) => [l.namespace, l.metricName, l.statistic])).toEqual([['AWS/NetworkELB', 'HealthyHostCount', 'Minimum']]);
    } else {
      expect(availability.expression).toBeUndefined();
      expect(availability.lines.map((l) => [l.metricName, l.statistic, l.dimensions.TargetRole])).toEqual([['AvailabilityPercentage', 'Minimum', 'READ_WRITE']]);
    }
  });
});

describe.each(ENGINES)('grantConnect on the tier over %s', (_name, engine) => {
  test('gives the grantee the credential for the user: rds-db:connect on RDS Proxy, the password secret\'s read on PgBouncer', () => {
    // GIVEN a tier and a role of a consumer outside the kit's constructs
    const { stack, tier } = tierStack(engine);
    const role = new iam.Role(stack, 'Consumer', { assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com') });
    // WHEN
    tier.grantConnect(role, 'report_reader');
    // THEN
    const statements = Object.values(Template.fromStack(stack).findResources('AWS::IAM::Policy'))
      .filter((p) => JSON.stringify(p.Properties.Roles) === JSON.stringify([{ Ref: logicalIdOf(role) }]))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<{ Action: string | string[]; Resource: unknown }>);
    const actions = statements.flatMap((s) => [s.Action].flat());
    if (engine === ProxyEngine.PGBOUNCER) {
      expect(actions).toEqual(expect.arrayContaining(['secretsmanager:GetSecretValue']));
      expect(JSON.stringify(statements)).toContain(JSON.stringify(stack.resolve(tier.consumerPasswordSecret('report_reader')!.secretArn)));
      expect((tier as PgBouncerProxy).consumerUsers).toEqual(['report_reader']);
    } else {
      expect(actions).toEqual(['rds-db:connect']);
      expect(JSON.stringify(statements)).toContain('report_reader');
    }
  });
});

describe('what one engine has and the other refuses', () => {
  test('GIVEN RDS Proxy WHEN an endpoint asks for session pooling THEN synth fails naming poolMode and the way out', () => {
    const { tier, consumerVpc } = tierStack(ProxyEngine.RDS_PROXY);
    expect(() => tier.addReadWriteEndpoint('Locks', { vpc: consumerVpc, poolMode: PoolMode.SESSION })).toThrow(
      kitError('Stack/Tier', 'endpoint Locks: poolMode session is the PgBouncer engine\'s; RDS Proxy endpoints have no pool mode (RDS Proxy pins a client\'s session to a server connection when it uses session state): remove poolMode, or use a PgBouncerProxy'),
    );
  });

  test('GIVEN a PgBouncer fleet WHEN an endpoint is given a name THEN synth fails naming endpointName', () => {
    const { tier, consumerVpc } = tierStack(ProxyEngine.PGBOUNCER);
    expect(() => tier.addReadOnlyEndpoint('Reports', { vpc: consumerVpc, endpointName: 'reports' })).toThrow(
      kitError('Stack/Tier', 'endpoint Reports: endpointName reports is RDS Proxy\'s; a PgBouncer endpoint is an interface VPC endpoint, which has no name: remove endpointName'),
    );
  });

  test('GIVEN a PgBouncer fleet WHEN an endpoint asks for session pooling through the interface THEN it gets the session listener', () => {
    const { tier, consumerVpc } = tierStack(ProxyEngine.PGBOUNCER);
    const endpoint = tier.addReadWriteEndpoint('Locks', { vpc: consumerVpc, poolMode: PoolMode.SESSION });
    expect([endpoint.port, (endpoint as PgBouncerProxyEndpoint).poolMode]).toEqual([5434, PoolMode.SESSION]);
    // The role's server connections now add up both listeners' pools.
    expect(rendered(Stack.of(tier), tier.metricServerConnections()).lines.map((l) => l.dimensions.Listener)).toEqual(['READ_WRITE', 'READ_WRITE_SESSION']);
  });

  test('GIVEN RDS Proxy with no READ_ONLY endpoint WHEN its client connections are asked for THEN synth fails saying to add one first', () => {
    const { tier } = tierStack(ProxyEngine.RDS_PROXY);
    expect(() => tier.metricClientConnections({ role: EndpointRole.READ_ONLY })).toThrow(
      kitError('Stack/Tier', 'ClientConnections of role READ_ONLY: the proxy has no READ_ONLY endpoint yet; add one with addReadOnlyEndpoint before asking for its metrics'),
    );
  });
});

describe('DatabaseRoleBootstrap with a pooling tier', () => {
  /** The roles the bootstrap's custom resource is asked to make. */
  const requestedRoles = (stack: Stack) => Object.values(Template.fromStack(stack).findResources('Custom::DatabaseRoles'))[0]!.Properties.Request.roles as Array<Record<string, unknown>>;

  test('GIVEN a PgBouncer fleet WHEN the roles already list its server role, and one role brings its own secret THEN each is made once, as given', () => {
    // GIVEN
    const { stack, cluster, tier } = tierStack(ProxyEngine.PGBOUNCER);
    const [serverRole] = tier.serverRoles;
    const ownSecretArn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:migrator-AbCdEf';
    // WHEN
    new DatabaseRoleBootstrap(stack, 'Roles', {
      cluster,
      poolingTier: tier,
      roles: [serverRole!, { name: 'migrator', access: EndpointRole.READ_WRITE, passwordSecretArn: ownSecretArn }],
    });
    // THEN
    expect(requestedRoles(stack)).toEqual([stack.resolve(serverRole), { name: 'migrator', access: 'READ_WRITE', passwordSecretArn: ownSecretArn }]);
    // The role with a secret of its own is not made a consumer of the fleet.
    expect((tier as PgBouncerProxy).consumerUsers).toEqual([]);
  });

  test('GIVEN a PgBouncer fleet WHEN a role\'s name is one PostgreSQL refuses THEN the bootstrap says so, before the fleet makes a user of it', () => {
    // GIVEN
    const { stack, cluster, tier } = tierStack(ProxyEngine.PGBOUNCER);
    // WHEN
    const create = () => new DatabaseRoleBootstrap(stack, 'Roles', { cluster, poolingTier: tier, roles: [{ name: 'Report-Reader', access: EndpointRole.READ_ONLY }] });
    // THEN the bootstrap's own message, and the fleet has no such consumer
    expect(create).toThrow(/Stack\/Roles/);
    expect((tier as PgBouncerProxy).consumerUsers).toEqual([]);
  });

  test('GIVEN RDS Proxy WHEN the roles are made through it THEN they are exactly the roles given (IAM logins, no role of the proxy\'s own)', () => {
    // GIVEN
    const { stack, cluster, tier } = tierStack(ProxyEngine.RDS_PROXY);
    const roles = [{ name: 'app_reader', access: EndpointRole.READ_ONLY }];
    // WHEN
    new DatabaseRoleBootstrap(stack, 'Roles', { cluster, poolingTier: tier, roles });
    // THEN
    expect(requestedRoles(stack)).toEqual([{ name: 'app_reader', access: 'READ_ONLY' }]);
  });
});
