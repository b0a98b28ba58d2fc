/**
 * Each construct that calls an AWS API from inside a VPC carries its route: by default it makes the VPC's
 * endpoint of the service (one per VPC and service, shared), with a policy passing only its calls; with
 * `apiRoutes: ApiRoutes.BRING_YOUR_OWN` synth fails, naming the construct, the API and the fix, when its
 * subnets have neither an endpoint nor egress.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { LambdaConsumer } from '../../lib/lambda-consumer';
import { DatabaseRoleBootstrap } from '../../lib/database-role-bootstrap';
import { EndpointRole, MASTER_SECRET_READ_ACTIONS } from '../../lib/model';
import { AuroraOptimizedReads } from '../../lib/aurora-optimized-reads';
import { PgBouncerProxy } from '../../lib/pgbouncer-proxy';
import { RdsProxy } from '../../lib/rds-proxy';
import { ApiRoutes, VpcApiRoutes, type VpcApiEndpoints } from '../../lib/vpc-api-routes';
import { getAtt, isolatedVpc, logicalIdOf } from '../helpers/cdk';
import { rejectionMessage } from '../helpers/vectors';

const CDK_FIX = '; or leave apiRoutes at ApiRoutes.CREATE (the default) so the construct makes them';

/** The endpoints of AWS services in a stack's template by service (the last label of the service name); not those of the PgBouncer endpoint service. */
function endpointsByService(template: Template): Array<[string, Record<string, unknown>]> {
  return Object.values(template.findResources('AWS::EC2::VPCEndpoint')).flatMap((r) => {
    const service = JSON.stringify(r.Properties.ServiceName).match(/\.([a-z0-9]+)"\]\]\}$/)?.[1];
    return service === undefined ? [] : [[service, r.Properties as Record<string, unknown>] as [string, Record<string, unknown>]];
  });
}

interface ReadmeAppOptions {
  readonly apiRoutes?: ApiRoutes;
  readonly vpcEndpoints?: VpcApiEndpoints;
  /** The data VPC routes its private subnets through a NAT gateway, and the bootstrap uses them. */
  readonly egress?: boolean;
}

/** README's TypeScript example: a cluster, RDS Proxy, a role bootstrap and a consumer, in VPCs without NAT. */
function readmeApp(options: ReadmeAppOptions = {}) {
  const app = new App();
  const stack = new Stack(app, 'Reporting');
  const dataVpc = options.egress
    ? new ec2.Vpc(stack, 'DataVpc', {
        natGateways: 1,
        maxAzs: 2,
        subnetConfiguration: [
          { name: 'public', subnetType: ec2.SubnetType.PUBLIC },
          { name: 'private', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
          { name: 'isolated', subnetType: ec2.SubnetType.PRIVATE_ISOLATED },
        ],
      })
    : new ec2.Vpc(stack, 'DataVpc', { natGateways: 0, maxAzs: 2 });
  const reportingVpc = new ec2.Vpc(stack, 'ReportingVpc', { ipAddresses: ec2.IpAddresses.cidr('10.1.0.0/16'), natGateways: 0, maxAzs: 2 });
  const database = new AuroraOptimizedReads(stack, 'Database', { vpc: dataVpc, readers: 1 });
  const proxy = new RdsProxy(stack, 'Proxy', { cluster: database });
  const reports = proxy.addReadOnlyEndpoint('Reports', { vpc: reportingVpc });
  const databaseRoles = new DatabaseRoleBootstrap(stack, 'DatabaseRoles', {
    cluster: database,
    roles: [{ name: 'report_reader', access: EndpointRole.READ_ONLY }],
    apiRoutes: options.apiRoutes,
    vpcEndpoints: options.vpcEndpoints,
    vpcSubnets: options.egress ? { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS } : undefined,
  });
  const reader = new LambdaConsumer(stack, 'ReportReader', { endpoint: reports, dbUser: 'report_reader', databaseName: database.databaseName });
  return { app, stack, dataVpc, reportingVpc, database, databaseRoles, reader };
}

describe('DatabaseRoleBootstrap routes its Secrets Manager calls', () => {
  test('GIVEN README\'s example (no NAT, isolated subnets) WHEN it synthesizes THEN the data VPC has one Secrets Manager endpoint, passing the bootstrap\'s read of the master secret only, open on 443 to the bootstrap only, and the bootstrap runs after it', () => {
    // GIVEN
    const { app, stack, dataVpc, database, databaseRoles } = readmeApp();

    // WHEN
    app.synth();
    const template = Template.fromStack(stack);

    // THEN one endpoint, Secrets Manager's, in the data VPC; RDS Proxy's IAM consumer calls no AWS API
    const endpoints = endpointsByService(template);
    expect(endpoints.map(([service]) => service)).toEqual(['secretsmanager']);
    const [, endpoint] = endpoints[0];
    expect(endpoint.VpcId).toEqual(stack.resolve(dataVpc.vpcId));
    expect(endpoint.PrivateDnsEnabled).toBe(true);
    const role = getAtt(databaseRoles.function.role!.node.defaultChild as iam.CfnRole, 'Arn');
    expect((endpoint.PolicyDocument as { Statement: unknown[] }).Statement).toEqual([
      { Effect: 'Allow', Principal: { AWS: role }, Action: [...MASTER_SECRET_READ_ACTIONS], Resource: stack.resolve(database.masterSecret.secretArn) },
    ]);
    const routes = VpcApiRoutes.of(stack, dataVpc);
    const endpointGroup = (routes.endpointOf('secretsManager') as ec2.InterfaceVpcEndpoint).connections.securityGroups[0];
    const ingress = Object.values(template.findResources('AWS::EC2::SecurityGroupIngress', { Properties: { GroupId: getAtt(endpointGroup, 'GroupId') } }));
    expect(ingress.map((r) => [r.Properties.FromPort, r.Properties.SourceSecurityGroupId])).toEqual([[443, getAtt(databaseRoles.connections.securityGroups[0], 'GroupId')]]);
    template.hasResourceProperties('AWS::EC2::SecurityGroupEgress', { GroupId: getAtt(databaseRoles.connections.securityGroups[0], 'GroupId'), FromPort: 443, DestinationSecurityGroupId: getAtt(endpointGroup, 'GroupId') });
    expect(template.toJSON().Resources[logicalIdOf(databaseRoles.resource)].DependsOn).toContain(logicalIdOf(routes.endpointOf('secretsManager')!));
  });

  test('GIVEN README\'s example with apiRoutes BRING_YOUR_OWN and no endpoint WHEN it synthesizes THEN synth fails naming the construct, Secrets Manager and the fix', () => {
    // GIVEN
    const { app } = readmeApp({ apiRoutes: ApiRoutes.BRING_YOUR_OWN });

    // WHEN / THEN
    const message = rejectionMessage('role-bootstrap-api-route', { subnetsHaveEgress: false, vpcEndpoints: {} });
    expect(() => app.synth()).toThrow(`[Reporting/DatabaseRoles] ${message}${CDK_FIX}`);
  });

  test('GIVEN apiRoutes BRING_YOUR_OWN and subnets with a NAT gateway route WHEN it synthesizes THEN it passes and makes no endpoint', () => {
    // GIVEN
    const { app, stack } = readmeApp({ apiRoutes: ApiRoutes.BRING_YOUR_OWN, egress: true });

    // WHEN
    app.synth();

    // THEN
    Template.fromStack(stack).resourceCountIs('AWS::EC2::VPCEndpoint', 0);
  });

  test('GIVEN apiRoutes BRING_YOUR_OWN and the user\'s Secrets Manager endpoint WHEN it synthesizes THEN it passes, with HTTPS from the bootstrap to that endpoint', () => {
    // GIVEN a stack whose VPC endpoint is made after the construct, in vpcEndpoints
    const app = new App();
    const stack = new Stack(app, 'Reporting');
    const vpc = isolatedVpc(stack, 'DataVpc', '10.0.0.0/16');
    const database = new AuroraOptimizedReads(stack, 'Database', { vpc, readers: 1 });
    const group = new ec2.SecurityGroup(stack, 'Mine', { vpc, allowAllOutbound: false });
    const mine = vpc.addInterfaceEndpoint('Mine', { service: ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER, securityGroups: [group], open: false });
    const databaseRoles = new DatabaseRoleBootstrap(stack, 'DatabaseRoles', { cluster: database, roles: [{ name: 'report_reader', access: EndpointRole.READ_ONLY }], apiRoutes: ApiRoutes.BRING_YOUR_OWN, vpcEndpoints: { secretsManager: mine } });

    // WHEN
    app.synth();

    // THEN the user's endpoint is the only one, and the bootstrap reaches it
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::EC2::VPCEndpoint', 1);
    template.hasResourceProperties('AWS::EC2::SecurityGroupEgress', { GroupId: getAtt(databaseRoles.connections.securityGroups[0], 'GroupId'), FromPort: 443, DestinationSecurityGroupId: getAtt(group, 'GroupId') });
  });

  test('GIVEN apiRoutes BRING_YOUR_OWN and the user\'s Secrets Manager endpoint made in the same VPC but not passed WHEN it synthesizes THEN it passes: the endpoint counts as the user\'s route', () => {
    // GIVEN an endpoint of aws-cdk-lib's (its service name a join of the Region and a suffix token)
    const app = new App();
    const stack = new Stack(app, 'Reporting');
    const vpc = isolatedVpc(stack, 'DataVpc', '10.0.0.0/16');
    const database = new AuroraOptimizedReads(stack, 'Database', { vpc, readers: 1 });
    new DatabaseRoleBootstrap(stack, 'DatabaseRoles', { cluster: database, roles: [{ name: 'report_reader', access: EndpointRole.READ_ONLY }], apiRoutes: ApiRoutes.BRING_YOUR_OWN });
    vpc.addInterfaceEndpoint('Mine', { service: ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER });

    // WHEN / THEN
    expect(() => app.synth()).not.toThrow();
    Template.fromStack(stack).resourceCountIs('AWS::EC2::VPCEndpoint', 1);
  });

  test('GIVEN the VPC in a network stack and the bootstrap in a data stack WHEN synthesized THEN the endpoint is in the data stack; a third stack asking for the same VPC\'s endpoint is refused with the fix', () => {
    // GIVEN
    const app = new App();
    const network = new Stack(app, 'Network');
    const data = new Stack(app, 'Data');
    const more = new Stack(app, 'More');
    const vpc = isolatedVpc(network, 'DataVpc', '10.0.0.0/16');
    const database = new AuroraOptimizedReads(data, 'Database', { vpc, readers: 1 });
    const roles = [{ name: 'report_reader', access: EndpointRole.READ_ONLY }];

    // WHEN
    new DatabaseRoleBootstrap(data, 'DatabaseRoles', { cluster: database, roles });

    // THEN the endpoint goes with its caller, so the network stack depends on nothing of the data stack
    Template.fromStack(data).resourceCountIs('AWS::EC2::VPCEndpoint', 1);
    Template.fromStack(network).resourceCountIs('AWS::EC2::VPCEndpoint', 0);
    expect(() => new DatabaseRoleBootstrap(more, 'DatabaseRoles', { cluster: database, roles })).toThrow(
      /^More\/DatabaseRoles: the VPC Network\/DataVpc already has the kit's endpoints in stack Data \(Data\/KitApiRoutes[0-9a-f]+\), and a VPC takes one endpoint per service: pass apiRoutes ApiRoutes.BRING_YOUR_OWN with vpcEndpoints from Data\/KitApiRoutes[0-9a-f]+$/,
    );
  });

  test('GIVEN vpcEndpoints with apiRoutes left at CREATE WHEN constructed THEN it fails: the construct would make a second endpoint beside the user\'s', () => {
    const app = new App();
    const stack = new Stack(app, 'Reporting');
    const vpc = isolatedVpc(stack, 'DataVpc', '10.0.0.0/16');
    const database = new AuroraOptimizedReads(stack, 'Database', { vpc, readers: 1 });
    const mine = vpc.addInterfaceEndpoint('Mine', { service: ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER });
    expect(() => new DatabaseRoleBootstrap(stack, 'DatabaseRoles', { cluster: database, roles: [{ name: 'report_reader', access: EndpointRole.READ_ONLY }], vpcEndpoints: { secretsManager: mine } })).toThrow(
      'Reporting/DatabaseRoles: vpcEndpoints is set with apiRoutes CREATE: the construct would make a second endpoint of a service beside yours; set apiRoutes to ApiRoutes.BRING_YOUR_OWN to use yours',
    );
  });
});

describe('PgBouncerProxy and its secret-auth consumers route their calls', () => {
  function pgBouncerApp(apiRoutes?: ApiRoutes) {
    const app = new App();
    const stack = new Stack(app, 'Pooling');
    const dataVpc = isolatedVpc(stack, 'DataVpc', '10.10.0.0/16');
    const consumerVpc = isolatedVpc(stack, 'ConsumerVpc', '10.20.0.0/16');
    const database = new AuroraOptimizedReads(stack, 'Database', { vpc: dataVpc, readers: 1 });
    const pooler = new PgBouncerProxy(stack, 'Pooler', {
      cluster: database,
      packages: { bucket: s3.Bucket.fromBucketName(stack, 'Packages', 'kit-packages'), key: 'pgbouncer/packages.tar' },
      apiRoutes,
    });
    const readOnly = pooler.addEndpoint('ReadOnly', { vpc: consumerVpc, role: EndpointRole.READ_ONLY });
    return { app, stack, dataVpc, consumerVpc, database, pooler, readOnly };
  }

  test('GIVEN a PgBouncerProxy, a role bootstrap in the same VPC and a consumer WHEN they synthesize THEN the data VPC has each endpoint the hosts call once (Secrets Manager shared with the bootstrap), and the consumer VPC one Secrets Manager endpoint passing the consumer\'s own secret', () => {
    // GIVEN
    const { app, stack, dataVpc, consumerVpc, database, pooler, readOnly } = pgBouncerApp();
    const databaseRoles = new DatabaseRoleBootstrap(stack, 'DatabaseRoles', { cluster: database, roles: [{ name: 'app_reader', access: EndpointRole.READ_ONLY, passwordSecretArn: pooler.consumerUserSecret('app_reader').secretArn }] });
    const reader = new LambdaConsumer(stack, 'Reader', { endpoint: readOnly, dbUser: 'app_reader', databaseName: 'app' });

    // WHEN
    app.synth();
    const template = Template.fromStack(stack);

    // THEN
    const endpoints = endpointsByService(template);
    const inVpc = (vpc: ec2.IVpc) => endpoints.filter(([, e]) => JSON.stringify(e.VpcId) === JSON.stringify(stack.resolve(vpc.vpcId))).map(([s]) => s).sort();
    expect(inVpc(dataVpc)).toEqual(['cloudformation', 'ec2messages', 'monitoring', 's3', 'secretsmanager', 'ssm', 'ssmmessages']);
    expect(inVpc(consumerVpc)).toEqual(['secretsmanager']);
    const dataSecrets = VpcApiRoutes.of(stack, dataVpc).endpointOf('secretsManager') as ec2.InterfaceVpcEndpoint;
    const principals = (template.toJSON().Resources[logicalIdOf(dataSecrets)].Properties.PolicyDocument.Statement as Array<{ Principal: unknown }>).map((s) => s.Principal);
    expect(principals).toEqual([
      { AWS: getAtt(pooler.hostRole, 'Arn') },
      { AWS: getAtt(databaseRoles.function.role!.node.defaultChild as iam.CfnRole, 'Arn') },
      { AWS: getAtt(databaseRoles.function.role!.node.defaultChild as iam.CfnRole, 'Arn') },
    ]);
    // the consumer's secret, added after the proxy, is among what the hosts may read
    expect(JSON.stringify(template.toJSON().Resources[logicalIdOf(dataSecrets)].Properties.PolicyDocument.Statement[0].Resource)).toContain(JSON.stringify(stack.resolve(pooler.consumerUserSecret('app_reader').secretArn)));
    const consumerSecrets = VpcApiRoutes.of(stack, consumerVpc).endpointOf('secretsManager')!;
    expect(template.toJSON().Resources[logicalIdOf(consumerSecrets)].Properties.PolicyDocument.Statement).toEqual([
      {
        Effect: 'Allow',
        Principal: { AWS: getAtt(reader.function.role!.node.defaultChild as iam.CfnRole, 'Arn') },
        Action: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'],
        Resource: stack.resolve(pooler.consumerUserSecret('app_reader').secretArn),
      },
    ]);
  });

  test('GIVEN a PgBouncerProxy with apiRoutes BRING_YOUR_OWN in isolated subnets WHEN it synthesizes THEN synth fails naming every API the hosts call', () => {
    // GIVEN
    const { app } = pgBouncerApp(ApiRoutes.BRING_YOUR_OWN);

    // WHEN / THEN
    const hosts = rejectionMessage('pooler-api-route', { subnetsHaveEgress: false, vpcEndpoints: {} });
    const signal = rejectionMessage('pooler-signal-route', { subnetsHaveEgress: false, vpcEndpoints: {} });
    expect(() => app.synth()).toThrow(`[Pooling/Pooler] ${hosts}${CDK_FIX}\n  [Pooling/Pooler] ${signal}${CDK_FIX}`);
  });

  test('GIVEN the hosts\' own Secrets Manager endpoint in the data VPC WHEN a role bootstrap there brings its own routes and passes none THEN synth fails: the kit\'s endpoint admits only the constructs that route through it', () => {
    // GIVEN: the PgBouncerProxy made the data VPC's Secrets Manager endpoint, for its hosts
    const { app, stack, database, pooler } = pgBouncerApp();
    new DatabaseRoleBootstrap(stack, 'DatabaseRoles', {
      cluster: database,
      roles: [{ name: 'app_reader', access: EndpointRole.READ_ONLY, passwordSecretArn: pooler.consumerUserSecret('app_reader').secretArn }],
      apiRoutes: ApiRoutes.BRING_YOUR_OWN,
    });

    // WHEN / THEN: its security group and policy would refuse the bootstrap's calls on AWS
    const message = rejectionMessage('role-bootstrap-api-route', { subnetsHaveEgress: false, vpcEndpoints: {} });
    expect(() => app.synth()).toThrow(`[Pooling/DatabaseRoles] ${message}${CDK_FIX}`);
  });

  test('GIVEN a secret-auth consumer with apiRoutes BRING_YOUR_OWN in an isolated VPC WHEN it synthesizes THEN synth fails naming the consumer and Secrets Manager', () => {
    // GIVEN
    const { app, stack, readOnly } = pgBouncerApp();
    new LambdaConsumer(stack, 'Reader', { endpoint: readOnly, dbUser: 'app_reader', databaseName: 'app', apiRoutes: ApiRoutes.BRING_YOUR_OWN });

    // WHEN / THEN
    const message = rejectionMessage('consumer-api-route', {
      subnetsHaveEgress: false,
      vpcEndpoints: {},
      auth: 'secret',
      // what else the Terraform module needs of a consumer with auth secret
      passwordSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:vectors-AbCdEf',
      connectArnPrefix: null,
      tlsCaCertificate: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----',
    });
    expect(() => app.synth()).toThrow(`[Pooling/Reader] ${message}${CDK_FIX}`);
  });
});
