/**
 * The constructs' former names (lib/deprecated-names.ts, exported by lib/index.ts): an app written against
 * them still compiles and synthesizes, to the template the new names give.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as kit from '../../lib';
import { EndpointRole } from '../../lambda/src/environment';
import { isolatedVpc } from '../helpers/cdk';

const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };
const PROXY_ARN = 'arn:aws:rds:us-east-1:111111111111:db-proxy:prx-0123456789abcdef0';

/** The constructs under one naming: the new one, or the deprecated one. */
interface Names {
  readonly Cluster: typeof kit.AuroraOptimizedReads;
  readonly Proxy: typeof kit.RdsProxy;
  readonly Consumer: typeof kit.LambdaConsumer;
  readonly Dashboard: typeof kit.Dashboard;
}

const NEW: Names = { Cluster: kit.AuroraOptimizedReads, Proxy: kit.RdsProxy, Consumer: kit.LambdaConsumer, Dashboard: kit.Dashboard };
const FORMER: Names = { Cluster: kit.OptimizedReadsCluster, Proxy: kit.PoolingProxy, Consumer: kit.DatabaseConsumerFunction, Dashboard: kit.DatabaseDashboard };

/** The data path of the README in one stack: cluster, RDS Proxy, a reader and a writer on its endpoints, the dashboard. */
function dataPath(names: Names): Template {
  const app = new App({ context: NO_BUNDLING });
  const stack = new Stack(app, 'Kit');
  const cluster = new names.Cluster(stack, 'Database', { vpc: isolatedVpc(stack, 'DataVpc', '10.10.0.0/16'), readers: 2 });
  const proxy = new names.Proxy(stack, 'Proxy', { cluster });
  const consumerVpc = isolatedVpc(stack, 'ConsumerVpc', '10.20.0.0/16');
  const reader = new names.Consumer(stack, 'Reader', { endpoint: proxy.addReadOnlyEndpoint('ReadOnly', { vpc: consumerVpc }), dbUser: 'app_reader', databaseName: 'app' });
  const writer = new names.Consumer(stack, 'Writer', { endpoint: proxy.addReadWriteEndpoint('ReadWrite', { vpc: consumerVpc }), dbUser: 'app_writer', databaseName: 'app' });
  new names.Dashboard(stack, 'Dashboard', { cluster, proxy, functions: [reader, writer] });
  return Template.fromStack(stack);
}

/** A second app's consumer of an imported cluster, proxy and endpoint, through the static import of either naming. */
function importedPath(imports: {
  cluster: typeof kit.AuroraOptimizedReads.fromAuroraOptimizedReadsAttributes;
  proxy: typeof kit.RdsProxy.fromRdsProxyAttributes;
  endpoint: typeof kit.RdsProxyEndpoint.fromRdsProxyEndpointAttributes;
}): Template {
  const app = new App({ context: NO_BUNDLING });
  const stack = new Stack(app, 'Consumers');
  const vpc = ec2.Vpc.fromVpcAttributes(stack, 'Vpc', { vpcId: 'vpc-0222222222222222a', availabilityZones: ['us-east-1a', 'us-east-1b'], isolatedSubnetIds: ['subnet-02a', 'subnet-02b'] });
  const cluster = imports.cluster(stack, 'Cluster', {
    vpc,
    clusterIdentifier: 'kit-cluster',
    clusterEndpointHostname: 'kit-cluster.cluster-abc.us-east-1.rds.amazonaws.com',
    securityGroupId: 'sg-0c0c0c0c0c0c0c0c0',
    masterSecretArn: 'arn:aws:secretsmanager:us-east-1:111111111111:secret:rds!cluster-0123-AbCdEf',
    writerInstanceIdentifier: 'kit-writer',
    readerInstanceIdentifiers: ['kit-reader-1'],
  });
  const proxy = imports.proxy(stack, 'Proxy', { proxyName: 'kit-proxy', proxyArn: PROXY_ARN, defaultEndpoint: 'kit-proxy.proxy-abc.us-east-1.rds.amazonaws.com' });
  const endpoint = imports.endpoint(stack, 'ReadOnly', {
    role: EndpointRole.READ_ONLY,
    vpc,
    hostname: 'kit-ro.endpoint.proxy-abc.us-east-1.rds.amazonaws.com',
    securityGroupId: 'sg-0e0e0e0e0e0e0e0e0',
    proxyArn: PROXY_ARN,
    proxyName: 'kit-proxy',
    proxyDefaultEndpoint: 'kit-proxy.proxy-abc.us-east-1.rds.amazonaws.com',
  });
  const reader = new kit.LambdaConsumer(stack, 'Reader', { endpoint, dbUser: 'app_reader', databaseName: 'app' });
  new kit.Dashboard(stack, 'Dashboard', { cluster, proxy, functions: [reader] });
  return Template.fromStack(stack);
}

describe('the deprecated construct names', () => {
  test('GIVEN the data path built with OptimizedReadsCluster, PoolingProxy, DatabaseConsumerFunction and DatabaseDashboard WHEN synthesized THEN the template is the one the new names give', () => {
    // GIVEN
    const expected = dataPath(NEW).toJSON();

    // WHEN
    const template = dataPath(FORMER).toJSON();

    // THEN
    expect(Object.keys(template.Resources as object).length).toBeGreaterThan(20);
    expect(template).toEqual(expected);
  });

  test('GIVEN imports through fromOptimizedReadsClusterAttributes, fromPoolingProxyAttributes and fromPoolingProxyEndpointAttributes WHEN synthesized THEN the template is the one the new imports give', () => {
    // GIVEN
    const expected = importedPath({
      cluster: kit.AuroraOptimizedReads.fromAuroraOptimizedReadsAttributes,
      proxy: kit.RdsProxy.fromRdsProxyAttributes,
      endpoint: kit.RdsProxyEndpoint.fromRdsProxyEndpointAttributes,
    }).toJSON();

    // WHEN
    const template = importedPath({
      cluster: kit.OptimizedReadsCluster.fromOptimizedReadsClusterAttributes,
      proxy: kit.PoolingProxy.fromPoolingProxyAttributes,
      endpoint: kit.PoolingProxyEndpoint.fromPoolingProxyEndpointAttributes,
    }).toJSON();

    // THEN
    expect(Object.keys(template.Resources as object)).toEqual(expect.arrayContaining([expect.stringMatching(/^ReaderFunction/), expect.stringMatching(/^Dashboard/)]));
    expect(template).toEqual(expected);
  });

  test('GIVEN a construct made with a former name THEN it is the new construct, for instanceof checks and the types users pass on', () => {
    // GIVEN
    const stack = new Stack(new App({ context: NO_BUNDLING }), 'Kit');
    const cluster = new kit.OptimizedReadsCluster(stack, 'Database', { vpc: isolatedVpc(stack, 'DataVpc', '10.10.0.0/16'), readers: 1 });

    // WHEN
    const proxy = new kit.PoolingProxy(stack, 'Proxy', { cluster });

    // THEN
    expect(cluster).toBeInstanceOf(kit.AuroraOptimizedReads);
    expect(proxy).toBeInstanceOf(kit.RdsProxy);
    expect(proxy.addReadOnlyEndpoint('ReadOnly', { vpc: cluster.vpc })).toBeInstanceOf(kit.RdsProxyEndpoint);
  });
});
