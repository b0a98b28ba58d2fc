import { Duration, Stack } from 'aws-cdk-lib';
import { Capture, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as rds from 'aws-cdk-lib/aws-rds';
import { Construct } from 'constructs';
import { DEFAULT_POOL_SETTINGS, MAX_PROXY_ENDPOINTS, RESERVED_CONNECTIONS, poolSizing } from '../../lib/model';
import { AuroraOptimizedReads } from '../../lib/aurora-optimized-reads';
import { RdsProxy, RdsProxyProps } from '../../lib/rds-proxy';
import { RdsProxyEndpoint } from '../../lib/rds-proxy-endpoint';
import { getAtt, isolatedSubnetRefs, isolatedVpc, kitError, logicalIdOf, newStack, ref } from '../helpers/cdk';
import { rejectionMessage } from '../helpers/vectors';
import { EndpointRole } from '../../lambda/src/environment';

/** A client in some VPC: an IAM role plus a security group, as a Lambda or a task would have. */
class Client extends Construct implements iam.IGrantable, ec2.IConnectable {
  public readonly role: iam.Role;
  public readonly grantPrincipal: iam.IPrincipal;
  public readonly connections: ec2.Connections;
  public readonly securityGroup: ec2.SecurityGroup;

  constructor(scope: Construct, id: string, vpc: ec2.IVpc) {
    super(scope, id);
    this.role = new iam.Role(this, 'Role', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    this.grantPrincipal = this.role;
    this.securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', { vpc, allowAllOutbound: false });
    this.connections = new ec2.Connections({ securityGroups: [this.securityGroup] });
  }
}

function proxyStack(props: Partial<RdsProxyProps> = {}) {
  const { app, stack } = newStack();
  const dataVpc = isolatedVpc(stack, 'DataVpc', '10.10.0.0/16');
  const otherVpc = isolatedVpc(stack, 'ReportingVpc', '10.30.0.0/16');
  const cluster = new AuroraOptimizedReads(stack, 'Cluster', { vpc: dataVpc });
  const proxy = new RdsProxy(stack, 'Proxy', { cluster, ...props });
  return { app, stack, dataVpc, otherVpc, cluster, proxy };
}

describe('RdsProxy', () => {
  let stack: Stack;
  let dataVpc: ec2.Vpc;
  let otherVpc: ec2.Vpc;
  let cluster: AuroraOptimizedReads;
  let proxy: RdsProxy;
  let readOnly: RdsProxyEndpoint;
  let readWrite: RdsProxyEndpoint;
  let client: Client;
  let template: Template;

  beforeAll(() => {
    // GIVEN
    ({ stack, dataVpc, otherVpc, cluster, proxy } = proxyStack());
    // WHEN
    readOnly = proxy.addReadOnlyEndpoint('ReportingReadOnly', { vpc: otherVpc }) as RdsProxyEndpoint;
    readWrite = proxy.addReadWriteEndpoint('ReportingReadWrite', { vpc: otherVpc, endpointName: 'reporting-rw' }) as RdsProxyEndpoint;
    client = new Client(stack, 'Client', otherVpc);
    readOnly.grantConnect(client, 'app_reader');
    template = Template.fromStack(stack);
  });

  test('requires TLS; end-to-end IAM authentication (proxy-end-to-end-iam-auth): no secret, no Auth entries', () => {
    template.hasResourceProperties('AWS::RDS::DBProxy', {
      EngineFamily: 'POSTGRESQL',
      RequireTLS: true,
      DefaultAuthScheme: 'IAM_AUTH',
      Auth: Match.absent(),
      RoleArn: getAtt(proxy.role, 'Arn'),
      DebugLogging: false,
      IdleClientTimeout: 1800,
      VpcSubnetIds: isolatedSubnetRefs(dataVpc),
    });
  });

  test('proxy-end-to-end-iam-auth: the proxy role may log in to the cluster as each granted user only, and reads no secret', () => {
    // WHEN
    const policies = Object.values(template.findResources('AWS::IAM::Policy', { Properties: { Roles: [ref(proxy.role)] } }));
    const statements = policies.flatMap((p) => p.Properties.PolicyDocument.Statement as Array<{ Action: unknown; Resource: unknown }>);
    // THEN
    expect(statements).toEqual([
      {
        Action: 'rds-db:connect',
        Effect: 'Allow',
        Resource: {
          'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':rds-db:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':dbuser:', getAtt(cluster.cluster, 'DBClusterResourceId'), '/app_reader']],
        },
      },
    ]);
  });

  test('the target group pools with the kit defaults and targets the cluster', () => {
    template.hasResourceProperties('AWS::RDS::DBProxyTargetGroup', {
      TargetGroupName: 'default',
      DBClusterIdentifiers: [ref(cluster.cluster)],
      ConnectionPoolConfigurationInfo: {
        // RDS Proxy's 100 would take all of max_connections: the proxy is given the 99 that leaves the reserve.
        MaxConnectionsPercent: 99,
        MaxIdleConnectionsPercent: DEFAULT_POOL_SETTINGS.maxIdleConnectionsPercent,
        ConnectionBorrowTimeout: DEFAULT_POOL_SETTINGS.connectionBorrowTimeoutSeconds,
        SessionPinningFilters: Match.absent(),
      },
    });
    expect(DEFAULT_POOL_SETTINGS.maxConnectionsPercent).toBe(100);
    // Aurora's 3479 for db.r6gd.xlarge: floor(3479 * 0.99) = 3444 opened at most, floor(3479 * 0.05) = 173 kept idle.
    expect(proxy.poolSizing).toEqual({ maxServerConnections: 3444, maxIdleServerConnections: 173, reservedConnections: 10 });
  });

  test('what the proxy may open leaves the documented reserve (proxy-max-connections-percent)', () => {
    const maxConnections = cluster.sizing.maxConnections;
    const given = proxy.poolSettings.maxConnectionsPercent;
    expect(Math.floor((maxConnections * given) / 100)).toBe(proxy.poolSizing.maxServerConnections);
    expect(maxConnections - proxy.poolSizing.maxServerConnections).toBeGreaterThanOrEqual(RESERVED_CONNECTIONS);
  });

  test('the proxy has its own security group in the data VPC', () => {
    // GIVEN
    const groups = new Capture();
    template.hasResourceProperties('AWS::RDS::DBProxy', { VpcSecurityGroupIds: groups });
    const proxySg = proxy.connections.securityGroups[0];
    // THEN
    expect(groups.asArray()).toEqual([getAtt(proxySg, 'GroupId')]);
    expect(proxySg).not.toBe(cluster.connections.securityGroups[0]);
    template.hasResourceProperties('AWS::EC2::SecurityGroup', {
      GroupDescription: Match.stringLikeRegexp('^RDS Proxy Stack/Proxy'),
      VpcId: ref(dataVpc),
    });
  });

  test('the database admits only the proxy security group', () => {
    // GIVEN
    const clusterSg = getAtt(cluster.connections.securityGroups[0], 'GroupId');
    const ingress = Object.values(template.findResources('AWS::EC2::SecurityGroupIngress', { Properties: { GroupId: clusterSg } }));
    // THEN
    expect(ingress.length).toBeGreaterThan(0);
    for (const rule of ingress) {
      expect(rule.Properties.SourceSecurityGroupId).toEqual(getAtt(proxy.connections.securityGroups[0], 'GroupId'));
      expect(rule.Properties.CidrIp).toBeUndefined();
      expect(rule.Properties.IpProtocol).toBe('tcp');
    }
    const clusterSgResource = template.findResources('AWS::EC2::SecurityGroup')[logicalIdOf(cluster.connections.securityGroups[0])];
    expect(clusterSgResource.Properties.SecurityGroupIngress).toBeUndefined();
  });

  test('the proxy may reach the database, and only the database', () => {
    // GIVEN
    const destinations = new Capture();
    // THEN
    template.hasResourceProperties('AWS::EC2::SecurityGroupEgress', {
      GroupId: getAtt(proxy.connections.securityGroups[0], 'GroupId'),
      DestinationSecurityGroupId: destinations,
    });
    do {
      expect(destinations.asObject()).toEqual(getAtt(cluster.connections.securityGroups[0], 'GroupId'));
    } while (destinations.next());
  });

  test('exactly one rule each way between the proxy and the database, on the cluster port', () => {
    // GIVEN
    const proxySg = getAtt(proxy.connections.securityGroups[0], 'GroupId');
    const clusterSg = getAtt(cluster.connections.securityGroups[0], 'GroupId');
    // WHEN
    const egress = Object.values(template.findResources('AWS::EC2::SecurityGroupEgress', { Properties: { GroupId: proxySg, DestinationSecurityGroupId: clusterSg } }));
    const ingress = Object.values(template.findResources('AWS::EC2::SecurityGroupIngress', { Properties: { GroupId: clusterSg, SourceSecurityGroupId: proxySg } }));
    // THEN
    // Two rules for one permission (aws/aws-cdk#24305) would make removing either revoke the one in force.
    expect(egress).toHaveLength(1);
    expect(ingress).toHaveLength(1);
    expect(egress[0].Properties.FromPort).toEqual(getAtt(cluster.cluster, 'Endpoint.Port'));
  });

  test('endpoints are created after the target group, which waits for every instance', () => {
    // GIVEN
    const resources = template.toJSON().Resources as Record<string, { Type: string; DependsOn?: string[] }>;
    const [targetGroupId] = Object.entries(resources).find(([, r]) => r.Type === 'AWS::RDS::DBProxyTargetGroup')!;
    const instanceIds = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::RDS::DBInstance').map(([id]) => id);
    // THEN
    expect(instanceIds.length).toBe(1 + cluster.readerInstanceIdentifiers.length);
    expect(resources[targetGroupId].DependsOn).toEqual(expect.arrayContaining(instanceIds));
    for (const endpoint of [readOnly, readWrite]) expect(resources[logicalIdOf(endpoint.endpoint)].DependsOn).toContain(targetGroupId);
  });

  test('an endpoint knows its proxy\'s default endpoint, the name the proxy\'s certificate is issued for', () => {
    expect(stack.resolve(readOnly.proxyDefaultEndpoint)).toEqual(getAtt(proxy.proxy, 'Endpoint'));
  });

  test('a READ_ONLY endpoint in another VPC: that VPC\'s subnets and its own security group', () => {
    // GIVEN
    const subnets = new Capture();
    const groups = new Capture();
    // WHEN
    template.hasResourceProperties('AWS::RDS::DBProxyEndpoint', {
      DBProxyName: ref(proxy.proxy),
      TargetRole: 'READ_ONLY',
      VpcSubnetIds: subnets,
      VpcSecurityGroupIds: groups,
    });
    // THEN
    expect(subnets.asArray()).toEqual(isolatedSubnetRefs(otherVpc));
    expect(subnets.asArray()).not.toEqual(expect.arrayContaining(isolatedSubnetRefs(dataVpc).slice(0, 1)));
    expect(groups.asArray()).toEqual([getAtt(readOnly.securityGroup, 'GroupId')]);
    expect(JSON.stringify(groups.asArray())).not.toContain('DefaultSecurityGroup');
    template.hasResourceProperties('AWS::EC2::SecurityGroup', {
      GroupDescription: Match.stringLikeRegexp('^READ_ONLY proxy endpoint'),
      VpcId: ref(otherVpc),
    });
    expect(readOnly.role).toBe('READ_ONLY');
    expect(readOnly.vpc).toBe(otherVpc);
  });

  test('a READ_WRITE endpoint with a given name', () => {
    template.hasResourceProperties('AWS::RDS::DBProxyEndpoint', {
      TargetRole: 'READ_WRITE',
      DBProxyEndpointName: 'reporting-rw',
      VpcSubnetIds: isolatedSubnetRefs(otherVpc),
      VpcSecurityGroupIds: [getAtt(readWrite.securityGroup, 'GroupId')],
    });
    template.resourceCountIs('AWS::RDS::DBProxyEndpoint', 2);
    expect(proxy.endpoints).toEqual([readOnly, readWrite]);
    expect(stack.resolve(readWrite.hostname)).toEqual(getAtt(readWrite.endpoint, 'Endpoint'));
  });

  test('grantConnect: rds-db:connect on <proxy resource id>/<dbUser>, built from the proxy ARN', () => {
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [ref(client.role)],
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Action: 'rds-db:connect',
            Effect: 'Allow',
            Resource: {
              'Fn::Join': [
                '',
                Match.arrayWith([
                  ':dbuser:',
                  { 'Fn::Select': [6, { 'Fn::Split': [':', getAtt(proxy.proxy, 'DBProxyArn')] }] },
                  '/app_reader',
                ]),
              ],
            },
          },
        ]),
      },
    });
  });

  test('grantConnect: ingress to the endpoint security group from the grantee, on 5432 only', () => {
    template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      GroupId: getAtt(readOnly.securityGroup, 'GroupId'),
      SourceSecurityGroupId: getAtt(client.securityGroup, 'GroupId'),
      IpProtocol: 'tcp',
      FromPort: 5432,
      ToPort: 5432,
    });
    // The READ_WRITE endpoint was granted to nobody.
    expect(template.findResources('AWS::EC2::SecurityGroupIngress', { Properties: { GroupId: getAtt(readWrite.securityGroup, 'GroupId') } })).toEqual({});
  });

  test('endpoint metrics carry ProxyName and EndpointName; target-role metrics carry TargetGroup and TargetRole', () => {
    // WHEN
    const client = readWrite.metricClientConnections();
    const pinned = proxy.metricDatabaseConnectionsCurrentlySessionPinned(EndpointRole.READ_ONLY);
    // THEN
    expect(client.metricName).toBe('ClientConnections');
    expect(stack.resolve(client.dimensions)).toEqual({ ProxyName: ref(proxy.proxy), EndpointName: 'reporting-rw' });
    expect(stack.resolve(pinned.dimensions)).toEqual({ ProxyName: ref(proxy.proxy), TargetGroup: 'default', TargetRole: 'READ_ONLY' });
    expect(pinned.statistic).toBe('Sum');
  });

  test('the pool ceiling is summed over the proxy hosts, like the connections it divides', () => {
    // RDS Proxy publishes both per host; AWS recommends Sum for each (lib/model/metrics.ts).
    expect(proxy.metricMaxDatabaseConnectionsAllowed(EndpointRole.READ_WRITE).statistic).toBe('Sum');
    expect(proxy.metricDatabaseConnections(EndpointRole.READ_WRITE).statistic).toBe('Sum');
  });
});

