import { Template } from 'aws-cdk-lib/assertions';
import { DatabaseRoleBootstrap, type DatabaseRoleSpec } from '../../lib/database-role-bootstrap';
import { MASTER_SECRET_READ_ACTIONS, RDS_CA_BUNDLE_ENV } from '../../lib/model';
import { AuroraOptimizedReads } from '../../lib/aurora-optimized-reads';
import { BOOTSTRAP_ENV } from '../../lambda/src/role-bootstrap';
import { EndpointRole } from '../../lambda/src/environment';
import { getAtt, isolatedSubnetRefs, isolatedVpc, kitError, logicalIdOf, newStack } from '../helpers/cdk';

function bootstrapStack(roles: DatabaseRoleSpec[] = [{ name: 'app_reader', access: EndpointRole.READ_ONLY }, { name: 'app_writer', access: EndpointRole.READ_WRITE }]) {
  const { stack } = newStack();
  const vpc = isolatedVpc(stack, 'DataVpc', '10.10.0.0/16');
  const cluster = new AuroraOptimizedReads(stack, 'Cluster', { vpc });
  const bootstrap = new DatabaseRoleBootstrap(stack, 'Roles', { cluster, roles });
  return { stack, vpc, cluster, bootstrap };
}

describe('DatabaseRoleBootstrap', () => {
  const { stack, vpc, cluster, bootstrap } = bootstrapStack();
  const template = Template.fromStack(stack);

  test('a custom resource asks for the roles in the cluster\'s database, after the cluster and its instances', () => {
    const [id, resource] = Object.entries(template.findResources('Custom::DatabaseRoles'))[0];
    expect(resource.Properties.Request).toEqual({
      database: cluster.databaseName,
      roles: [{ name: 'app_reader', access: 'READ_ONLY' }, { name: 'app_writer', access: 'READ_WRITE' }],
    });
    expect(resource.DependsOn).toEqual(expect.arrayContaining([logicalIdOf(cluster.cluster), logicalIdOf(cluster.cluster.node.findChild('Writer'))]));
    expect(id).toBe(logicalIdOf(bootstrap.resource));
  });

  test('lambda-node-rds-ca-bundle: the function in the data VPC connects to the writer with the RDS CAs loaded', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Handler: 'index.handler',
      Runtime: 'nodejs24.x',
      VpcConfig: { SubnetIds: isolatedSubnetRefs(vpc) },
      Environment: {
        Variables: {
          [BOOTSTRAP_ENV.host]: getAtt(cluster.cluster, 'Endpoint.Address'),
          [BOOTSTRAP_ENV.port]: '5432',
          [BOOTSTRAP_ENV.masterSecretArn]: getAtt(cluster.cluster, 'MasterUserSecret.SecretArn'),
          NODE_EXTRA_CA_CERTS: RDS_CA_BUNDLE_ENV.NODE_EXTRA_CA_CERTS,
        },
      },
    });
  });

  test('the function reads the master secret and reaches the cluster on 5432; the cluster lets it in', () => {
    const role = (template.findResources('AWS::Lambda::Function')[logicalIdOf(bootstrap.function)].Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0];
    const statements = Object.values(template.findResources('AWS::IAM::Policy'))
      .filter((p) => (p.Properties.Roles as Array<{ Ref: string }>).some((r) => r.Ref === role))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as Array<{ Action: string[]; Resource: unknown }>);
    // Tracing, and the master secret only.
    expect(statements.map((st) => [[...st.Action].sort(), st.Resource])).toEqual([
      [['xray:PutTelemetryRecords', 'xray:PutTraceSegments'], '*'],
      [[...MASTER_SECRET_READ_ACTIONS].sort(), getAtt(cluster.cluster, 'MasterUserSecret.SecretArn')],
    ]);
    const functionSg = bootstrap.connections.securityGroups[0];
    template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      GroupId: getAtt(cluster.connections.securityGroups[0], 'GroupId'),
      SourceSecurityGroupId: getAtt(functionSg, 'GroupId'),
      // The cluster's port (5432), as aws-cdk-lib renders it.
      FromPort: getAtt(cluster.cluster, 'Endpoint.Port'),
      ToPort: getAtt(cluster.cluster, 'Endpoint.Port'),
    });
  });

  test('the master user as a consumer role is refused at synth', () => {
    expect(() => bootstrapStack([{ name: 'postgres', access: EndpointRole.READ_WRITE }])).toThrow(kitError('Stack/Roles', 'role name postgres is the master user: consumers get roles of their own'));
  });
});
