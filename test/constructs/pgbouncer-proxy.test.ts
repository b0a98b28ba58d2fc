import { App, CfnElement, Duration, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { AwsSolutionsChecks } from 'cdk-nag';
import { EndpointRole } from '../../lambda/src/environment';
import { PoolMode } from '../../lib';
import { DEFAULT_POOL_SETTINGS } from '../../lib/model';
import { renderPoolerBootstrap } from '../../lib/model/pgbouncer-bootstrap';
import { POOLER_HEALTH_PORT } from '../../lib/model/pgbouncer-host-serve';
import { POOLER_METRICS_NAMESPACE } from '../../lib/model/pgbouncer-metrics';
import { AuroraOptimizedReads } from '../../lib/aurora-optimized-reads';
import { PgBouncerProxy } from '../../lib/pgbouncer-proxy';
import type { PgBouncerProxyProps } from '../../lib/pgbouncer-proxy-props';
import { getAtt, isolatedSubnetRefs, isolatedVpc, kitError, newStack, ref } from '../helpers/cdk';
import { rejectionMessage } from '../helpers/vectors';

const PACKAGES_KEY = 'pgbouncer/packages.tar';
/** A user's CA certificate as the prop takes it (its content is not read at synth). */
const USER_CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIBdzCCAR2gAwIBAgIUY2FwZW0=\n-----END CERTIFICATE-----\n';

function poolerStack(props: Partial<PgBouncerProxyProps> = {}, readers?: number) {
  const { app, stack } = newStack();
  const dataVpc = isolatedVpc(stack, 'DataVpc', '10.10.0.0/16');
  const consumerVpc = isolatedVpc(stack, 'ConsumerVpc', '10.30.0.0/16');
  const cluster = new AuroraOptimizedReads(stack, 'Cluster', { vpc: dataVpc, readers });
  const bucket = s3.Bucket.fromBucketName(stack, 'Packages', 'kit-packages');
  const tls = secretsmanager.Secret.fromSecretNameV2(stack, 'Tls', 'pooler-tls');
  const create = () => new PgBouncerProxy(stack, 'Pooler', { cluster, packages: { bucket, key: PACKAGES_KEY }, tlsCertificate: { secret: tls, caCertificatePem: USER_CA_PEM }, ...props });
  return { app, stack, dataVpc, consumerVpc, cluster, tls, create };
}

/** The TLS secret's ARN as the host role's policy names it (imported by name: any suffix). */
const TLS_SECRET_ARN_PATTERN = { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':secretsmanager:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':secret:pooler-tls-??????']] };

const placeholders = (template: string): string[] => [...new Set([...template.matchAll(/\$\{([A-Za-z0-9]+)\}/g)].map((m) => m[1]!))].sort();

// AWS fact asg-elb-health-checks-replace (lib/model/aws-facts.ts): the group uses EC2 health checks.
describe('PgBouncerProxy', () => {
  let app: App;
  let stack: Stack;
  let dataVpc: ec2.Vpc;
  let consumerVpc: ec2.Vpc;
  let cluster: AuroraOptimizedReads;
  let tls: secretsmanager.ISecret;
  let pooler: PgBouncerProxy;
  let consumer: secretsmanager.Secret;
  let readOnly: ReturnType<PgBouncerProxy['addEndpoint']>;
  let template: Template;

  beforeAll(() => {
    // GIVEN
    let create: () => PgBouncerProxy;
    ({ app, stack, dataVpc, consumerVpc, cluster, tls, create } = poolerStack());
    // WHEN
    pooler = create();
    readOnly = pooler.addEndpoint('ReportingReadOnly', { vpc: consumerVpc, role: EndpointRole.READ_ONLY });
    // Added after the endpoint: still in the hosts' user data.
    consumer = pooler.addConsumerUser('app_reader');
    template = Template.fromStack(stack);
  });

  test('the hosts are a fixed-size group of two in the data VPC\'s isolated subnets, created once every host signals and replaced one at a time, each waiting on the new host\'s signal', () => {
    template.hasResource('AWS::AutoScaling::AutoScalingGroup', {
      Properties: Match.objectLike({
        MinSize: '2',
        MaxSize: '2',
        DesiredCapacity: '2',
        VPCZoneIdentifier: isolatedSubnetRefs(dataVpc),
        // EC2's checks only: the load balancer's fail on every host at once when Aurora's servers do.
        HealthCheckType: 'EC2',
        HealthCheckGracePeriod: 300,
        // A pinned version, not $Latest: a new version is a change CloudFormation rolls out.
        LaunchTemplate: { LaunchTemplateId: ref(pooler.launchTemplate), Version: getAtt(pooler.launchTemplate, 'LatestVersionNumber') },
      }),
      // Every host's SUCCESS within the signal timeout, or the stack's creation fails.
      CreationPolicy: { ResourceSignal: { Count: 2, Timeout: 'PT15M' } },
      // One host at a time; the next old host goes only once the new one signalled (PauseTime is then the
      // signal timeout), a single FAILURE stops the update (100%), and nothing replaces or adds hosts meanwhile.
      UpdatePolicy: {
        AutoScalingRollingUpdate: {
          MaxBatchSize: 1,
          MinInstancesInService: 1,
          MinSuccessfulInstancesPercent: 100,
          WaitOnResourceSignals: true,
          PauseTime: 'PT15M',
          SuspendProcesses: ['HealthCheck', 'ReplaceUnhealthy', 'AZRebalance', 'AlarmNotification', 'ScheduledActions', 'InstanceRefresh'],
        },
      },
    });
  });

  test('GIVEN more hosts WHEN the stack is created THEN it waits for a signal from each', () => {
    const { stack, create } = poolerStack({ hosts: 4 });
    create();
    Template.fromStack(stack).hasResource('AWS::AutoScaling::AutoScalingGroup', { CreationPolicy: { ResourceSignal: { Count: 4, Timeout: 'PT15M' } }, UpdatePolicy: { AutoScalingRollingUpdate: Match.objectLike({ MinInstancesInService: 3, WaitOnResourceSignals: true }) } });
  });

  test('the launch template: Graviton, the AMI pinned by a parameter the deployer sets (no default, never Debian\'s latest-image parameter), IMDSv2 only, encrypted gp3 root, no public address, no key pair', () => {
    const parameters = template.findParameters('*', { Type: 'AWS::EC2::Image::Id' });
    expect(Object.values(parameters)).toEqual([{ Type: 'AWS::EC2::Image::Id', Description: expect.stringContaining('aws ssm get-parameter --name /aws/service/debian/release/13/latest/arm64') }]);
    // No parameter CloudFormation resolves at each deploy to an image.
    expect(template.findParameters('*', { Type: 'AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>' })).toEqual({});
    const [parameter] = Object.keys(parameters);
    template.hasResourceProperties('AWS::EC2::LaunchTemplate', {
      LaunchTemplateData: Match.objectLike({
        InstanceType: 'c7g.large',
        ImageId: { Ref: parameter },
        MetadataOptions: { HttpTokens: 'required', HttpPutResponseHopLimit: 1 },
        BlockDeviceMappings: [{ DeviceName: '/dev/xvda', Ebs: { Encrypted: true, VolumeType: 'gp3', VolumeSize: 8, DeleteOnTermination: true } }],
        NetworkInterfaces: [Match.objectLike({ AssociatePublicIpAddress: false, Groups: [getAtt(pooler.connections.securityGroups[0]!, 'GroupId')] })],
        KeyName: Match.absent(),
      }),
    });
  });

  test('the user data is the bootstrap of this fleet, substituted at deploy with a value for every placeholder it uses', () => {
    // GIVEN
    const expected = renderPoolerBootstrap();
    const data = Object.values(template.findResources('AWS::EC2::LaunchTemplate'))[0]!.Properties.LaunchTemplateData.UserData;
    // WHEN
    const [body, variables] = data['Fn::Base64']['Fn::Sub'] as [string, Record<string, unknown>];
    // THEN
    expect(body).toBe(expected);
    expect(Object.keys(variables).sort()).toEqual(placeholders(body));
    expect(variables).toEqual({
      ClusterEndpoint: getAtt(cluster.cluster, 'Endpoint.Address'),
      ReaderEndpoints: { 'Fn::Join': [' ', [getAtt(cluster.cluster.node.findChild('Reader1'), 'Endpoint.Address'), getAtt(cluster.cluster.node.findChild('Reader2'), 'Endpoint.Address')]] },
      // The writer instance's own endpoint: the promoted reader's read-only pools go to it after a failover.
      WriterInstanceEndpoint: getAtt(cluster.cluster.node.findChild('Writer'), 'Endpoint.Address'),
      DatabaseName: 'app',
      ServerPort: getAtt(cluster.cluster, 'Endpoint.Port'),
      ServerUser: 'apk_pooler_reader',
      Hosts: '2',
      Vcpus: '2',
      MaxConnections: String(cluster.sizing.maxConnections),
      MaxConnectionsPercent: String(DEFAULT_POOL_SETTINGS.maxConnectionsPercent),
      MaxIdleConnectionsPercent: String(DEFAULT_POOL_SETTINGS.maxIdleConnectionsPercent),
      BorrowTimeoutSeconds: String(DEFAULT_POOL_SETTINGS.connectionBorrowTimeoutSeconds),
      MaxClientConnections: '1000',
      TcpIdleTimeoutSeconds: '350',
      PackagesBucket: 'kit-packages',
      PackagesKey: PACKAGES_KEY,
      ServerSecretArn: ref(pooler.readOnlyServerSecret),
      ConsumerSecretArns: ref(consumer),
      TlsSecretArn: stack.resolve(tls.secretArn),
      // The stack's name and the construct's path in it.
      FleetName: `${stack.stackName}/Pooler`,
      // The hosts signal this stack's group, in this Region.
      SignalStack: { Ref: 'AWS::StackName' },
      SignalResource: stack.getLogicalId(pooler.autoScalingGroup.node.defaultChild as CfnElement),
      SignalRegion: { Ref: 'AWS::Region' },
      // No endpoint in session pooling: no session listener.
      SessionListeners: '',
      SessionMaxConnectionsPercent: '25',
    });
    expect(template.toJSON().Resources[stack.getLogicalId(pooler.autoScalingGroup.node.defaultChild as CfnElement)].Type).toBe('AWS::AutoScaling::AutoScalingGroup');
    expect(pooler.fleetName).toBe(`${stack.stackName}/Pooler`);
  });

  // session-manager-minimal-instance-permissions: AWS's minimal Session Manager actions, not AmazonSSMManagedInstanceCore (every SSM parameter).
  test('the host role: Session Manager\'s minimal actions and no managed policy, read access to exactly the server, consumer and TLS secrets and the packages object, PutMetricData in the engine\'s namespace only, and SignalResource on this stack only', () => {
    const roles = template.findResources('AWS::IAM::Role', { Properties: { AssumeRolePolicyDocument: { Statement: [Match.objectLike({ Principal: { Service: 'ec2.amazonaws.com' } })] } } });
    expect(Object.values(roles).map((r) => r.Properties.ManagedPolicyArns)).toEqual([undefined]);
    const policies = Object.values(template.findResources('AWS::IAM::Policy', { Properties: { Roles: [ref(pooler.hostRole)] } }));
    const statements = policies.flatMap((p) => p.Properties.PolicyDocument.Statement as Array<{ Action: unknown; Resource: unknown }>);
    const read = ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'];
    expect(statements).toEqual([
      { Action: ['ssm:UpdateInstanceInformation', 'ssmmessages:CreateControlChannel', 'ssmmessages:CreateDataChannel', 'ssmmessages:OpenControlChannel', 'ssmmessages:OpenDataChannel'], Effect: 'Allow', Resource: '*' },
      { Action: read, Effect: 'Allow', Resource: ref(pooler.readOnlyServerSecret) },
      { Action: 's3:GetObject', Effect: 'Allow', Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:s3:::kit-packages/${PACKAGES_KEY}`]] } },
      { Action: 'cloudwatch:PutMetricData', Condition: { StringEquals: { 'cloudwatch:namespace': POOLER_METRICS_NAMESPACE } }, Effect: 'Allow', Resource: '*' },
      // This stack by its id (name and unique suffix): no other stack, nor a later one of the same name.
      { Action: 'cloudformation:SignalResource', Effect: 'Allow', Resource: { Ref: 'AWS::StackId' } },
      { Action: read, Effect: 'Allow', Resource: TLS_SECRET_ARN_PATTERN },
      { Action: read, Effect: 'Allow', Resource: ref(consumer) },
    ]);
  });

  test('packagesUrl names the object the hosts read, the one their role may get, for the user\'s upload', () => {
    expect(stack.resolve(pooler.packagesUrl)).toBe(`s3://kit-packages/${PACKAGES_KEY}`);
  });

  test('the generated secrets hold a username and a password without punctuation', () => {
    template.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: { SecretStringTemplate: '{"username":"apk_pooler_reader"}', GenerateStringKey: 'password', ExcludePunctuation: true, PasswordLength: 32 },
    });
    template.hasResourceProperties('AWS::SecretsManager::Secret', { GenerateSecretString: Match.objectLike({ SecretStringTemplate: '{"username":"app_reader"}' }) });
  });

  test('an internal NLB with its own security group, cross-zone, a TCP listener per role with the idle timeout, to the hosts\' PgBouncer ports, checked on the hosts\' health endpoint', () => {
    const lbGroup = getAtt(pooler.loadBalancer.connections.securityGroups[0]!, 'GroupId');
    template.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', {
      Type: 'network',
      Scheme: 'internal',
      SecurityGroups: [lbGroup],
      Subnets: isolatedSubnetRefs(dataVpc),
      LoadBalancerAttributes: Match.arrayWith([{ Key: 'load_balancing.cross_zone.enabled', Value: 'true' }]),
    });
    for (const [port, targetPort, path] of [[5432, 6432, '/read-write'], [5433, 6433, '/read-only']] as const) {
      template.hasResourceProperties('AWS::ElasticLoadBalancingV2::Listener', { Port: port, Protocol: 'TCP', ListenerAttributes: [{ Key: 'tcp.idle_timeout.seconds', Value: '350' }] });
      template.hasResourceProperties('AWS::ElasticLoadBalancingV2::TargetGroup', {
        Port: targetPort,
        Protocol: 'TCP',
        HealthCheckProtocol: 'HTTP',
        HealthCheckPort: String(POOLER_HEALTH_PORT),
        HealthCheckPath: path,
        Matcher: { HttpCode: '200' },
        HealthCheckIntervalSeconds: 10,
        HealthCheckTimeoutSeconds: 5,
        HealthyThresholdCount: 2,
        UnhealthyThresholdCount: 2,
        TargetGroupAttributes: [{ Key: 'deregistration_delay.timeout_seconds', Value: '30' }],
      });
      // No Name: CloudFormation names them, so a change that replaces one (port, protocol, VPC) does not collide with the old one's name.
      expect(Object.values(template.findResources('AWS::ElasticLoadBalancingV2::TargetGroup')).map((g) => g.Properties.Name)).toEqual([undefined, undefined]);
      // The hosts admit the load balancer on the port, and only it.
      template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', { GroupId: getAtt(pooler.connections.securityGroups[0]!, 'GroupId'), SourceSecurityGroupId: lbGroup, FromPort: targetPort, ToPort: targetPort });
    }
    // ... and its health checks on the health endpoint's port (ingress on the hosts, egress of the load balancer).
    template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', { GroupId: getAtt(pooler.connections.securityGroups[0]!, 'GroupId'), SourceSecurityGroupId: lbGroup, FromPort: POOLER_HEALTH_PORT, ToPort: POOLER_HEALTH_PORT });
    template.hasResourceProperties('AWS::EC2::SecurityGroupEgress', { GroupId: lbGroup, DestinationSecurityGroupId: getAtt(pooler.connections.securityGroups[0]!, 'GroupId'), FromPort: POOLER_HEALTH_PORT, ToPort: POOLER_HEALTH_PORT });
    template.resourceCountIs('AWS::ElasticLoadBalancingV2::Listener', 2);
  });

  test('the cluster admits the hosts on its port', () => {
    template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      GroupId: getAtt(cluster.connections.securityGroups[0]!, 'GroupId'),
      SourceSecurityGroupId: getAtt(pooler.connections.securityGroups[0]!, 'GroupId'),
      FromPort: getAtt(cluster.cluster, 'Endpoint.Port'),
    });
  });

  test('a VPC endpoint service on the NLB, for this account, without manual acceptance', () => {
    template.hasResourceProperties('AWS::EC2::VPCEndpointService', { AcceptanceRequired: false, NetworkLoadBalancerArns: [ref(pooler.loadBalancer)] });
    expect(pooler.loadBalancerAvailabilityZones).toHaveLength(2);
    template.hasResourceProperties('AWS::EC2::VPCEndpointServicePermissions', {
      AllowedPrincipals: [{ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::', { Ref: 'AWS::AccountId' }, ':root']] }],
    });
  });

  test('addEndpoint: an interface endpoint in the consumer VPC with its own closed security group, its host and the role\'s port', () => {
    // THEN
    template.hasResource('AWS::EC2::VPCEndpoint', {
      Properties: {
        VpcEndpointType: 'Interface',
        VpcId: ref(consumerVpc),
        SubnetIds: isolatedSubnetRefs(consumerVpc),
        SecurityGroupIds: [getAtt(readOnly.securityGroup, 'GroupId')],
        PrivateDnsEnabled: false,
        ServiceName: { 'Fn::Join': ['.', ['com.amazonaws.vpce', { Ref: 'AWS::Region' }, stack.resolve(pooler.endpointService.vpcEndpointServiceId)]] },
      },
      DependsOn: Match.arrayWith([Match.stringLikeRegexp('^PoolerEndpointServicePermissions')]),
    });
    template.hasResourceProperties('AWS::EC2::SecurityGroup', {
      VpcId: ref(consumerVpc),
      GroupDescription: 'READ_ONLY PgBouncer endpoint Stack/Pooler/ReportingReadOnly: ingress only from granted clients',
      SecurityGroupIngress: Match.absent(),
      SecurityGroupEgress: [Match.objectLike({ CidrIp: '255.255.255.255/32' })],
    });
    expect(readOnly.port).toBe(5433);
    expect(stack.resolve(readOnly.hostname)).toEqual({ 'Fn::Select': [1, { 'Fn::Split': [':', { 'Fn::Select': [0, getAtt(readOnly.endpoint, 'DnsEntries')] }] }] });
  });

  test('GIVEN endpoints in session pooling, one added after the proxy\'s user data WHEN synthesized THEN each role\'s session listener exists once: its hosts\' processes, its NLB listener and target group with the same health check, and the endpoint\'s port', () => {
    // GIVEN
    const { stack: s, consumerVpc: vpc, create } = poolerStack({ sessionMaxConnectionsPercent: 40 });
    const proxy = create();
    // WHEN
    const rw = proxy.addEndpoint('Notifications', { vpc, role: EndpointRole.READ_WRITE, poolMode: PoolMode.SESSION });
    const rwAgain = proxy.addEndpoint('Locks', { vpc, role: EndpointRole.READ_WRITE, poolMode: PoolMode.SESSION });
    const ro = proxy.addEndpoint('Reports', { vpc, role: EndpointRole.READ_ONLY, poolMode: PoolMode.SESSION });
    const plain = proxy.addEndpoint('Web', { vpc, role: EndpointRole.READ_WRITE });
    const t = Template.fromStack(s);
    // THEN
    expect([rw.port, rwAgain.port, ro.port, plain.port, rw.poolMode, plain.poolMode]).toEqual([5434, 5434, 5435, 5432, PoolMode.SESSION, PoolMode.TRANSACTION]);
    expect(proxy.sessionRoles).toEqual([EndpointRole.READ_WRITE, EndpointRole.READ_ONLY]);
    const variables = Object.values(t.findResources('AWS::EC2::LaunchTemplate'))[0]!.Properties.LaunchTemplateData.UserData['Fn::Base64']['Fn::Sub'][1];
    expect([variables.SessionListeners, variables.SessionMaxConnectionsPercent]).toEqual(['sw sr', '40']);
    t.resourceCountIs('AWS::ElasticLoadBalancingV2::Listener', 4);
    const hosts = getAtt(proxy.connections.securityGroups[0]!, 'GroupId');
    const lbGroup = getAtt(proxy.loadBalancer.connections.securityGroups[0]!, 'GroupId');
    for (const [port, targetPort, path] of [[5434, 6434, '/read-write-session'], [5435, 6435, '/read-only-session']] as const) {
      t.hasResourceProperties('AWS::ElasticLoadBalancingV2::Listener', { Port: port, Protocol: 'TCP', ListenerAttributes: [{ Key: 'tcp.idle_timeout.seconds', Value: '350' }] });
      t.hasResourceProperties('AWS::ElasticLoadBalancingV2::TargetGroup', { Port: targetPort, HealthCheckPath: path, HealthCheckPort: String(POOLER_HEALTH_PORT), HealthCheckIntervalSeconds: 10, HealthCheckTimeoutSeconds: 5 });
      t.hasResourceProperties('AWS::EC2::SecurityGroupIngress', { GroupId: hosts, SourceSecurityGroupId: lbGroup, FromPort: targetPort, ToPort: targetPort });
    }
    // The hosts are in every target group, the session ones included.
    const groups = Object.values(t.findResources('AWS::AutoScaling::AutoScalingGroup'))[0]!.Properties.TargetGroupARNs;
    expect(groups).toHaveLength(4);
    expect(proxy.targetGroup(EndpointRole.READ_ONLY, PoolMode.SESSION)).not.toBe(proxy.targetGroup(EndpointRole.READ_ONLY));
    t.hasResourceProperties('AWS::EC2::SecurityGroup', { GroupDescription: 'READ_WRITE PgBouncer endpoint Stack/Pooler/Notifications (session pooling): ingress only from granted clients' });
  });

  test('GIVEN no endpoint in session pooling WHEN a session target group is asked for THEN the error says how to get one', () => {
    const { create } = poolerStack();
    const proxy = create();
    expect(() => proxy.targetGroup(EndpointRole.READ_WRITE, PoolMode.SESSION)).toThrow(kitError('Stack/Pooler', 'no session pooling listener of role READ_WRITE: add an endpoint with role READ_WRITE and poolMode session first'));
  });

  test('GIVEN a budget that leaves the session pools too little WHEN an endpoint asks for session pooling THEN it is refused with the share, the need and the fix', () => {
    // GIVEN 1% of 3479: a budget of 34; 5% of it is 1 connection for 4 processes
    const { consumerVpc: vpc, create } = poolerStack({ maxConnectionsPercent: 1, maxIdleConnectionsPercent: 0, sessionMaxConnectionsPercent: 5 });
    const proxy = create();
    // WHEN / THEN
    expect(() => proxy.addEndpoint('Locks', { vpc, role: EndpointRole.READ_WRITE, poolMode: PoolMode.SESSION })).toThrow(
      kitError('Stack/Pooler', 'sessionMaxConnectionsPercent 5 splits each target\'s budget of 34 into 1 server connections for session pooling and 33 for transaction pooling, and hosts 2 x 2 processes per target need 4 in each: use fewer hosts or a smaller instance type, raise maxConnectionsPercent, or choose a sessionMaxConnectionsPercent that leaves both shares that many'),
    );
    // The refused listener was not added: a transaction endpoint is still fine.
    expect(proxy.sessionRoles).toEqual([]);
  });

  test('GIVEN a pool mode that is not one WHEN an endpoint is added THEN it is refused naming the modes', () => {
    const { consumerVpc: vpc, create } = poolerStack();
    expect(() => create().addEndpoint('Odd', { vpc, role: EndpointRole.READ_WRITE, poolMode: 'statement' as PoolMode })).toThrow(kitError('Stack/Pooler/Odd', rejectionMessage('pooler-endpoint-pool-mode', { poolMode: 'statement' })));
  });

  test('a granted client reaches the endpoint on the role\'s port', () => {
    // GIVEN
    const { stack: s, consumerVpc: vpc, create } = poolerStack();
    const endpoint = create().addEndpoint('ReadWrite', { vpc, role: EndpointRole.READ_WRITE });
    const client = new ec2.SecurityGroup(s, 'Client', { vpc, allowAllOutbound: false });
    // WHEN
    endpoint.connections.allowDefaultPortFrom(client);
    // THEN
    Template.fromStack(s).hasResourceProperties('AWS::EC2::SecurityGroupIngress', { GroupId: getAtt(endpoint.securityGroup, 'GroupId'), SourceSecurityGroupId: getAtt(client, 'GroupId'), FromPort: 5432, ToPort: 5432 });
  });

  test('cdk-nag AwsSolutions: no finding on the proxy, and each acknowledgement hides a real one', () => {
    // WHEN
    const findings = new AwsSolutionsChecks().validateScope(app).violations.filter((v) => v.violatingResources.some((r) => r.constructPath?.startsWith('Stack/Pooler')));
    const pack = new AwsSolutionsChecks();
    (pack as unknown as { isAcknowledged: () => boolean }).isAcknowledged = () => false;
    const raw = pack.validateScope(app).violations.filter((v) => v.violatingResources.some((r) => r.constructPath?.startsWith('Stack/Pooler')));
    // THEN
    expect(findings).toEqual([]);
    // every AwsSolutions acknowledgement under the proxy hides a finding the rule raises without it
    const acknowledged = app.node
      .findAll()
      .filter((c) => c.node.path.startsWith('Stack/Pooler'))
      .flatMap((c) => c.node.metadata.filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY).flatMap((m) => Object.keys(m.data as Record<string, string>)))
      .map((id) => id.replace(/^Annotation::/, ''))
      .filter((id) => id.startsWith('AwsSolutions-'));
    expect([...new Set(acknowledged)].sort()).toEqual([...new Set(raw.map((v) => v.ruleName))].sort());
    expect([...new Set(raw.map((v) => v.ruleName))].sort()).toEqual([
      'AwsSolutions-AS3',
      'AwsSolutions-ELB2',
      'AwsSolutions-IAM5[Resource::*]',
      'AwsSolutions-SMG4',
    ]);
  });
});

