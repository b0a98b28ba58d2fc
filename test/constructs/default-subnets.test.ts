import { Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { EndpointRole } from '../../lambda/src/environment';
import { DatabaseRoleBootstrap } from '../../lib/database-role-bootstrap';
import { AuroraOptimizedReads } from '../../lib/aurora-optimized-reads';
import { PgBouncerProxy } from '../../lib/pgbouncer-proxy';
import { RdsProxy } from '../../lib/rds-proxy';
import { kitError, newStack } from '../helpers/cdk';

/**
 * The kit places the cluster, the proxy, the role bootstrap and the PgBouncer fleet in isolated subnets
 * unless told otherwise: a VPC without them fails naming the construct and the prop to set.
 */

const WITH_EGRESS = { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS };

/** A VPC as many accounts have one: public and private (NAT) subnets, no isolated ones. */
function vpcWithoutIsolatedSubnets(stack: Stack): ec2.Vpc {
  return new ec2.Vpc(stack, 'Vpc', {
    ipAddresses: ec2.IpAddresses.cidr('10.30.0.0/16'),
    maxAzs: 2,
    natGateways: 1,
    subnetConfiguration: [
      { name: 'public', subnetType: ec2.SubnetType.PUBLIC },
      { name: 'private', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
    ],
  });
}

const fix = (vpcPath: string) =>
  `vpcSubnets is not set and VPC ${vpcPath} has no isolated subnets, where the kit places it by default (SubnetType.PRIVATE_ISOLATED): pass vpcSubnets, e.g. { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS }, or add isolated subnets to the VPC`;

describe('default subnets in a VPC without isolated subnets', () => {
  test('GIVEN no vpcSubnets WHEN the cluster is built THEN it fails naming its path, vpcSubnets and the fix', () => {
    const { stack } = newStack();
    const vpc = vpcWithoutIsolatedSubnets(stack);
    expect(() => new AuroraOptimizedReads(stack, 'Cluster', { vpc })).toThrow(kitError('Stack/Cluster', fix('Stack/Vpc')));
  });

  test.each([
    ['RdsProxy', 'Stack/Proxy'],
    ['DatabaseRoleBootstrap', 'Stack/Roles'],
    ['PgBouncerProxy', 'Stack/Pooler'],
  ])('GIVEN a cluster placed with vpcSubnets WHEN a %s is built without them THEN it fails naming %s', (kind, path) => {
    // GIVEN
    const { stack } = newStack();
    const vpc = vpcWithoutIsolatedSubnets(stack);
    const cluster = new AuroraOptimizedReads(stack, 'Cluster', { vpc, vpcSubnets: WITH_EGRESS });
    // WHEN
    const build = () => {
      if (kind === 'RdsProxy') return new RdsProxy(stack, 'Proxy', { cluster });
      if (kind === 'DatabaseRoleBootstrap') return new DatabaseRoleBootstrap(stack, 'Roles', { cluster, roles: [{ name: 'app_reader', access: EndpointRole.READ_ONLY }] });
      return new PgBouncerProxy(stack, 'Pooler', { cluster, packages: { bucket: s3.Bucket.fromBucketName(stack, 'Packages', 'kit-packages'), key: 'pgbouncer/packages.tar' } });
    };
    // THEN
    expect(build).toThrow(kitError(path, fix('Stack/Vpc')));
  });

  test('GIVEN vpcSubnets on each WHEN built THEN they are placed there', () => {
    const { stack } = newStack();
    const vpc = vpcWithoutIsolatedSubnets(stack);
    const cluster = new AuroraOptimizedReads(stack, 'Cluster', { vpc, vpcSubnets: WITH_EGRESS });
    expect(() => new RdsProxy(stack, 'Proxy', { cluster, vpcSubnets: WITH_EGRESS })).not.toThrow();
    expect(() => new DatabaseRoleBootstrap(stack, 'Roles', { cluster, vpcSubnets: WITH_EGRESS, roles: [{ name: 'app_reader', access: EndpointRole.READ_ONLY }] })).not.toThrow();
  });
});