describe('RdsProxy options', () => {
  test('pool settings, idle client timeout and debug logging reach the template', () => {
    // GIVEN
    const { stack, proxy } = proxyStack({
      maxConnectionsPercent: 80,
      maxIdleConnectionsPercent: 20,
      connectionBorrowTimeout: Duration.seconds(30),
      idleClientTimeout: Duration.minutes(5),
      debugLogging: true,
      proxyName: 'orders-proxy',
    });
    // WHEN
    const template = Template.fromStack(stack);
    // THEN
    template.hasResourceProperties('AWS::RDS::DBProxyTargetGroup', {
      ConnectionPoolConfigurationInfo: { MaxConnectionsPercent: 80, MaxIdleConnectionsPercent: 20, ConnectionBorrowTimeout: 30 },
    });
    template.hasResourceProperties('AWS::RDS::DBProxy', { DBProxyName: 'orders-proxy', IdleClientTimeout: 300, DebugLogging: true });
    // floor(3479 * 0.8), floor(3479 * 0.2): below the reserve, the percentages are the user's
    expect(proxy.poolSizing).toEqual({ maxServerConnections: 2783, maxIdleServerConnections: 695, reservedConnections: 10 });
    expect(proxy.poolSizing).toEqual(poolSizing(3479, proxy.poolSettings));
  });

  test(`${MAX_PROXY_ENDPOINTS} endpoints are allowed; the next one throws with the count`, () => {
    // GIVEN
    const { proxy, otherVpc } = proxyStack();
    for (let i = 1; i <= MAX_PROXY_ENDPOINTS; i++) proxy.addReadOnlyEndpoint(`Endpoint${i}`, { vpc: otherVpc });
    expect(proxy.endpoints).toHaveLength(MAX_PROXY_ENDPOINTS);
    // WHEN / THEN
    expect(() => proxy.addReadWriteEndpoint('OneTooMany', { vpc: otherVpc })).toThrow(
      kitError('Stack/Proxy', rejectionMessage('endpoint-count', { endpoints: MAX_PROXY_ENDPOINTS + 1 })),
    );
    expect(proxy.endpoints).toHaveLength(MAX_PROXY_ENDPOINTS);
    expect(proxy.node.tryFindChild('OneTooMany')).toBeUndefined();
  });

  test.each(['1reporting', 'reporting--ro', 'reporting-', 'read_only', 'r' + 'x'.repeat(63), 'Reader'])(
    'endpoint name %s is rejected, naming the endpoint construct',
    (endpointName) => {
      const { proxy, otherVpc } = proxyStack();
      expect(() => proxy.addReadOnlyEndpoint('Reporting', { vpc: otherVpc, endpointName })).toThrow(
        kitError('Stack/Proxy/Reporting', rejectionMessage('endpoint-name', { endpointName })),
      );
      expect(proxy.endpoints).toHaveLength(0);
    },
  );

  test('RdsProxy.grantConnect grants IAM only; network access is per endpoint', () => {
    // GIVEN
    const { stack, proxy, otherVpc } = proxyStack();
    const client = new Client(stack, 'Client', otherVpc);
    // WHEN
    proxy.grantConnect(client, 'app_writer');
    // THEN
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: 'rds-db:connect', Resource: { 'Fn::Join': ['', Match.arrayWith(['/app_writer'])] } })]) },
    });
    expect(template.findResources('AWS::EC2::SecurityGroupIngress', { Properties: { SourceSecurityGroupId: getAtt(client.securityGroup, 'GroupId') } })).toEqual({});
  });
});

