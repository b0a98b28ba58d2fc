/**
 * The database roles a rehearsal makes are the deployment's role bootstrap's, read from the cloud assembly
 * (Custom::DatabaseRoles): none without one, so consumers whose roles the deployment never makes fail to log
 * in, as on AWS. The plan flavour is in test/integration/rehearsal/topology-plan.test.ts (it runs Terraform).
 */
import { Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { LambdaConsumer, AuroraOptimizedReads, RdsProxy } from '../../lib';
import { deploymentFromTopology, formatNotReproduced, topologyFromCdkOut } from '../../lib/rehearsal';
import { newConsumerLogins, roleBootstrapRequest } from '../../lib/rehearsal/consumer-roles';
import { removeFixtures, synthesize, synthesizeReferenceApp } from './topology-fixtures';

afterAll(() => removeFixtures());

describe('the role bootstraps of a cloud assembly', () => {
  test('GIVEN the reference app WHEN read THEN its one role bootstrap makes the consumers\' roles, and up says so', () => {
    // GIVEN
    const { dir } = synthesizeReferenceApp();

    // WHEN
    const topology = topologyFromCdkOut(dir);
    const deployment = deploymentFromTopology(topology, dir);

    // THEN
    expect(topology.roleBootstraps).toEqual([
      { id: expect.stringMatching(/^AuroraProxyKit\/DatabaseRoles[0-9A-F]{8}$/), database: 'app', roles: [{ name: 'app_reader', access: 'READ_ONLY' }, { name: 'app_writer', access: 'READ_WRITE' }] },
    ]);
    expect(deployment.databaseRoles).toEqual([{ name: 'app_reader', access: 'READ_ONLY' }, { name: 'app_writer', access: 'READ_WRITE' }]);
    expect(roleBootstrapRequest(deployment)).toEqual({ database: 'app', roles: deployment.databaseRoles });
    expect(formatNotReproduced(deployment)).toMatch(/database roles \(AuroraProxyKit\/DatabaseRoles[0-9A-F]{8}\): app_reader \(READ_ONLY\), app_writer \(READ_WRITE\)/);
  });

  test('GIVEN the reference app with the PgBouncer engine WHEN read THEN the bootstrap also makes the hosts\' read-only server role', () => {
    const { dir } = synthesizeReferenceApp({ proxyEngine: 'pgbouncer' });
    const deployment = deploymentFromTopology(topologyFromCdkOut(dir), dir);
    expect(deployment.databaseRoles.map((r) => r.name)).toEqual(['app_reader', 'app_writer', deployment.fleet!.values.ServerUser]);
  });

  test('GIVEN an app whose consumer has no role bootstrap WHEN read THEN no role is made, every consumer still gets a login to try, and up says its logins fail', () => {
    // GIVEN: cluster, proxy and a consumer, and no DatabaseRoleBootstrap
    const dir = synthesize((app) => {
      const stack = new Stack(app, 'NoRoles');
      const vpc = new ec2.Vpc(stack, 'DataVpc', { ipAddresses: ec2.IpAddresses.cidr('10.30.0.0/16'), natGateways: 0, maxAzs: 2 });
      const consumerVpc = new ec2.Vpc(stack, 'ConsumerVpc', { ipAddresses: ec2.IpAddresses.cidr('10.40.0.0/16'), natGateways: 0, maxAzs: 2 });
      const cluster = new AuroraOptimizedReads(stack, 'Database', { vpc, readers: 1 });
      const proxy = new RdsProxy(stack, 'Proxy', { cluster });
      const endpoint = proxy.addReadOnlyEndpoint('Reports', { vpc: consumerVpc });
      new LambdaConsumer(stack, 'Reader', { endpoint, dbUser: 'report_reader', databaseName: cluster.databaseName });
    });

    // WHEN
    const topology = topologyFromCdkOut(dir);
    const deployment = deploymentFromTopology(topology, dir);

    // THEN
    expect(topology.roleBootstraps).toEqual([]);
    expect(deployment.databaseRoles).toEqual([]);
    expect(roleBootstrapRequest(deployment).roles).toEqual([]);
    expect(newConsumerLogins(deployment).map((l) => l.name)).toEqual(['report_reader']);
    expect(formatNotReproduced(deployment)).toContain("no role bootstrap in the deployment: no database role is made, so the consumers' logins fail as they would on AWS");
  });
});
