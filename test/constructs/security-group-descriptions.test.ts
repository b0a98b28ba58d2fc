import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { EndpointRole } from '../../lambda/src/environment';
import { LambdaConsumer } from '../../lib/lambda-consumer';
import { DatabaseRoleBootstrap } from '../../lib/database-role-bootstrap';
import { SECURITY_GROUP_DESCRIPTION_MAX_LENGTH, SECURITY_GROUP_DESCRIPTION_PATTERN, securityGroupDescription } from '../../lib/model';
import { PoolMode } from '../../lib/model/pgbouncer-ini';
import { AuroraOptimizedReads } from '../../lib/aurora-optimized-reads';
import { PgBouncerProxy } from '../../lib/pgbouncer-proxy';
import { RdsProxy } from '../../lib/rds-proxy';
import { isolatedVpc, newStack } from '../helpers/cdk';

/**
 * AWS behaviour ec2-security-group-description (lib/model/aws-facts.ts): a security group's description,
 * and each of its rules', is at most 255 characters of a set EC2 names. The constructs name their groups
 * after their construct path, which grows with the user's ids.
 */

/** Every security group description and rule description of a template, by where it is. */
function descriptions(template: Template): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const [id, resource] of Object.entries(template.toJSON().Resources as Record<string, { Type: string; Properties: Record<string, unknown> }>)) {
    const p = resource.Properties ?? {};
    if (resource.Type === 'AWS::EC2::SecurityGroup') {
      out.push([`${id} GroupDescription`, p.GroupDescription as string]);
      for (const key of ['SecurityGroupIngress', 'SecurityGroupEgress']) {
        for (const [i, rule] of ((p[key] as Array<{ Description?: string }>) ?? []).entries()) if (rule.Description !== undefined) out.push([`${id} ${key}[${i}]`, rule.Description]);
      }
    }
    if ((resource.Type === 'AWS::EC2::SecurityGroupIngress' || resource.Type === 'AWS::EC2::SecurityGroupEgress') && p.Description !== undefined) out.push([`${id} Description`, p.Description as string]);
  }
  return out;
}

describe('security group descriptions (ec2-security-group-description)', () => {
  test('GIVEN every kit construct under a 300-character id with characters EC2 refuses WHEN synthesized THEN each group and rule description is one EC2 takes', () => {
    // GIVEN
    const { stack } = newStack();
    const scope = new Construct(stack, `Report's "${'Deep'.repeat(75)}" <tier>`);
    const dataVpc = isolatedVpc(scope, 'DataVpc', '10.10.0.0/16');
    const consumerVpc = isolatedVpc(scope, 'ConsumerVpc', '10.20.0.0/16');
    const cluster = new AuroraOptimizedReads(scope, 'Cluster', { vpc: dataVpc, readers: 1 });
    const proxy = new RdsProxy(scope, 'Proxy', { cluster });
    const readOnly = proxy.addReadOnlyEndpoint('ReadOnly', { vpc: consumerVpc });
    new LambdaConsumer(scope, 'Reader', { endpoint: readOnly, dbUser: 'app_reader', databaseName: 'app' });
    new DatabaseRoleBootstrap(scope, 'Roles', { cluster, roles: [{ name: 'app_reader', access: EndpointRole.READ_ONLY }] });
    const pooler = new PgBouncerProxy(scope, 'Pooler', {
      cluster,
      // its own rule bounds the fleet's name (fleet-name)
      fleetName: 'pooler',
      packages: { bucket: s3.Bucket.fromBucketName(stack, 'Packages', 'kit-packages'), key: 'pgbouncer/packages.tar' },
    });
    pooler.addEndpoint('ReadWrite', { vpc: consumerVpc, role: EndpointRole.READ_WRITE, poolMode: PoolMode.SESSION });

    // WHEN
    const found = descriptions(Template.fromStack(stack));

    // THEN every kind of group is there, and each description fits
    expect(found.filter(([where]) => where.endsWith('GroupDescription')).length).toBeGreaterThanOrEqual(8);
    for (const [where, text] of found) {
      expect([where, text.length <= SECURITY_GROUP_DESCRIPTION_MAX_LENGTH, SECURITY_GROUP_DESCRIPTION_PATTERN.test(text)]).toEqual([where, true, true]);
    }
    // the path keeps its start (the stack) and its end (the construct)
    expect(found.map(([, text]) => text)).toContainEqual(expect.stringMatching(/^Lambda consumer Stack\/Report_s _Deep.*\.\.\..*Deep_ _tier_\/Reader: egress only to its proxy endpoint$/));
  });

  test('GIVEN a short path WHEN described THEN it is kept whole', () => {
    expect(securityGroupDescription((p) => `RDS Proxy ${p}: clients of the default endpoint`, 'Stack/Proxy')).toBe('RDS Proxy Stack/Proxy: clients of the default endpoint');
  });

  test('GIVEN a path that just fits WHEN described THEN it is kept whole; one character more is shortened to exactly 255', () => {
    const template = (p: string) => `PgBouncer hosts of ${p}`;
    const fits = 'a'.repeat(SECURITY_GROUP_DESCRIPTION_MAX_LENGTH - template('').length);
    expect(securityGroupDescription(template, fits)).toBe(template(fits));
    const over = securityGroupDescription(template, `${fits}b`);
    expect([over.length, over.includes('...'), over.endsWith('b')]).toEqual([SECURITY_GROUP_DESCRIPTION_MAX_LENGTH, true, true]);
  });

  test('GIVEN a template EC2 would refuse WHEN used THEN it fails naming it', () => {
    expect(() => securityGroupDescription((p) => `the hosts' group of ${p}`, 'Stack/X')).toThrow(/security group description template "the hosts' group of " is not one EC2 takes/);
  });

  test('GIVEN a VPC security group WHEN its description is a kit template THEN ec2.SecurityGroup takes it', () => {
    const { stack } = newStack();
    const vpc = isolatedVpc(stack, 'Vpc', '10.10.0.0/16');
    const group = new ec2.SecurityGroup(stack, 'Group', { vpc, description: securityGroupDescription((p) => `Group of ${p}`, `${'x'.repeat(400)}`) });
    expect(Template.fromStack(stack).toJSON().Resources[stack.getLogicalId(group.node.defaultChild as ec2.CfnSecurityGroup)].Properties.GroupDescription).toHaveLength(SECURITY_GROUP_DESCRIPTION_MAX_LENGTH);
  });
});
