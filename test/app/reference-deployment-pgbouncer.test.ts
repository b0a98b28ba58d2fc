/**
 * The reference deployment with `-c proxyEngine=pgbouncer`: the PgBouncer fleet instead of RDS Proxy,
 * its endpoints in the consumer VPC, the consumers wired to them, and every permission path a consumer,
 * a host and the role bootstrap need (IAM, the VPC endpoints' policies, the network).
 */
import * as fs from 'fs';
import * as path from 'path';
import { App, Validations } from 'aws-cdk-lib';
import { Annotations, Capture, Match, Template } from 'aws-cdk-lib/assertions';
import { CloudAssembly } from 'aws-cdk-lib/cx-api';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readDeploymentContext } from '../../lib/reference-app/app-context';
import { POOLER_PACKAGES_KEY } from '../../lib/reference-app/pgbouncer-tier';
import { MASTER_SECRET_READ_ACTIONS } from '../../lib/model';
import { POOLER_METRICS_NAMESPACE } from '../../lib/model/pgbouncer-metrics';
import { READER_DB_USER, ReferenceDeployment, WRITER_DB_USER } from '../../lib/reference-app/reference-deployment';
import { PgBouncerProxyEndpoint } from '../../lib/pgbouncer-proxy-endpoint';
import { ProxyEngine } from '../../lib/pooling-tier';
import { VpcApiRoutes } from '../../lib/vpc-api-routes';
import { getAtt, logicalIdOf, ref } from '../helpers/cdk';

const CDK_CONTEXT = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'cdk.json'), 'utf8')).context as Record<string, unknown>;

type Resource = { Type: string; Properties: Record<string, unknown>; DependsOn?: string[] };

/** The statements of a policy document, with Action and Resource as arrays. */
function statements(doc: unknown): Array<{ Action: string[]; Resource: unknown[]; Principal?: unknown; Effect: string }> {
  const list = (doc as { Statement: Array<Record<string, unknown>> }).Statement;
  const arr = (v: unknown) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
  return list.map((s) => ({ ...s, Action: arr(s.Action) as string[], Resource: arr(s.Resource), Effect: s.Effect as string }));
}

