/**
 * fromXxxAttributes: consumers, a role bootstrap and a dashboard in a second app, which knows the cluster,
 * the pooling tier and its endpoints only by the values the data app exports. Nothing deploys offline: the
 * second app is synthesized and its wiring checked against the same consumers built in one app.
 */
import * as fs from 'fs';
import * as path from 'path';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as ts from 'typescript';
import { EndpointRole, ENV_VARS } from '../../lambda/src/environment';
import { LambdaConsumer } from '../../lib/lambda-consumer';
import { Dashboard } from '../../lib/dashboard';
import { DatabaseRoleBootstrap } from '../../lib/database-role-bootstrap';
import { AuroraOptimizedReads } from '../../lib/aurora-optimized-reads';
import { IAuroraOptimizedReads } from '../../lib/aurora-optimized-reads-attributes';
import { PgBouncerProxy } from '../../lib/pgbouncer-proxy';
import { PgBouncerProxyEndpoint } from '../../lib/pgbouncer-proxy-endpoint';
import { RdsProxy } from '../../lib/rds-proxy';
import { RdsProxyEndpoint } from '../../lib/rds-proxy-endpoint';
import { IProxyEndpoint, ProxyEngine } from '../../lib/pooling-tier';
import { isolatedVpc, kitError, logicalIdOf } from '../helpers/cdk';

const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };
const CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const READER_SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:111111111111:secret:kit/app_reader-AbCdEf';
const MASTER_SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:111111111111:secret:rds!cluster-0123-AbCdEf';
const ENDPOINT_GROUP = 'sg-0e0e0e0e0e0e0e0e0';
const CLUSTER_GROUP = 'sg-0c0c0c0c0c0c0c0c0';
const KEY_ARN = 'arn:aws:kms:us-east-1:111111111111:key/11111111-2222-3333-4444-555555555555';

/** The consumer VPC as a second app sees it: imported by id. */
function importedVpc(stack: Stack, id: string, digit: string): ec2.IVpc {
  const hex = `0${digit.repeat(15)}`;
  return ec2.Vpc.fromVpcAttributes(stack, id, {
    vpcId: `vpc-${hex}0`,
    availabilityZones: ['us-east-1a', 'us-east-1b'],
    isolatedSubnetIds: [`subnet-${hex}a`, `subnet-${hex}b`],
    isolatedSubnetRouteTableIds: [`rtb-${hex}a`, `rtb-${hex}b`],
  });
}

function importedCluster(stack: Stack): IAuroraOptimizedReads {
  return AuroraOptimizedReads.fromAuroraOptimizedReadsAttributes(stack, 'Cluster', {
    vpc: importedVpc(stack, 'DataVpc', '1'),
    clusterIdentifier: 'kit-cluster',
    clusterEndpointHostname: 'kit-cluster.cluster-abc.us-east-1.rds.amazonaws.com',
    securityGroupId: CLUSTER_GROUP,
    masterSecretArn: MASTER_SECRET_ARN,
    encryptionKeyArn: KEY_ARN,
    writerInstanceIdentifier: 'kit-writer',
    readerInstanceIdentifiers: ['kit-reader-1', 'kit-reader-2'],
  });
}

/** What a consumer is given, whichever app it is in: its environment's names, its policy's actions, its egress ports. */
function wiringOf(template: Template) {
  const fn = Object.values(template.findResources('AWS::Lambda::Function', { Properties: { Description: Match.stringLikeRegexp('consumer') } }))[0] as { Properties: { Environment: { Variables: Record<string, unknown> } } };
  const actions = Object.values(template.findResources('AWS::IAM::Policy')).flatMap((p) =>
    (p as { Properties: { PolicyDocument: { Statement: Array<{ Action: string | string[] }> } } }).Properties.PolicyDocument.Statement.flatMap((s) => s.Action),
  );
  const ingress = Object.values(template.findResources('AWS::EC2::SecurityGroupIngress')).map((r) => (r as { Properties: { FromPort: number } }).Properties.FromPort);
  return { environment: Object.keys(fn.Properties.Environment.Variables).sort(), actions: [...new Set(actions)].sort(), ingress: [...new Set(ingress)].sort() };
}

/** The same reader in one app, next to its tier: the wiring the second app must match. */
function oneAppReader(engine: ProxyEngine) {
  const app = new App({ context: NO_BUNDLING });
  const data = new Stack(app, 'Data');
  const cluster = new AuroraOptimizedReads(data, 'Cluster', { vpc: isolatedVpc(data, 'DataVpc', '10.10.0.0/16'), readers: 2 });
  const tier =
    engine === ProxyEngine.PGBOUNCER
      ? new PgBouncerProxy(data, 'Tier', { cluster, packages: { bucket: s3.Bucket.fromBucketName(data, 'Packages', 'kit-packages'), key: 'pgbouncer/packages.tar' } })
      : new RdsProxy(data, 'Tier', { cluster });
  const consumers = new Stack(app, 'Consumers');
  const endpoint = tier.addReadOnlyEndpoint('ReadOnly', { vpc: isolatedVpc(data, 'ConsumerVpc', '10.20.0.0/16') });
  new LambdaConsumer(consumers, 'Reader', { endpoint, dbUser: 'app_reader', databaseName: 'app' });
  return Template.fromStack(consumers);
}