describe('RdsProxy validation', () => {
  const build = (props: Partial<RdsProxyProps>) => () => proxyStack(props);

  test.each([150, 0])('maxConnectionsPercent %s', (maxConnectionsPercent) => {
    // maxIdle defaults to 50; keep it within max so only the range rule fires.
    expect(build({ maxConnectionsPercent, maxIdleConnectionsPercent: 0 })).toThrow(
      kitError('Stack/Proxy', rejectionMessage('max-connections-percent', { maxConnectionsPercent })),
    );
  });

  test('maxIdleConnectionsPercent above maxConnectionsPercent', () => {
    expect(build({ maxConnectionsPercent: 50, maxIdleConnectionsPercent: 60 })).toThrow(
      kitError('Stack/Proxy', 'maxIdleConnectionsPercent 60 exceeds maxConnectionsPercent 50: set it to 50 or less'),
    );
  });

  test('the default idle share (5) is checked against a lower maxConnectionsPercent', () => {
    expect(build({ maxConnectionsPercent: 4 })).toThrow(
      kitError('Stack/Proxy', 'maxIdleConnectionsPercent 5 exceeds maxConnectionsPercent 4: set it to 4 or less'),
    );
  });

  test('connection borrow timeout of 301 s (300 s is fine)', () => {
    expect(build({ connectionBorrowTimeout: Duration.seconds(300) })).not.toThrow();
    expect(build({ connectionBorrowTimeout: Duration.seconds(301) })).toThrow(
      kitError('Stack/Proxy', rejectionMessage('borrow-timeout', { connectionBorrowTimeoutSeconds: 301 })),
    );
  });

  test.each(['1proxy', 'vec--tors', 'Reader'])('proxyName %s is not a valid proxy name', (proxyName) => {
    expect(build({ proxyName })).toThrow(kitError('Stack/Proxy', rejectionMessage('proxy-name', { proxyName })));
  });

  test.each([0, 28801])('idle client timeout of %s s', (seconds) => {
    expect(build({ idleClientTimeout: Duration.seconds(seconds) })).toThrow(
      kitError('Stack/Proxy', rejectionMessage('idle-client-timeout', { idleClientTimeoutSeconds: seconds })),
    );
  });

  test('a READ_ONLY endpoint needs a reader; a READ_WRITE one does not', () => {
    // GIVEN
    const { stack } = newStack();
    const vpc = isolatedVpc(stack, 'DataVpc', '10.10.0.0/16');
    const writerOnly = new RdsProxy(stack, 'Proxy', { cluster: new AuroraOptimizedReads(stack, 'Cluster', { vpc, readers: 0 }) });
    // THEN
    expect(() => writerOnly.addReadWriteEndpoint('ReadWrite', { vpc })).not.toThrow();
    expect(() => writerOnly.addReadOnlyEndpoint('ReadOnly', { vpc })).toThrow(
      kitError('Stack/Proxy', rejectionMessage('read-only-endpoint-readers', { readers: 0, targetRole: 'READ_ONLY' })),
    );
    expect(writerOnly.endpoints).toHaveLength(1);
  });

  test('session pinning filters are MySQL-only', () => {
    expect(build({ sessionPinningFilters: [rds.SessionPinningFilter.EXCLUDE_VARIABLE_SETS] })).toThrow(
      kitError(
        'Stack/Proxy',
        'sessionPinningFilters EXCLUDE_VARIABLE_SETS is not supported by RDS Proxy for PostgreSQL (MySQL only): remove it',
      ),
    );
    expect(build({ sessionPinningFilters: [] })).not.toThrow();
  });
});