describe('ReferenceDeployment with proxyEngine=pgbouncer', () => {
  let app: App;
  let stack: ReferenceDeployment;
  let assembly: CloudAssembly;
  let template: Template;
  let resources: Record<string, Resource>;

  beforeAll(() => {
    // GIVEN bin/app.ts with -c proxyEngine=pgbouncer
    app = new App({ context: { ...CDK_CONTEXT, proxyEngine: 'pgbouncer' } });
    const settings = readDeploymentContext(app);
    stack = new ReferenceDeployment(app, settings.stackName, settings);
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    // WHEN: synthesis runs cdk-nag and throws on any unacknowledged error
    assembly = app.synth();
    template = Template.fromStack(stack);
    resources = template.toJSON().Resources as Record<string, Resource>;
  }, 300_000);

  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);

  test('the tier is a PgBouncer fleet: an Auto Scaling group, an internal NLB and a VPC endpoint service, and no RDS Proxy', () => {
    expect(stack.proxyEngine).toBe(ProxyEngine.PGBOUNCER);
    expect(stack.proxy).toBeUndefined();
    expect(ofType('AWS::RDS::DBProxy')).toHaveLength(0);
    expect(ofType('AWS::AutoScaling::AutoScalingGroup')).toHaveLength(1);
    template.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', { Type: 'network', Scheme: 'internal' });
    template.resourceCountIs('AWS::EC2::VPCEndpointService', 1);
  });

  test('the read-only and read/write endpoints are interface endpoints of the service in the consumer VPC, each with a security group of its own', () => {
    for (const endpoint of [stack.readOnlyEndpoint, stack.readWriteEndpoint] as PgBouncerProxyEndpoint[]) {
      const cfn = resources[logicalIdOf(endpoint.endpoint)];
      expect(cfn.Properties).toMatchObject({
        VpcId: ref(stack.consumerVpc),
        VpcEndpointType: 'Interface',
        SecurityGroupIds: [getAtt(endpoint.securityGroup, 'GroupId')],
        ServiceName: stack.resolve(stack.pgBouncer!.proxy.endpointService.vpcEndpointServiceName),
      });
      expect(resources[logicalIdOf(endpoint.securityGroup)].Properties.VpcId).toEqual(ref(stack.consumerVpc));
    }
  });

  test('each consumer connects to its endpoint\'s DNS name and port with its user\'s secret, trusting only the listeners\' CA', () => {
    for (const [consumer, endpoint, user] of [
      [stack.reader, stack.readOnlyEndpoint, READER_DB_USER],
      [stack.writer, stack.readWriteEndpoint, WRITER_DB_USER],
    ] as const) {
      const env = (resources[logicalIdOf(consumer.function)].Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(env).toMatchObject({
        DB_HOST: stack.resolve(endpoint.hostname),
        DB_PORT: String(endpoint.port),
        DB_USER: user,
        DB_AUTH: 'secret',
        DB_SECRET_ARN: stack.resolve(stack.pgBouncer!.proxy.consumerUserSecret(user).secretArn),
        DB_TLS: 'verify-full',
        DB_TLS_CA: stack.resolve(stack.pgBouncer!.proxy.clientCaCertificate),
        DB_ENDPOINT_ROLE: endpoint.role,
      });
      expect(env).not.toHaveProperty('DB_PASSWORD');
    }
    expect(stack.pgBouncer!.proxy.consumerUsers.sort()).toEqual([READER_DB_USER, WRITER_DB_USER]);
  });

  test('a consumer may read its own secret, in IAM and through the consumer VPC\'s Secrets Manager endpoint, and reach that endpoint', () => {
    const endpointPolicy = ofType('AWS::EC2::VPCEndpoint').find(([, r]) => r.Properties.VpcId !== undefined && JSON.stringify(r.Properties.VpcId) === JSON.stringify(ref(stack.consumerVpc)) && JSON.stringify(r.Properties.ServiceName).includes('secretsmanager'))![1].Properties.PolicyDocument;
    for (const [consumer, user] of [[stack.reader, READER_DB_USER], [stack.writer, WRITER_DB_USER]] as const) {
      const secretArn = stack.resolve(stack.pgBouncer!.proxy.consumerUserSecret(user).secretArn);
      const roleArn = getAtt(consumer.function.role!.node.defaultChild as iam.CfnRole, 'Arn');
      // the endpoint passes this role's read of this secret
      expect(statements(endpointPolicy).some((s) => s.Effect === 'Allow' && JSON.stringify(s.Principal) === JSON.stringify({ AWS: roleArn }) && s.Action.includes('secretsmanager:GetSecretValue') && JSON.stringify(s.Resource) === JSON.stringify([secretArn]))).toBe(true);
      // and the role's own policy allows it
      const policies = ofType('AWS::IAM::Policy').filter(([, r]) => JSON.stringify(r.Properties.Roles).includes(logicalIdOf(consumer.function.role!.node.defaultChild as iam.CfnRole)));
      expect(policies.flatMap(([, r]) => statements(r.Properties.PolicyDocument)).some((s) => s.Action.includes('secretsmanager:GetSecretValue') && JSON.stringify(s.Resource).includes(JSON.stringify(secretArn)))).toBe(true);
    }
    // network: the endpoint's security group admits HTTPS from each consumer's
    for (const consumer of [stack.reader, stack.writer]) {
      template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
        IpProtocol: 'tcp',
        FromPort: 443,
        SourceSecurityGroupId: getAtt(consumer.connections.securityGroups[0], 'GroupId'),
        GroupId: getAtt((VpcApiRoutes.of(stack, stack.consumerVpc).endpointOf('secretsManager') as ec2.InterfaceVpcEndpoint).connections.securityGroups[0], 'GroupId'),
      });
    }
  });

  test('the role bootstrap gives the consumers and the read-only server role the verifiers of their secrets, and may read those secrets', () => {
    const pooler = stack.pgBouncer!.proxy;
    const request = new Capture();
    template.hasResourceProperties('Custom::DatabaseRoles', { Request: request });
    const roles = (request.asObject() as { roles: Array<{ name: string; access: string; passwordSecretArn?: unknown }> }).roles;
    expect(roles).toEqual([
      { name: READER_DB_USER, access: 'READ_ONLY', passwordSecretArn: stack.resolve(pooler.consumerUserSecret(READER_DB_USER).secretArn) },
      { name: WRITER_DB_USER, access: 'READ_WRITE', passwordSecretArn: stack.resolve(pooler.consumerUserSecret(WRITER_DB_USER).secretArn) },
      { name: pooler.readOnlyServerUser, access: 'READ_ONLY', passwordSecretArn: stack.resolve(pooler.readOnlyServerSecret.secretArn) },
    ]);
    const bootstrapRole = logicalIdOf(stack.databaseRoles.function.role!.node.defaultChild as iam.CfnRole);
    const granted = ofType('AWS::IAM::Policy')
      .filter(([, r]) => JSON.stringify(r.Properties.Roles).includes(bootstrapRole))
      .flatMap(([, r]) => statements(r.Properties.PolicyDocument))
      .filter((s) => s.Action.includes('secretsmanager:GetSecretValue'))
      .flatMap((s) => s.Resource.map((x) => JSON.stringify(x)));
    for (const role of roles) expect(granted).toContain(JSON.stringify(role.passwordSecretArn));
  });

  test('the hosts start after the roles exist, and the consumers\' functions too (not their IAM roles, which the secrets\' key names)', () => {
    const rolesId = logicalIdOf(stack.databaseRoles.resource);
    expect(resources[logicalIdOf(stack.pgBouncer!.proxy.autoScalingGroup)].DependsOn).toContain(rolesId);
    for (const consumer of [stack.reader, stack.writer]) expect(resources[logicalIdOf(consumer.function)].DependsOn).toContain(rolesId);
  });

  test('the data VPC, without NAT, has the endpoints the hosts call: S3, Secrets Manager, Session Manager\'s three, CloudWatch, CloudFormation (their signals)', () => {
    const services = ofType('AWS::EC2::VPCEndpoint')
      .filter(([, r]) => JSON.stringify(r.Properties.VpcId) === JSON.stringify(ref(stack.dataVpc)))
      .map(([, r]) => JSON.stringify(r.Properties.ServiceName).match(/\.([a-z0-9]+)"\]\]\}$/)?.[1])
      .sort();
    expect(services).toEqual(['cloudformation', 'ec2messages', 'monitoring', 's3', 'secretsmanager', 'ssm', 'ssmmessages']);
    expect(ofType('AWS::EC2::NatGateway')).toHaveLength(0);
    // The hosts boot after every endpoint they call exists (a host that cannot signal fails the creation).
    const dataEndpoints = ofType('AWS::EC2::VPCEndpoint').filter(([, r]) => JSON.stringify(r.Properties.VpcId) === JSON.stringify(ref(stack.dataVpc))).map(([id]) => id);
    const dependsOn = resources[logicalIdOf(stack.pgBouncer!.proxy.autoScalingGroup)].DependsOn as string[];
    for (const id of dataEndpoints) expect([id, dependsOn.includes(id)]).toEqual([id, true]);
  });

  describe('the data VPC\'s endpoints pass only what their callers need', () => {
    /** The policy document of the data VPC's endpoint of a service (undefined: the default, full access). */
    const dataVpcPolicy = (service: string) => {
      const found = ofType('AWS::EC2::VPCEndpoint').filter(([, r]) => JSON.stringify(r.Properties.VpcId) === JSON.stringify(ref(stack.dataVpc)) && JSON.stringify(r.Properties.ServiceName).endsWith(`".${service}"]]}`));
      expect(found).toHaveLength(1);
      return found[0][1].Properties.PolicyDocument;
    };
    const hostRole = () => getAtt(stack.pgBouncer!.proxy.hostRole, 'Arn');

    test('S3 (gateway): the hosts\' GetObject of the packages object only, Principal "*" with the host role by aws:PrincipalArn', () => {
      expect(statements(dataVpcPolicy('s3'))).toEqual([
        {
          Effect: 'Allow',
          Principal: '*',
          Action: ['s3:GetObject'],
          Resource: [stack.resolve(stack.pgBouncer!.packagesBucket.arnForObjects(POOLER_PACKAGES_KEY))],
          Condition: { StringEquals: { 'aws:PrincipalArn': hostRole() } },
        },
      ]);
      expect(resources[logicalIdOf(VpcApiRoutes.of(stack, stack.dataVpc).endpointOf('s3')!)].Properties.VpcEndpointType).toBe('Gateway');
    });

    test('Secrets Manager: the role bootstrap\'s reads of the master secret and of its roles\' secrets, the hosts\' reads of theirs', () => {
      const pooler = stack.pgBouncer!.proxy;
      const bootstrap = getAtt(stack.databaseRoles.function.role!.node.defaultChild as iam.CfnRole, 'Arn');
      // Resources compared in any order (CDK sorts them).
      const arns = (secrets: Array<{ secretArn: string }>) => secrets.map((x) => JSON.stringify(stack.resolve(x.secretArn))).sort();
      const received = statements(dataVpcPolicy('secretsmanager')).map((st) => ({ ...st, Resource: st.Resource.map((x) => JSON.stringify(x)).sort() }));
      const consumers = [pooler.consumerUserSecret(READER_DB_USER), pooler.consumerUserSecret(WRITER_DB_USER)];
      expect(received).toEqual([
        // the hosts' auth file (the server role's, each consumer's, added after the proxy) and the listeners' certificate
        { Effect: 'Allow', Principal: { AWS: hostRole() }, Action: ['secretsmanager:GetSecretValue'], Resource: arns([pooler.readOnlyServerSecret, ...consumers, pooler.tlsSecret]) },
        { Effect: 'Allow', Principal: { AWS: bootstrap }, Action: [...MASTER_SECRET_READ_ACTIONS], Resource: arns([stack.database.masterSecret]) },
        { Effect: 'Allow', Principal: { AWS: bootstrap }, Action: ['secretsmanager:GetSecretValue'], Resource: arns([...consumers, pooler.readOnlyServerSecret]) },
      ]);
    });

    test('CloudWatch: the hosts\' PutMetricData in the engine\'s namespace only; Session Manager\'s three keep the default policy', () => {
      expect(statements(dataVpcPolicy('monitoring'))).toEqual([
        { Effect: 'Allow', Principal: { AWS: hostRole() }, Action: ['cloudwatch:PutMetricData'], Resource: ['*'], Condition: { StringEquals: { 'cloudwatch:namespace': POOLER_METRICS_NAMESPACE } } },
      ]);
      for (const service of ['ssm', 'ssmmessages', 'ec2messages']) expect([service, dataVpcPolicy(service)]).toEqual([service, undefined]);
    });

    test('CloudFormation: the hosts\' SignalResource on this stack only', () => {
      expect(statements(dataVpcPolicy('cloudformation'))).toEqual([
        { Effect: 'Allow', Principal: { AWS: hostRole() }, Action: ['cloudformation:SignalResource'], Resource: [{ Ref: 'AWS::StackId' }] },
      ]);
    });
  });

  test('the packages bucket is encrypted, private, TLS-only, and its location an output', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: { ServerSideEncryptionConfiguration: [Match.objectLike({ ServerSideEncryptionByDefault: Match.objectLike({ SSEAlgorithm: 'aws:kms' }) })] },
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
    });
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(JSON.stringify(outputs.PoolerPackages.Value)).toContain(POOLER_PACKAGES_KEY);
    expect(outputs.ProxyEngine.Value).toBe(ProxyEngine.PGBOUNCER);
  });

  test('cdk-nag (AwsSolutions) reports nothing unacknowledged, and there are no construct warnings', () => {
    const report = JSON.parse(fs.readFileSync(path.join(assembly.directory, 'validation-report.json'), 'utf8')) as {
      pluginReports: Array<{ pluginName: string; violations: Array<{ ruleName: string; severity: string }> }>;
    };
    expect(report.pluginReports.flatMap((r) => r.violations.map((v) => `${r.pluginName} ${v.severity} ${v.ruleName}`))).toEqual([]);
    Annotations.fromStack(stack).hasNoWarning('*', Match.anyValue());
  });
});