describe('GIVEN a second app that imports an RDS Proxy endpoint, the proxy and the cluster by attributes', () => {
  function secondApp() {
    const app = new App({ context: NO_BUNDLING });
    const stack = new Stack(app, 'Consumers');
    const cluster = importedCluster(stack);
    const proxy = RdsProxy.fromRdsProxyAttributes(stack, 'Proxy', {
      proxyName: 'kit-proxy',
      proxyArn: 'arn:aws:rds:us-east-1:111111111111:db-proxy:prx-0123456789abcdef0',
      defaultEndpoint: 'kit-proxy.proxy-abc.us-east-1.rds.amazonaws.com',
      readOnlyEndpointNames: ['kit-read-only'],
    });
    const endpoint = RdsProxyEndpoint.fromRdsProxyEndpointAttributes(stack, 'ReadOnly', {
      role: EndpointRole.READ_ONLY,
      vpc: importedVpc(stack, 'ConsumerVpc', '2'),
      hostname: 'kit-read-only.endpoint.proxy-abc.us-east-1.rds.amazonaws.com',
      securityGroupId: ENDPOINT_GROUP,
      proxyArn: 'arn:aws:rds:us-east-1:111111111111:db-proxy:prx-0123456789abcdef0',
      proxyName: 'kit-proxy',
      proxyDefaultEndpoint: 'kit-proxy.proxy-abc.us-east-1.rds.amazonaws.com',
    });
    const reader = new LambdaConsumer(stack, 'Reader', { endpoint, dbUser: 'app_reader', databaseName: 'app' });
    const dashboard = new Dashboard(stack, 'Dashboard', { cluster, proxy, functions: [reader] });
    return { app, stack, cluster, proxy, endpoint, reader, dashboard };
  }

  test('WHEN its consumer synthesizes THEN it connects and is granted as in one app: the endpoint\'s host, rds-db:connect on the proxy and user, ingress to the endpoint\'s group from the consumer only', () => {
    // GIVEN
    const { stack, reader } = secondApp();

    // WHEN
    const template = Template.fromStack(stack);

    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          [ENV_VARS.host]: 'kit-read-only.endpoint.proxy-abc.us-east-1.rds.amazonaws.com',
          [ENV_VARS.port]: '5432',
          [ENV_VARS.auth]: 'iam',
          [ENV_VARS.tls]: 'verify-proxy-domain',
          [ENV_VARS.tlsServerName]: 'kit-proxy.proxy-abc.us-east-1.rds.amazonaws.com',
        }),
      },
    });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: 'rds-db:connect',
            Resource: { 'Fn::Join': ['', Match.arrayWith([Match.stringLikeRegexp(':dbuser:prx-0123456789abcdef0/app_reader$')])] },
          }),
        ]),
      },
    });
    const consumerGroup = { 'Fn::GetAtt': [logicalIdOf(reader.connections.securityGroups[0]!.node.defaultChild as never), 'GroupId'] };
    template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', { GroupId: ENDPOINT_GROUP, SourceSecurityGroupId: consumerGroup, FromPort: 5432, ToPort: 5432 });
    template.hasResourceProperties('AWS::EC2::SecurityGroupEgress', { GroupId: consumerGroup, DestinationSecurityGroupId: ENDPOINT_GROUP, FromPort: 5432 });
    expect(wiringOf(template)).toEqual(wiringOf(oneAppReader(ProxyEngine.RDS_PROXY)));
  });

  test('WHEN its dashboard synthesizes THEN it charts the imported proxy\'s endpoints and target roles and the imported cluster\'s instances', () => {
    const { stack, proxy } = secondApp();
    const body = JSON.stringify(Template.fromStack(stack).findResources('AWS::CloudWatch::Dashboard'));
    for (const name of ['kit-proxy', 'kit-read-only', 'kit-writer', 'kit-reader-2', 'DatabaseConnectionsBorrowLatency']) expect(body).toContain(name);
    Template.fromStack(stack).hasResourceProperties('AWS::CloudWatch::Alarm', { Dimensions: Match.arrayWith([{ Name: 'ProxyName', Value: 'kit-proxy' }, { Name: 'TargetRole', Value: 'READ_ONLY' }]) });
    // the shared named metrics, over the imported endpoint names
    expect(stack.resolve((proxy.metricClientConnections({ role: EndpointRole.READ_ONLY }) as never as { dimensions: unknown }).dimensions)).toEqual({ ProxyName: 'kit-proxy', EndpointName: 'kit-read-only' });
  });

  test('WHEN it asks the imported proxy for an endpoint or its pool sizing THEN each is refused with the fix', () => {
    const { proxy, cluster } = secondApp();
    expect(() => proxy.addReadWriteEndpoint('More', { vpc: cluster.vpc })).toThrow(
      kitError('Consumers/Proxy', 'endpoint More: an imported pooling tier cannot add endpoints (its app owns its resources and limits): add the READ_WRITE endpoint in the tier\'s app and import it here with fromRdsProxyEndpointAttributes or fromPgBouncerProxyEndpointAttributes'),
    );
    expect(() => proxy.poolSizing).toThrow(/poolSizing of an imported pooling tier is unknown: pass poolSizing in its attributes/);
  });

  test('WHEN a role bootstrap uses the imported cluster THEN it reads the master secret by its ARN, decrypts with its key and gets ingress to the cluster\'s group', () => {
    const { stack, cluster } = secondApp();
    const roles = new DatabaseRoleBootstrap(stack, 'Roles', { cluster, roles: [{ name: 'app_reader', access: EndpointRole.READ_ONLY }] });
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: Match.arrayWith(['secretsmanager:GetSecretValue']), Resource: MASTER_SECRET_ARN }), Match.objectLike({ Action: 'kms:Decrypt', Resource: KEY_ARN, Condition: { StringEquals: { 'kms:ViaService': { 'Fn::Join': ['', ['secretsmanager.', { Ref: 'AWS::Region' }, '.amazonaws.com']] } } } })]) },
    });
    template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      GroupId: CLUSTER_GROUP,
      SourceSecurityGroupId: { 'Fn::GetAtt': [logicalIdOf(roles.connections.securityGroups[0]!.node.defaultChild as never), 'GroupId'] },
      FromPort: 5432,
    });
    template.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: Match.objectLike({ DB_HOST: Match.anyValue() }) } });
  });
});

