/**
 * A common split: the VPCs in a network stack, the cluster, tier and role bootstrap in a data stack, the
 * consumers and dashboard in a consumers stack. Each security-group rule between a consumer and its endpoint
 * goes in the consumers stack, which depends on the data stack already (it reads the endpoint's host name).
 */
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { EndpointRole } from '../../lambda/src/environment';
import { LambdaConsumer } from '../../lib/lambda-consumer';
import { Dashboard } from '../../lib/dashboard';
import { DatabaseRoleBootstrap } from '../../lib/database-role-bootstrap';
import { AuroraOptimizedReads } from '../../lib/aurora-optimized-reads';
import { PgBouncerProxy } from '../../lib/pgbouncer-proxy';
import { RdsProxy } from '../../lib/rds-proxy';
import { IPoolingTier, ProxyEngine } from '../../lib/pooling-tier';
import { isolatedVpc, logicalIdOf } from '../helpers/cdk';

const ENGINES: ReadonlyArray<[string, ProxyEngine]> = [
  ['RDS Proxy', ProxyEngine.RDS_PROXY],
  ['a PgBouncer fleet', ProxyEngine.PGBOUNCER],
];

/** Three stacks of one app; bundling is skipped, as no assertion reads the functions' code. */
function threeStacks(engine: ProxyEngine) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const network = new Stack(app, 'Network');
  const data = new Stack(app, 'Data');
  const consumers = new Stack(app, 'Consumers');
  const dataVpc = isolatedVpc(network, 'DataVpc', '10.10.0.0/16');
  const consumerVpc = isolatedVpc(network, 'ConsumerVpc', '10.20.0.0/16');
  const cluster = new AuroraOptimizedReads(data, 'Cluster', { vpc: dataVpc, readers: 2 });
  const tier: IPoolingTier =
    engine === ProxyEngine.PGBOUNCER
      ? new PgBouncerProxy(data, 'Tier', { cluster, packages: { bucket: s3.Bucket.fromBucketName(data, 'Packages', 'kit-packages'), key: 'pgbouncer/packages.tar' } })
      : new RdsProxy(data, 'Tier', { cluster });
  const readOnly = tier.addReadOnlyEndpoint('ReadOnly', { vpc: consumerVpc });
  const readWrite = tier.addReadWriteEndpoint('ReadWrite', { vpc: consumerVpc });
  new DatabaseRoleBootstrap(data, 'Roles', {
    cluster,
    poolingTier: tier,
    roles: [
      { name: 'app_reader', access: EndpointRole.READ_ONLY },
      { name: 'app_writer', access: EndpointRole.READ_WRITE },
    ],
  });
  const reader = new LambdaConsumer(consumers, 'Reader', { endpoint: readOnly, dbUser: 'app_reader', databaseName: 'app' });
  const writer = new LambdaConsumer(consumers, 'Writer', { endpoint: readWrite, dbUser: 'app_writer', databaseName: 'app' });
  new Dashboard(consumers, 'Dashboard', { cluster, proxy: tier, functions: [reader, writer] });
  return { app, network, data, consumers, readOnly, readWrite, reader, writer };
}

/** Every Fn::ImportValue in a template, as the export names they read. */
function importsOf(stack: Stack): string[] {
  const found: string[] = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value !== null && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        if (key === 'Fn::ImportValue') found.push(String(inner));
        else walk(inner);
      }
    }
  };
  walk(Template.fromStack(stack).toJSON());
  return found;
}

describe('GIVEN the network, data and consumers in three stacks', () => {
  test.each(ENGINES)('%s: WHEN synthesized THEN there is no cycle, and each consumer\'s rules are in the consumers stack, on the data stack\'s exported endpoint groups', (_name, engine) => {
    // GIVEN
    const { app, data, consumers, readOnly, readWrite, reader, writer } = threeStacks(engine);

    // WHEN (a DependencyCycle would throw here)
    const assembly = app.synth();

    // THEN the stacks deploy in order: network, data, consumers
    expect(consumers.dependencies.map((s) => s.stackName).sort()).toEqual(['Data', 'Network']);
    expect(data.dependencies.map((s) => s.stackName)).toEqual(['Network']);
    expect(assembly.getStackByName('Data').dependencies.map((a) => a.id)).not.toContain('Consumers');
    // the data stack reads nothing of the consumers stack, which reads the data stack's exports
    expect(importsOf(data).filter((name) => name.startsWith('Consumers'))).toEqual([]);
    expect(importsOf(consumers).some((name) => name.startsWith('Data:'))).toBe(true);

    const template = Template.fromStack(consumers);
    for (const [endpoint, consumer] of [[readOnly, reader], [readWrite, writer]] as const) {
      const endpointGroup = { 'Fn::ImportValue': Match.stringLikeRegexp(`^Data:ExportsOutputFnGetAtt${logicalIdOf(endpoint.securityGroup.node.defaultChild as never)}GroupId`) };
      const consumerGroup = { 'Fn::GetAtt': [logicalIdOf(consumer.connections.securityGroups[0]!.node.defaultChild as never), 'GroupId'] };
      // ingress to the endpoint, from this consumer only, on the endpoint's port
      template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
        GroupId: endpointGroup,
        SourceSecurityGroupId: consumerGroup,
        FromPort: endpoint.port,
        ToPort: endpoint.port,
      });
      // egress from the consumer to the endpoint only
      template.hasResourceProperties('AWS::EC2::SecurityGroupEgress', {
        GroupId: consumerGroup,
        DestinationSecurityGroupId: endpointGroup,
        FromPort: endpoint.port,
        ToPort: endpoint.port,
      });
    }
    // the endpoints' own groups admit no one in the data stack
    Template.fromStack(data).resourcePropertiesCountIs('AWS::EC2::SecurityGroupIngress', { GroupId: Match.objectLike({ 'Fn::GetAtt': [logicalIdOf(readOnly.securityGroup.node.defaultChild as never), 'GroupId'] }) }, 0);
  });
});
