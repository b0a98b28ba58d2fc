import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readmePgBouncerExample } from '../helpers/readme';

/**
 * The README's PgBouncerProxy example is real code, written from the public API alone: extracted,
 * type-checked against the library, run, and synthesized under cdk-nag's AwsSolutions checks (as a user
 * adds them), with what the fleet needs to work on AWS asserted on its template: the hosts' routes to
 * the APIs they call, the packages object they install from, the read-only server role made by the role
 * bootstrap and the hosts waiting for it.
 */
const ROOT = path.join(__dirname, '..', '..');
const GENERATED_DIR = path.join(__dirname, '.generated-pgbouncer');
const GENERATED_FILE = path.join(GENERATED_DIR, 'readme-pgbouncer-example.ts');

function writeRunnableExample(code: string): void {
  fs.mkdirSync(GENERATED_DIR, { recursive: true });
  const libPath = path.relative(GENERATED_DIR, path.join(ROOT, 'lib')).split(path.sep).join('/');
  fs.writeFileSync(GENERATED_FILE, `${code.replace(/from 'aurora-proxy-kit'/g, `from '${libPath}'`)}\nexport { app, stack, proxy };\n`);
}

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown>; DependsOn?: string[]; DeletionPolicy?: string }>;

describe('README PgBouncerProxy example', () => {
  beforeAll(() => writeRunnableExample(readmePgBouncerExample()));
  afterAll(() => fs.rmSync(GENERATED_DIR, { recursive: true, force: true }));

  test('GIVEN the example WHEN compiled on its own with the project\'s options THEN it has no errors', () => {
    const config = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile);
    const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
    const program = ts.createProgram([GENERATED_FILE], { ...parsed.options, noEmit: true });
    expect(ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);
  });

  test('GIVEN the example run as written WHEN synthesized under cdk-nag THEN it passes, and the fleet has what it needs on AWS', () => {
    // GIVEN the example's app, with cdk-nag as a user adds it
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const example = require(GENERATED_FILE) as { app: App; stack: Stack; proxy: { readOnlyServerUser: string } };
    Validations.of(example.app).addPlugins(new AwsSolutionsChecks(example.app));

    // WHEN it is synthesized (an unacknowledged cdk-nag error throws)
    const template = Template.fromStack(example.stack);
    const resources = template.toJSON().Resources as Resources;

    // THEN the fleet, its load balancer, endpoint service and the consumer's interface endpoint are there
    template.resourceCountIs('AWS::AutoScaling::AutoScalingGroup', 1);
    template.resourceCountIs('AWS::ElasticLoadBalancingV2::LoadBalancer', 1);
    template.resourceCountIs('AWS::EC2::VPCEndpointService', 1);
    // and the data VPC's routes to what the hosts call (no NAT): S3's gateway and the interface endpoints
    const services = Object.values(resources).filter((r) => r.Type === 'AWS::EC2::VPCEndpoint').map((r) => JSON.stringify(r.Properties!.ServiceName));
    for (const service of ['.s3', '.secretsmanager', '.ssm', '.ssmmessages', '.ec2messages', '.monitoring']) {
      expect([service, services.some((s) => s.includes(service))]).toEqual([service, true]);
    }
    // and the hosts read the packages object the example names, and the output says where it goes
    template.hasOutput('PoolerPackages', { Value: 's3://my-pooler-packages/pgbouncer/debian-13-arm64.tar' });
    // and the role bootstrap makes the consumer's role and the fleet's read-only server role
    // (the request may be a JSON string holding tokens: compared without its escapes)
    const request = JSON.stringify(Object.values(resources).find((r) => r.Type === 'Custom::DatabaseRoles')!.Properties!.Request).replace(/\\/g, '');
    for (const role of ['report_reader', example.proxy.readOnlyServerUser]) expect([role, request.includes(`"name":"${role}"`)]).toEqual([role, true]);
    // and the hosts start once the roles exist
    const [groupId] = Object.entries(resources).find(([, r]) => r.Type === 'AWS::AutoScaling::AutoScalingGroup')!;
    const [rolesId] = Object.entries(resources).find(([, r]) => r.Type === 'Custom::DatabaseRoles')!;
    expect(resources[groupId]!.DependsOn).toContain(rolesId);
    // and what README's "Tearing down" says is kept: deletion protection, a final snapshot, every KMS key
    template.hasResource('AWS::RDS::DBCluster', { DeletionPolicy: 'Snapshot', Properties: { DeletionProtection: true } });
    expect(Object.values(resources).filter((r) => r.Type === 'AWS::KMS::Key').map((r) => r.DeletionPolicy)).toEqual(expect.arrayContaining(['Retain']));
    expect(Object.values(resources).filter((r) => r.Type === 'AWS::KMS::Key' && r.DeletionPolicy !== 'Retain')).toEqual([]);
    // and the AMI parameter the README's deploy command passes is the template's
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const passed = /npx cdk deploy ReportingPgBouncer --parameters (\w+)=/.exec(readme)?.[1];
    expect(Object.entries(template.toJSON().Parameters as Record<string, { Type: string }>).filter(([, p]) => p.Type === 'AWS::EC2::Image::Id').map(([name]) => name)).toEqual([passed]);
  });
});