describe('GIVEN a second app that imports a PgBouncer endpoint and fleet by attributes', () => {
  function secondApp() {
    const app = new App({ context: NO_BUNDLING });
    const stack = new Stack(app, 'Consumers');
    const cluster = importedCluster(stack);
    const proxy = PgBouncerProxy.fromPgBouncerProxyAttributes(stack, 'Proxy', {
      fleetName: 'kit-fleet',
      hosts: 2,
      cluster,
      loadBalancerFullName: 'net/kit-nlb/0123456789abcdef',
      readWriteTargetGroupFullName: 'targetgroup/kit-rw/0123456789abcdef',
      readOnlyTargetGroupFullName: 'targetgroup/kit-ro/0123456789abcdef',
      consumerPasswordSecretArns: { app_reader: READER_SECRET_ARN },
    });
    const endpoint: IProxyEndpoint = PgBouncerProxyEndpoint.fromPgBouncerProxyEndpointAttributes(stack, 'ReadOnly', {
      role: EndpointRole.READ_ONLY,
      vpc: importedVpc(stack, 'ConsumerVpc', '2'),
      hostname: 'vpce-0123-abcd.vpce-svc-0123.us-east-1.vpce.amazonaws.com',
      port: 5433,
      securityGroupId: ENDPOINT_GROUP,
      clientCaCertificate: CA_PEM,
      consumerPasswordSecretArns: { app_reader: READER_SECRET_ARN },
    });
    return { app, stack, cluster, proxy, endpoint };
  }

  test('WHEN its consumer synthesizes THEN it connects and is granted as in one app: its password secret, the fleet\'s CA, ingress to the endpoint on the read-only port', () => {
    // GIVEN
    const { stack, endpoint, proxy, cluster } = secondApp();
    const reader = new LambdaConsumer(stack, 'Reader', { endpoint, dbUser: 'app_reader', databaseName: 'app' });
    new Dashboard(stack, 'Dashboard', { cluster, proxy, functions: [reader] });

    // WHEN
    const template = Template.fromStack(stack);

    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ [ENV_VARS.host]: 'vpce-0123-abcd.vpce-svc-0123.us-east-1.vpce.amazonaws.com', [ENV_VARS.port]: '5433', [ENV_VARS.auth]: 'secret', [ENV_VARS.secretArn]: READER_SECRET_ARN, [ENV_VARS.tlsCa]: CA_PEM }) },
    });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'], Resource: READER_SECRET_ARN })]) },
    });
    const consumerGroup = { 'Fn::GetAtt': [logicalIdOf(reader.connections.securityGroups[0]!.node.defaultChild as never), 'GroupId'] };
    template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', { GroupId: ENDPOINT_GROUP, SourceSecurityGroupId: consumerGroup, FromPort: 5433, ToPort: 5433 });
    // the consumer VPC's Secrets Manager endpoint, as in one app
    template.resourceCountIs('AWS::EC2::VPCEndpoint', 1);
    expect(wiringOf(template).environment).toEqual(wiringOf(oneAppReader(ProxyEngine.PGBOUNCER)).environment);
    expect(wiringOf(template).actions).toEqual(wiringOf(oneAppReader(ProxyEngine.PGBOUNCER)).actions);
    // the dashboard charts the fleet's pools by the imported cluster's identifiers, and its target groups
    const body = JSON.stringify(template.findResources('AWS::CloudWatch::Dashboard'));
    for (const name of ['kit-fleet', 'kit-cluster', 'kit-reader-1', 'kit-writer', 'targetgroup/kit-ro/0123456789abcdef', 'net/kit-nlb/0123456789abcdef']) expect(body).toContain(name);
  });

  test('WHEN a consumer logs in as a user the fleet\'s app did not export THEN synth fails naming the user and the fix', () => {
    const { stack, endpoint, proxy } = secondApp();
    expect(() => new LambdaConsumer(stack, 'Writer', { endpoint, dbUser: 'app_writer', databaseName: 'app' })).toThrow(
      kitError('Consumers/ReadOnly', 'dbUser "app_writer" has no password secret in consumerPasswordSecretArns (users: app_reader): in the PgBouncerProxy\'s app, add the user (proxy.consumerPasswordSecret(\'app_writer\'), and its role in the role bootstrap) and pass its secret\'s ARN here'),
    );
    expect(() => proxy.grantConnect(stack.node.findChild('ReadOnly') as never, 'app_writer')).toThrow(/dbUser "app_writer" has no password secret in consumerPasswordSecretArns/);
  });

  test('WHEN a role bootstrap here would make the fleet\'s hosts wait THEN it is refused with the fix', () => {
    const { stack, cluster, proxy } = secondApp();
    expect(() => new DatabaseRoleBootstrap(stack, 'Roles', { cluster, poolingTier: proxy, roles: [{ name: 'app_reader', access: EndpointRole.READ_ONLY }] })).toThrow(
      /an imported PgBouncerProxy's hosts cannot wait for database roles made in this app: make the roles its users log in as in the fleet's app/,
    );
  });
});