describe('PgBouncerProxy validation', () => {
  test.each([
    ['a non-Graviton instance type', { instanceType: 'c7i.large' }, 'instanceType c7i.large is not a valid Graviton (arm64) instance type: use a Graviton type such as c7g.large: the hosts run the Debian 13 arm64 image'],
    ['a Graviton size the kit does not know', { instanceType: 'c7g.metal' }, 'instanceType c7g.metal is not a pooler instance type the kit knows the vCPUs of: use a family of c7g, m7g, r7g, c8g, m8g, r8g in size medium, large, xlarge, 2xlarge, 4xlarge, 8xlarge, 12xlarge, 16xlarge'],
    ['one host', { hosts: 1 }, 'hosts 1 is out of range: run at least two hosts, in two Availability Zones, so one can be replaced while the other serves (an integer from 2 to 20)'],
    ['an idle timeout below the NLB\'s minimum', { tcpIdleTimeout: Duration.seconds(30) }, 'tcpIdleTimeout 30 is out of range: the NLB accepts a TCP idle timeout of 60 to 6000 seconds (an integer from 60 to 6000)'],
    ['a session share of all the budget', { sessionMaxConnectionsPercent: 100 }, rejectionMessage('fleet-session-max-connections-percent', { sessionMaxConnectionsPercent: 100 })],
    ['a share above 100%', { maxConnectionsPercent: 150 }, 'maxConnectionsPercent 150 is out of range: set the share of the target\'s max_connections the proxy may use (an integer from 1 to 100)'],
    ['a server user name that needs quoting', { readOnlyServerUser: 'Reader-1' }, 'readOnlyServerUser Reader-1 is not a valid database user name: use lower-case letters, digits and underscores, not starting with a digit, at most 63 characters'],
    // The shared vectors' messages (fleet-name), which the rule table is held to as well.
    ['a fleet name that needs quoting', { fleetName: 'my fleet' }, rejectionMessage('fleet-name', { fleetName: 'my fleet' })],
    ['a fleet name longer than a dimension value', { fleetName: 'f'.repeat(256) }, rejectionMessage('fleet-name', { fleetName: 'f'.repeat(256) })],
    ['a fleet name starting with a hyphen', { fleetName: '-fleet' }, rejectionMessage('fleet-name', { fleetName: '-fleet' })],
    [
      'more processes than server connections in the budget',
      { hosts: 20, maxConnectionsPercent: 1, maxIdleConnectionsPercent: 0 },
      // 1% of db.r6gd.xlarge's 3479 (Aurora's value, not the 3604 of its nominal memory)
      "hosts 20 x 2 processes per target need 40 server connections of a budget of 34 (maxConnectionsPercent 1 of max_connections 3479, never into the 10 connections reserved for rdsadmin, AWS's automation, the master user and the role bootstrap): use fewer hosts or a smaller instance type, or raise maxConnectionsPercent up to 100",
    ],
  ] as Array<[string, Partial<PgBouncerProxyProps>, string]>)('GIVEN %s WHEN the proxy is created THEN it is refused with the prop, value and fix', (_, props, message) => {
    // GIVEN
    const { create } = poolerStack(props);
    // WHEN / THEN
    expect(create).toThrow(kitError('Stack/Pooler', message));
  });

  test('GIVEN 15 consumer users, as many as the user data has room for WHEN one more is added THEN it is refused with the limit and the fix', () => {
    // GIVEN
    const pooler = poolerStack().create();
    for (let i = 1; i <= 15; i++) pooler.addConsumerUser(`app_${i}`);
    // WHEN / THEN: the message of the shared vector for the 16 users (pooler-consumer-users)
    const users = Array.from({ length: 16 }, (_, i) => `app_${i + 1}`);
    expect(() => pooler.addConsumerUser('app_16')).toThrow(kitError('Stack/Pooler', rejectionMessage('pooler-consumer-users', { consumerUsers: users })));
    expect(pooler.consumerUsers).toEqual(users.slice(0, 15));
  });

  test.each([
    ['a bucket name with dots (its virtual-hosted HTTPS name fails the certificate check)', 'kit.packages', 'pgbouncer/packages.tar', 'pooler-packages-bucket', { packagesBucket: 'kit.packages' }],
    ['a key that would run a command in the user data', 'kit-packages', 'pooler/$(reboot).tar', 'pooler-packages-key', { packagesKey: 'pooler/$(reboot).tar' }],
    ['a key with a quote', 'kit-packages', 'pooler/"packages".tar', 'pooler-packages-key', { packagesKey: 'pooler/"packages".tar' }],
  ])('GIVEN %s WHEN the proxy is created THEN it is refused, named as the packages prop', (_, bucketName, key, rule, input) => {
    // GIVEN
    const { stack, cluster, tls } = poolerStack();
    const bucket = s3.Bucket.fromBucketName(stack, 'OtherPackages', bucketName);
    // WHEN / THEN: the shared vector's message, with the prop's name
    const message = rejectionMessage(rule, input).replace(/^packagesBucket /, 'packages.bucket ').replace(/^packagesKey /, 'packages.key ');
    expect(() => new PgBouncerProxy(stack, 'Other', { cluster, packages: { bucket, key }, tlsCertificate: { secret: tls, caCertificatePem: USER_CA_PEM } })).toThrow(kitError('Stack/Other', message));
  });

  test('GIVEN an AMI id WHEN the proxy is created THEN the launch template boots exactly it, with no image parameter', () => {
    const { stack, create } = poolerStack({ imageId: 'ami-0123456789abcdef0' });
    create();
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::EC2::LaunchTemplate', { LaunchTemplateData: Match.objectLike({ ImageId: 'ami-0123456789abcdef0' }) });
    expect(template.findParameters('*', { Type: Match.stringLikeRegexp('Image') })).toEqual({});
  });

  test.each(['/aws/service/debian/release/13/latest/arm64', 'ami-0123456789ABCDEF0'])('GIVEN the image %s, not an AMI id WHEN the proxy is created THEN it is refused with the lookup', (imageId) => {
    const { create } = poolerStack({ imageId });
    expect(create).toThrow(rejectionMessage('pooler-image-id', { imageId }));
  });

  test('GIVEN a packages bucket made in the same stack (its name a token) WHEN the proxy is created THEN its name is left to S3', () => {
    const { stack, cluster, tls } = poolerStack();
    const bucket = new s3.Bucket(stack, 'OwnPackages');
    expect(() => new PgBouncerProxy(stack, 'Own', { cluster, packages: { bucket, key: PACKAGES_KEY }, tlsCertificate: { secret: tls, caCertificatePem: USER_CA_PEM } })).not.toThrow();
  });

  test('GIVEN a cluster without readers WHEN the proxy is created THEN the read-only listener\'s need is named', () => {
    const { create } = poolerStack({}, 0);
    expect(create).toThrow(kitError('Stack/Pooler', 'readers 0 is out of range: the read-only listener needs at least one reader; Aurora allows 15 (an integer from 1 to 15)'));
  });

  test('GIVEN consumer users WHEN one is invalid or added twice THEN it is refused', () => {
    // GIVEN
    const pooler = poolerStack().create();
    pooler.addConsumerUser('app_reader');
    pooler.addConsumerUser('app_writer');
    // WHEN / THEN
    expect(() => pooler.addConsumerUser('1app')).toThrow(kitError('Stack/Pooler', rejectionMessage('pooler-user-name', { consumerUser: '1app' })));
    expect(() => pooler.addConsumerUser('app_reader')).toThrow(kitError('Stack/Pooler', rejectionMessage('pooler-consumer-users', { consumerUsers: ['app_reader', 'app_writer', 'app_reader'] })));
    expect(pooler.consumerUsers).toEqual(['app_reader', 'app_writer']);
  });

  test('GIVEN an S3 prefix list WHEN the proxy is created THEN the hosts\' HTTPS egress goes to it and to the cluster VPC\'s own CIDR block (Terraform asks for vpc_cidr_block: pooler-s3-egress-vpc-cidr)', () => {
    // GIVEN
    const { stack, dataVpc, create } = poolerStack({ s3PrefixListId: 'pl-63a5400a' });
    // WHEN
    const pooler = create();
    // THEN
    const template = Template.fromStack(stack);
    const group = Object.values(template.findResources('AWS::EC2::SecurityGroup', { Properties: { GroupDescription: `PgBouncer hosts of ${pooler.node.path}` } }))[0]!;
    // CDK writes a CIDR rule inline and a prefix-list rule as a resource of its own.
    expect((group.Properties.SecurityGroupEgress as Array<Record<string, unknown>>).filter((e) => e.FromPort === 443)).toEqual([
      expect.objectContaining({ CidrIp: getAtt(dataVpc, 'CidrBlock'), ToPort: 443 }),
    ]);
    template.hasResourceProperties('AWS::EC2::SecurityGroupEgress', { GroupId: getAtt(pooler.connections.securityGroups[0]!, 'GroupId'), DestinationPrefixListId: 'pl-63a5400a', FromPort: 443, ToPort: 443 });
  });

  test('GIVEN a consumer VPC with a zone the NLB is not in WHEN an endpoint is placed there THEN it is refused', () => {
    // GIVEN: an environment with three zones (the test context's dummy1a..c); the data VPC uses two
    const app = new App();
    const stack = new Stack(app, 'Stack', { env: { account: '111122223333', region: 'us-east-1' } });
    const dataVpc = isolatedVpc(stack, 'DataVpc', '10.10.0.0/16');
    const consumerVpc = new ec2.Vpc(stack, 'ConsumerVpc', { maxAzs: 3, natGateways: 0, subnetConfiguration: [{ name: 'isolated', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }] });
    const cluster = new AuroraOptimizedReads(stack, 'Cluster', { vpc: dataVpc });
    const pooler = new PgBouncerProxy(stack, 'Pooler', {
      cluster,
      packages: { bucket: s3.Bucket.fromBucketName(stack, 'Packages', 'kit-packages'), key: PACKAGES_KEY },
      tlsCertificate: { secret: secretsmanager.Secret.fromSecretNameV2(stack, 'Tls', 'pooler-tls'), caCertificatePem: USER_CA_PEM },
    });
    const [a, b] = pooler.loadBalancerAvailabilityZones;
    const outside = consumerVpc.availabilityZones.find((az) => az !== a && az !== b)!;
    // WHEN / THEN
    expect(() => pooler.addEndpoint('Ro', { vpc: consumerVpc, role: EndpointRole.READ_ONLY })).toThrow(
      kitError('Stack/Pooler/Ro', `subnets in ${outside} are outside the Network Load Balancer's Availability Zones (${a}, ${b}): PrivateLink offers the endpoint service only in those; select subnets in them`),
    );
    expect(() => pooler.addEndpoint('Rw', { vpc: consumerVpc, role: EndpointRole.READ_WRITE, subnets: { availabilityZones: [a!, b!] } })).not.toThrow();
  });
});
