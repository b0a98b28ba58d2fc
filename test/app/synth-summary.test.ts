import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { App } from 'aws-cdk-lib';
import { readDeploymentContext } from '../../lib/reference-app/app-context';
import { ReferenceDeployment } from '../../lib/reference-app/reference-deployment';
import { inventoryOfPlan, parsePlan } from '../../lib/cli/plan-summary';
import { estimateCost } from '../../lib/model';
import { HOURS_PER_MONTH, PRICE_TABLE } from '../../lib/model/prices';
import { formatSummary, stackCost, summarizeAssembly } from '../../lib/reference-app/synth-summary';

const CDK_CONTEXT = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'cdk.json'), 'utf8')).context as Record<string, unknown>;

describe('synth summary (make demo)', () => {
  let outdir: string;
  beforeAll(() => {
    // GIVEN the reference app with 3 readers on r8gd, synthesized to a cloud assembly (no bundling needed)
    outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'apk-summary-'));
    const app = new App({
      outdir,
      context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [], instanceClass: 'db.r8gd.4xlarge', readers: '3' },
    });
    new ReferenceDeployment(app, 'Summary', readDeploymentContext(app));
    app.synth();
  });
  afterAll(() => fs.rmSync(outdir, { recursive: true, force: true }));

  test('counts resources per type, instances, sizing and endpoints with their VPCs', () => {
    // WHEN
    const [stack] = summarizeAssembly(outdir);
    // THEN
    expect(stack.stackName).toBe('Summary');
    expect(stack.resourceCounts['AWS::RDS::DBInstance']).toBe(4);
    expect(stack.instanceClasses).toEqual({ 'db.r8gd.4xlarge': 4 });
    // r8gd.4xlarge: 950 GB NVMe = 884.8 GiB; 90% of it less 2 x 128 GiB of temporary objects
    expect(Number(stack.outputs.TieredCacheGiB)).toBeCloseTo(884.8 * 0.9 - 256, 0);
    expect(stack.outputs.TemporaryObjectsGiB).toBe('256');
    const roles = stack.endpoints.map((e) => `${e.role} ${e.vpc.replace(/[A-F0-9]{8} /, ' ')}`).sort();
    expect(roles).toEqual([
      'READ_ONLY ConsumerVpc (10.20.0.0/16)',
      'READ_WRITE ConsumerVpc (10.20.0.0/16)',
      'READ_WRITE DataVpc (10.10.0.0/16)',
    ]);
  });

  test('formats a readable report', () => {
    const text = formatSummary(summarizeAssembly(outdir));
    expect(text).toMatch(/^Stack Summary \(Summary\.template\.json\): \d+ resources$/m);
    expect(text).toMatch(/^ {4}4 x db\.r8gd\.4xlarge$/m);
    expect(text).toMatch(/tiered cache +540\.\d GiB/);
    // 4xlarge is at Aurora's cap; RDS Proxy is given 99%, which leaves the 10 reserved connections.
    expect(text).toMatch(/^ {4}max_connections +5000 \(proxy may open 4950; 10 reserved for rdsadmin, AWS's automation, the master user and the role bootstrap\)$/m);
  });

  test('a missing assembly says how to make one', () => {
    const missing = path.join(outdir, 'nope');
    expect(() => summarizeAssembly(missing)).toThrow(`${missing} is not a directory: pass the directory \`cdk synth\` writes: run \`npx cdk synth --quiet --output cdk.out\` (or \`make synth\`) first`);
  });

  test('a directory without a manifest says what a cloud assembly holds', () => {
    expect(() => summarizeAssembly(os.tmpdir())).toThrow(`no manifest.json in ${os.tmpdir()}: pass the directory \`cdk synth\` writes: run \`npx cdk synth --quiet --output cdk.out\` (or \`make synth\`) first; a cloud assembly holds manifest.json beside the templates`);
  });
});

describe('synth summary of the PgBouncer engine', () => {
  test('GIVEN the reference app with proxyEngine=pgbouncer WHEN summarized THEN its endpoints are the fleet\'s interface endpoints in the consumer VPC, by listener', () => {
    // GIVEN
    const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'apk-summary-pgb-'));
    try {
      const app = new App({ outdir, context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [], proxyEngine: 'pgbouncer' } });
      new ReferenceDeployment(app, 'Summary', readDeploymentContext(app));
      app.synth();
      // WHEN
      const [stack] = summarizeAssembly(outdir);
      // THEN
      expect(stack.resourceCounts['AWS::RDS::DBProxy']).toBeUndefined();
      expect(stack.endpoints.map((e) => `${e.logicalId.replace(/[A-F0-9]{8} /, ' ')} ${e.role} ${e.vpc.replace(/[A-F0-9]{8} /, ' ')}`).sort()).toEqual([
        'PgBouncerProxyReadOnlyEndpoint (PgBouncer) READ_ONLY ConsumerVpc (10.20.0.0/16)',
        'PgBouncerProxyReadWriteEndpoint (PgBouncer) READ_WRITE ConsumerVpc (10.20.0.0/16)',
      ]);
      // AND its cost estimate reads what `plan summary` reads of modules/examples/complete-pgbouncer, to the same
      // figures but for the CloudFormation endpoint the hosts' rollout signals need (Terraform takes no signals)
      expect(stack.inventory).toMatchObject({ region: undefined, storageType: 'aurora-iopt1', rdsProxies: 0, fleet: { hosts: 2, instanceType: 'c7g.large' }, networkLoadBalancers: 1 });
      expect(stack.inventory.interfaceEndpoints.map((e) => `${e.service} ${e.azs}`).sort()).toEqual(['PgBouncer 2', 'PgBouncer 2', 'cloudformation 2', 'ec2messages 2', 'monitoring 2', 'secretsmanager 2', 'secretsmanager 2', 'ssm 2', 'ssmmessages 2']);
      const fromPlan = estimateCost(inventoryOfPlan(parsePlan(fs.readFileSync(path.join(__dirname, '..', 'cli', 'fixtures', 'plan-pgbouncer.json'), 'utf8'), 'plan')));
      const fromTemplate = stackCost(stack, { region: 'us-east-1' })!;
      const withoutSignals = stackCost({ ...stack, inventory: { ...stack.inventory, interfaceEndpoints: stack.inventory.interfaceEndpoints.filter((e) => e.service !== 'cloudformation') } }, { region: 'us-east-1' })!;
      expect(withoutSignals.lines.map((l) => l.monthlyUsd)).toEqual(fromPlan.lines.map((l) => l.monthlyUsd));
      expect([withoutSignals.knownMonthlyUsd, fromPlan.knownMonthlyUsd]).toEqual([239.08, 239.08]);
      // One endpoint in 2 zones more: 2 x the endpoint-AZ-hour x 730 hours.
      expect(fromTemplate.knownMonthlyUsd).toBeCloseTo(239.08 + 2 * PRICE_TABLE['us-east-1']!.interfaceEndpointAzHour!.usd * HOURS_PER_MONTH, 2);
    } finally {
      fs.rmSync(outdir, { recursive: true, force: true });
    }
  });
});