describe('GIVEN the README\'s "Stacks and apps" example', () => {
  test('WHEN it runs in a second app with the values a data app exports THEN its consumer and dashboard synthesize against the imports', () => {
    // GIVEN the block as a user copies it, and the names it leaves to the user
    const readme = fs.readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
    const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('Consumers in another app')))![1]!;
    const app = new App({ context: NO_BUNDLING });
    const stack = new Stack(app, 'Consumers');
    const given: Record<string, unknown> = {
      AuroraOptimizedReads, RdsProxy, RdsProxyEndpoint, LambdaConsumer, Dashboard, EndpointRole,
      dataVpc: importedVpc(stack, 'DataVpc', '1'),
      consumerVpc: importedVpc(stack, 'ConsumerVpc', '2'),
      clusterIdentifier: 'kit-cluster',
      clusterEndpointHostname: 'kit-cluster.cluster-abc.us-east-1.rds.amazonaws.com',
      clusterSecurityGroupId: CLUSTER_GROUP,
      endpointSecurityGroupId: ENDPOINT_GROUP,
      masterSecretArn: MASTER_SECRET_ARN,
      encryptionKeyArn: KEY_ARN,
      writerInstanceIdentifier: 'kit-writer',
      readerInstanceIdentifiers: ['kit-reader-1'],
      proxyName: 'kit-proxy',
      proxyArn: 'arn:aws:rds:us-east-1:111111111111:db-proxy:prx-0123456789abcdef0',
      defaultEndpoint: 'kit-proxy.proxy-abc.us-east-1.rds.amazonaws.com',
      proxyDefaultEndpoint: 'kit-proxy.proxy-abc.us-east-1.rds.amazonaws.com',
      readOnlyEndpointNames: ['kit-read-only'],
      hostname: 'kit-read-only.endpoint.proxy-abc.us-east-1.rds.amazonaws.com',
    };

    // WHEN
    const js = ts.transpileModule(block, { compilerOptions: { target: ts.ScriptTarget.ES2022 } }).outputText;
    new Function(...Object.keys(given), js).call(stack, ...Object.values(given));
    const template = Template.fromStack(stack);

    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: Match.objectLike({ [ENV_VARS.host]: given.hostname, [ENV_VARS.auth]: 'iam' }) } });
    template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', { GroupId: ENDPOINT_GROUP, FromPort: 5432 });
    expect(JSON.stringify(template.findResources('AWS::CloudWatch::Dashboard'))).toContain('kit-read-only');
  });
});
