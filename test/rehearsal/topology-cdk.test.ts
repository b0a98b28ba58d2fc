/**
 * The deployed topology read from a cloud assembly: bin/app.ts's reference deployment synthesized with
 * its default context and with `-c` variants, and an app whose consumers sit in a stack of their own.
 */
import { CfnResource, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { IConstruct } from 'constructs';
import { consumerEnvironment } from '../../lambda/src/environment';
import { LambdaConsumer, AuroraOptimizedReads, PgBouncerProxy, RdsProxy } from '../../lib';
import { consumerEndpointTls, DEFAULT_POOL_SETTINGS, POSTGRES_PORT } from '../../lib/model';
import { READER_DB_USER, ReferenceDeployment, WRITER_DB_USER } from '../../lib/reference-app/reference-deployment';
import { resolveSettings, settingsFromTopology, topologyFromCdkOut, validateSettings, type DeployedTopology } from '../../lib/rehearsal';
import { RdsProxyEndpoint } from '../../lib/rds-proxy-endpoint';
import { removeFixtures, synthesize, synthesizeReferenceApp } from './topology-fixtures';
import { CloudAssemblyIndex } from '../../lib/cloud-assembly';

/** The topology id of the CloudFormation resource a construct wraps: its default child, or the first under it of `type`. */
function idOf(stack: Stack, construct: IConstruct, type?: string): string {
  const resource = type === undefined ? construct.node.defaultChild : construct.node.findAll().find((c) => CfnResource.isCfnResource(c) && c.cfnResourceType === type);
  return `${stack.stackName}/${stack.resolve((resource as CfnResource).logicalId)}`;
}
const ENDPOINT = 'AWS::RDS::DBProxyEndpoint';
const env = (t: DeployedTopology, consumerId: string) => t.consumers.find((c) => c.id === consumerId)!.environment;

afterAll(removeFixtures);

describe('topologyFromCdkOut: the reference deployment, default context', () => {
  let t: DeployedTopology;
  let stack: ReferenceDeployment;

  beforeAll(() => {
    // GIVEN bin/app.ts's stack synthesized into a cloud assembly
    const synthesized = synthesizeReferenceApp();
    stack = synthesized.stack;
    // WHEN its topology is read
    t = topologyFromCdkOut(synthesized.dir);
  });

  test('THEN the cluster has a writer and 2 readers of the default class, and the writer is the instance the readers wait for', () => {
    expect(t.cluster).toMatchObject({ engine: 'aurora-postgresql', engineVersion: '17.9', port: 5432, databaseName: 'app', vpc: idOf(stack, stack.dataVpc) });
    expect(t.cluster.readers).toHaveLength(2);
    expect([t.cluster.writer, ...t.cluster.readers].map((i) => i.instanceClass)).toEqual(['db.r6gd.xlarge', 'db.r6gd.xlarge', 'db.r6gd.xlarge']);
    const instanceId = (identifier: string) => `AuroraProxyKit/${(stack.resolve(identifier) as { Ref: string }).Ref}`;
    expect(t.cluster.writer.id).toBe(instanceId(stack.database.writerInstanceIdentifier));
    expect(t.cluster.readers.map((r) => r.id)).toEqual(stack.database.readerInstanceIdentifiers.map(instanceId));
    expect(t.cluster.writer.promotionTier).toBe(0);
  });

  test('THEN the proxy requires TLS, uses end-to-end IAM, sits in the data VPC, and its pool is the kit default', () => {
    expect(t.proxy).toMatchObject({ engineFamily: 'POSTGRESQL', requireTls: true, authScheme: 'IAM_AUTH', vpc: idOf(stack, stack.dataVpc), idleClientTimeoutSeconds: 1800 });
    // The kit's defaults as the proxy is given them: MaxConnectionsPercent kept to the 99 that leaves the reserve.
    expect(t.proxy.pool).toEqual({ ...DEFAULT_POOL_SETTINGS, maxConnectionsPercent: 99, defaulted: [] });
    expect(t.proxy.pool).toMatchObject(stack.proxy!.poolSettings);
  });

  test('THEN 3 endpoints: the default READ_WRITE one in the data VPC, and READ_ONLY and READ_WRITE ones in the consumer VPC', () => {
    const consumerVpc = idOf(stack, stack.consumerVpc);
    expect(t.endpoints).toEqual([
      { id: t.proxy.defaultEndpoint, name: t.proxy.name, role: 'READ_WRITE', isDefault: true, vpc: idOf(stack, stack.dataVpc) },
      expect.objectContaining({ id: idOf(stack, stack.readOnlyEndpoint, ENDPOINT), role: 'READ_ONLY', isDefault: false, vpc: consumerVpc }),
      expect.objectContaining({ id: idOf(stack, stack.readWriteEndpoint, ENDPOINT), role: 'READ_WRITE', isDefault: false, vpc: consumerVpc }),
    ]);
    expect(t.vpcs.map((v) => v.cidr).sort()).toEqual(['10.10.0.0/16', '10.20.0.0/16']);
  });

  test('THEN the consumers reach their endpoints from the consumer VPC as app_reader / app_writer, verifying the proxy default endpoint\'s name', () => {
    const reader = idOf(stack, stack.reader.function);
    const writer = idOf(stack, stack.writer.function);
    expect(t.consumers.map((c) => [c.id, c.endpoint, c.vpc])).toEqual([
      [reader, idOf(stack, stack.readOnlyEndpoint, ENDPOINT), idOf(stack, stack.consumerVpc)],
      [writer, idOf(stack, stack.readWriteEndpoint, ENDPOINT), idOf(stack, stack.consumerVpc)],
    ]);
    expect(env(t, reader)).toEqual({
      DB_HOST: { kind: 'endpoint-host', endpoint: idOf(stack, stack.readOnlyEndpoint, ENDPOINT) },
      DB_PORT: { kind: 'literal', value: '5432' },
      DB_NAME: { kind: 'literal', value: 'app' },
      DB_USER: { kind: 'literal', value: READER_DB_USER },
      DB_AUTH: { kind: 'literal', value: 'iam' },
      DB_TLS: { kind: 'literal', value: 'verify-proxy-domain' },
      DB_TLS_SERVER_NAME: { kind: 'endpoint-host', endpoint: t.proxy.defaultEndpoint },
      DB_ENDPOINT_ROLE: { kind: 'literal', value: 'READ_ONLY' },
      CONNECTION_MODE: { kind: 'literal', value: 'reuse' },
      POWERTOOLS_SERVICE_NAME: { kind: 'literal', value: 'aurora-proxy-kit' },
    });
    const writerConnection = t.consumers.find((c) => c.id === writer)!.connection;
    expect(writerConnection).toMatchObject({ user: WRITER_DB_USER, endpointRole: 'READ_WRITE', auth: 'iam', tls: { mode: 'verify-proxy-domain', serverName: { kind: 'endpoint-host', endpoint: t.proxy.defaultEndpoint } } });
    // The role bootstrap reaches the cluster, not the proxy, and follows no consumer contract.
    expect(t.consumers).toHaveLength(2);
  });

  test('THEN the region is not fixed (an environment-agnostic stack), and what the rehearsal cannot run is listed with its stand-in', () => {
    expect(t.region).toBeUndefined();
    expect(t.notes).toEqual(['region unknown: stack AuroraProxyKit is environment-agnostic']);
    expect(t.notReproducible.map((n) => n.id)).toEqual(['iam-auth', 'secrets-manager', 'kms', 'cloudwatch', 'xray', 'proxy-certificate', 'session-pinning', 'database-users', 'instance-class']);
    // The stand-in does not pin: up says so beside the other stand-ins.
    expect(t.notReproducible.find((n) => n.id === 'session-pinning')!.localStandIn).toMatch(/does not pin/);
    for (const entry of t.notReproducible) expect(entry.localStandIn).not.toBe('');
    expect(t.notReproducible.find((n) => n.id === 'iam-auth')!.what).toContain('proxy DefaultAuthScheme IAM_AUTH');
  });

  test('WHEN mapped to rehearsal settings THEN one replica per reader and the proxy\'s pool, which the rehearsal accepts', () => {
    const settings = settingsFromTopology(t);
    expect(settings).toEqual({ replicas: 2, pool: { ...DEFAULT_POOL_SETTINGS, maxConnectionsPercent: 99 }, port: 5432 });
    expect(() => validateSettings(resolveSettings(settings))).not.toThrow();
  });
});

describe('topologyFromCdkOut: context variants', () => {
  test('GIVEN -c readers=3 -c readOnlyEndpoints=3 -c maxConnectionsPercent=80 WHEN read THEN 3 readers, 4 endpoints, the reader on the first READ_ONLY one, the pool at 80%', () => {
    // GIVEN
    const { dir, stack } = synthesizeReferenceApp({ readers: '3', readOnlyEndpoints: '3', maxConnectionsPercent: '80' });
    // WHEN
    const t = topologyFromCdkOut(dir);
    // THEN
    expect(t.cluster.readers).toHaveLength(3);
    expect(t.endpoints.map((e) => [e.role, e.isDefault])).toEqual([
      ['READ_WRITE', true],
      ['READ_ONLY', false],
      ['READ_WRITE', false],
      ['READ_ONLY', false],
      ['READ_ONLY', false],
    ]);
    expect(t.endpoints.filter((e) => !e.isDefault).every((e) => e.vpc === idOf(stack, stack.consumerVpc))).toBe(true);
    expect(t.consumers.find((c) => c.id === idOf(stack, stack.reader.function))!.endpoint).toBe(idOf(stack, stack.readOnlyEndpoint, ENDPOINT));
    expect(t.proxy.pool).toMatchObject({ maxConnectionsPercent: 80, maxIdleConnectionsPercent: 5 });
    expect(settingsFromTopology(t)).toMatchObject({ replicas: 3, pool: { maxConnectionsPercent: 80 } });
  });

  test('GIVEN -c readers=1 -c instanceClass=db.r8gd.2xlarge WHEN read THEN one reader of that class, and one replica', () => {
    const { dir } = synthesizeReferenceApp({ readers: '1', instanceClass: 'db.r8gd.2xlarge' });
    const t = topologyFromCdkOut(dir);
    expect(t.cluster.readers.map((r) => r.instanceClass)).toEqual(['db.r8gd.2xlarge']);
    expect(t.cluster.writer.instanceClass).toBe('db.r8gd.2xlarge');
    expect(settingsFromTopology(t).replicas).toBe(1);
  });
});

describe('topologyFromCdkOut: consumers in a stack of their own', () => {
  // cdk.json's flag makes CDK read another stack's outputs with Fn::GetStackOutput ("weak"); exports and Fn::ImportValue are "strong".
  test.each([
    ['weak', 'Fn::GetStackOutput'],
    ['strong', 'Fn::ImportValue'],
  ])('GIVEN a consumer stack that reads the endpoint and subnets from the data stack (cross-stack references %s) WHEN read THEN %s is followed to the endpoint and the VPC', (references, intrinsic) => {
    // GIVEN a data stack (cluster, proxy, a READ_ONLY endpoint in a consumer VPC) and a stack holding a function
    // whose environment follows the consumers' contract (a plain Function: no grants, so no reference cycle)
    let ids: { endpoint: string; consumerVpc: string; fn: string } | undefined;
    const dir = synthesize((app) => {
      const data = new Stack(app, 'Data');
      const dataVpc = new ec2.Vpc(data, 'DataVpc', { ipAddresses: ec2.IpAddresses.cidr('10.30.0.0/16'), natGateways: 0, maxAzs: 2 });
      const consumerVpc = new ec2.Vpc(data, 'ConsumerVpc', { ipAddresses: ec2.IpAddresses.cidr('10.40.0.0/16'), natGateways: 0, maxAzs: 2 });
      const cluster = new AuroraOptimizedReads(data, 'Database', { vpc: dataVpc, readers: 1 });
      const proxy = new RdsProxy(data, 'Proxy', { cluster, maxConnectionsPercent: 60, maxIdleConnectionsPercent: 20 });
      const endpoint = proxy.addReadOnlyEndpoint('Reports', { vpc: consumerVpc }) as RdsProxyEndpoint;
      const consumers = new Stack(app, 'Consumers');
      const fn = new lambda.Function(consumers, 'ReportReader', {
        runtime: lambda.Runtime.NODEJS_22_X,
        handler: 'index.handler',
        code: lambda.Code.fromInline('exports.handler = async () => null;'),
        vpc: consumerVpc,
        vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
        environment: consumerEnvironment({
          host: endpoint.hostname,
          port: POSTGRES_PORT,
          database: cluster.databaseName,
          user: 'report_reader',
          endpointRole: endpoint.role,
          tls: consumerEndpointTls({ isProxyDefaultEndpoint: false, proxyDefaultEndpoint: endpoint.proxyDefaultEndpoint }),
        }),
      });
      ids = { endpoint: idOf(data, endpoint, ENDPOINT), consumerVpc: idOf(data, consumerVpc), fn: idOf(consumers, fn) };
    }, { '@aws-cdk/core:defaultCrossStackReferences': references });
    const consumerTemplate = JSON.stringify(CloudAssemblyIndex.read(dir).stack('Consumers').resources);
    expect(consumerTemplate).toContain(`"${intrinsic}"`);
    // WHEN
    const t = topologyFromCdkOut(dir);
    // THEN
    expect(t.source).toEqual({ kind: 'cdk-assembly', path: dir, stacks: ['Data', 'Consumers'] });
    expect(t.consumers).toHaveLength(1);
    expect(t.consumers[0]).toMatchObject({ id: ids!.fn, endpoint: ids!.endpoint, vpc: ids!.consumerVpc });
    expect(t.consumers[0]!.environment.DB_HOST).toEqual({ kind: 'endpoint-host', endpoint: ids!.endpoint });
    expect(t.consumers[0]!.environment.DB_TLS_SERVER_NAME).toEqual({ kind: 'endpoint-host', endpoint: t.proxy.defaultEndpoint });
    expect(t.proxy.pool).toMatchObject({ maxConnectionsPercent: 60, maxIdleConnectionsPercent: 20 });
    expect(t.cluster.readers).toHaveLength(1);
  });

  test.each([
    ['weak', 'Fn::GetStackOutput'],
    ['strong', 'Fn::ImportValue'],
  ])('GIVEN the PgBouncer engine\'s consumers in a stack of their own (cross-stack references %s) WHEN read THEN the DNS entries passed through %s lead to the interface endpoints, with their roles', (references, intrinsic) => {
    // GIVEN a data stack (cluster, fleet, an interface endpoint per role in a consumer VPC) and the consumers in another stack
    let ids: { readOnly: string; readWrite: string; reader: string; writer: string } | undefined;
    const dir = synthesize((app) => {
      const data = new Stack(app, 'Data');
      const dataVpc = new ec2.Vpc(data, 'DataVpc', { ipAddresses: ec2.IpAddresses.cidr('10.30.0.0/16'), natGateways: 0, maxAzs: 2 });
      const consumerVpc = new ec2.Vpc(data, 'ConsumerVpc', { ipAddresses: ec2.IpAddresses.cidr('10.40.0.0/16'), natGateways: 0, maxAzs: 2 });
      const cluster = new AuroraOptimizedReads(data, 'Database', { vpc: dataVpc, readers: 1 });
      const proxy = new PgBouncerProxy(data, 'Proxy', { cluster, packages: { bucket: s3.Bucket.fromBucketName(data, 'Packages', 'kit-packages'), key: 'pgbouncer/packages.tar' } });
      const readOnly = proxy.addReadOnlyEndpoint('ReadOnly', { vpc: consumerVpc });
      const readWrite = proxy.addReadWriteEndpoint('ReadWrite', { vpc: consumerVpc });
      const consumers = new Stack(app, 'Consumers');
      const reader = new LambdaConsumer(consumers, 'Reader', { endpoint: readOnly, dbUser: 'app_reader', databaseName: 'app' });
      const writer = new LambdaConsumer(consumers, 'Writer', { endpoint: readWrite, dbUser: 'app_writer', databaseName: 'app' });
      const endpointId = (e: typeof readOnly) => idOf(data, e, 'AWS::EC2::VPCEndpoint');
      ids = { readOnly: endpointId(readOnly), readWrite: endpointId(readWrite), reader: idOf(consumers, reader.function), writer: idOf(consumers, writer.function) };
    }, { '@aws-cdk/core:defaultCrossStackReferences': references });
    const consumerTemplate = JSON.stringify(CloudAssemblyIndex.read(dir).stack('Consumers').resources);
    expect(consumerTemplate).toContain(`"${intrinsic}"`);
    // WHEN
    const t = topologyFromCdkOut(dir);
    // THEN each consumer reaches its interface endpoint, whose role is its consumer's
    expect(t.consumers.map((c) => [c.id, c.endpoint, c.environment.DB_HOST])).toEqual([
      [ids!.reader, ids!.readOnly, { kind: 'endpoint-host', endpoint: ids!.readOnly }],
      [ids!.writer, ids!.readWrite, { kind: 'endpoint-host', endpoint: ids!.readWrite }],
    ]);
    expect(t.endpoints.filter((e) => !e.isDefault).map((e) => [e.id, e.role])).toEqual([
      [ids!.readOnly, 'READ_ONLY'],
      [ids!.readWrite, 'READ_WRITE'],
    ]);
    // and verify-full, the PgBouncer engine's TLS check on every endpoint, draws no note
    expect(t.notes.filter((n) => / consumer |interface endpoint /.test(n))).toEqual([]);
  });
});