describe('ReferenceDeployment with proxyEngine=pgbouncer: the dashboard', () => {
  test('charts the fleet\'s metrics and alarms on its waiting clients, longest wait and unhealthy hosts, and nothing of RDS Proxy', () => {
    // GIVEN
    const app = new App({ context: { ...CDK_CONTEXT, proxyEngine: 'pgbouncer', 'aws:cdk:bundling-stacks': [] } });
    const stack = new ReferenceDeployment(app, 'AuroraProxyKit', readDeploymentContext(app));
    // WHEN
    const template = Template.fromStack(stack);
    // THEN
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties as { Namespace?: string; MetricName?: string });
    const namespaces = new Set(alarms.map((a) => a.Namespace));
    expect(namespaces).toContain('AuroraProxyKit/PgBouncer');
    expect(namespaces).toContain('AWS/NetworkELB');
    expect(alarms.some((a) => a.Namespace === 'AWS/RDS' && /Proxy|Pinned|Borrow/.test(a.MetricName ?? ''))).toBe(false);
    const body = JSON.stringify(template.findResources('AWS::CloudWatch::Dashboard'));
    expect(body).toContain('AuroraProxyKit/PgBouncer');
    expect(body).toContain(stack.resolve(stack.pgBouncer!.proxy.fleetName));
  });
});
