import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { synthComplete } from '../../packages/cdktn/examples/complete';
import { LambdaConsumer, PoolingProxy } from '../../packages/cdktn/src';
import { PlanJson, ROOT, TerraformDir } from '../terraform/terraform-cli';
import { App, TerraformStack, Token } from './cdktn-runtime';

/**
 * The CDK Terrain flavour: modules/examples/complete rebuilt as a cdktn app from the package's generated
 * constructs, synthesized through the library API to cdk.tf.json and planned by Terraform against the
 * offline stand-in provider; it must plan the same resources as the HCL example. Bad props fail at
 * construction with the kit's message naming the prop.
 */

const COMPLETE = path.join(ROOT, 'modules', 'examples', 'complete');

/** Init (with the stack's local backend, which cdktn always writes), plan and `show -json` of the synthesized stack. */
function planStack(dir: TerraformDir): PlanJson {
  const planFile = path.join(dir.dir, 'complete.tfplan');
  for (const args of [['init', '-input=false', '-no-color'], ['plan', '-input=false', '-lock=false', '-no-color', `-out=${planFile}`]]) {
    const r = dir.run(args);
    if (r.status !== 0) throw new Error(`terraform ${args[0]} failed in ${dir.dir}:\n${r.stdout}\n${r.stderr}`);
  }
  const show = dir.run(['show', '-json', planFile]);
  if (show.status !== 0) throw new Error(`terraform show failed:\n${show.stderr}`);
  return JSON.parse(show.stdout) as PlanJson;
}

function managedCounts(plan: PlanJson): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of plan.resource_changes.filter((c) => c.mode === 'managed')) counts[r.type] = (counts[r.type] ?? 0) + 1;
  return counts;
}

/** What the modules plan, by address: the same addresses and values in both flavours (zip paths compared by file). */
function moduleResources(plan: PlanJson): Record<string, unknown> {
  return Object.fromEntries(
    plan.resource_changes
      .filter((c) => c.mode === 'managed' && c.address.startsWith('module.'))
      .map((c) => {
        const after = { ...(c.change.after ?? {}) };
        if (typeof after.filename === 'string') after.filename = path.basename(after.filename);
        return [c.address, after];
      }),
  );
}

describe('the complete example as a cdktn app', () => {
  let outdir: string;
  let cdktnPlan: PlanJson;
  let hclPlan: PlanJson;
  const dirs: TerraformDir[] = [];

  beforeAll(() => {
    outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdktn-complete-'));
    // The modules of this checkout, each read in place through its path relative to the stack's directory.
    const stackDir = synthComplete(outdir, { modulesDir: path.join(ROOT, 'modules') });
    const cdktn = new TerraformDir(stackDir);
    const hcl = new TerraformDir(COMPLETE);
    dirs.push(cdktn, hcl);
    cdktnPlan = planStack(cdktn);
    hclPlan = hcl.planJson();
  }, 600_000);

  afterAll(() => {
    for (const d of dirs) d.dispose();
    if (outdir) fs.rmSync(outdir, { recursive: true, force: true });
  });

  test('GIVEN the app WHEN synthesized THEN cdk.tf.json calls each module through its construct', () => {
    const config = JSON.parse(fs.readFileSync(path.join(outdir, 'stacks', 'complete', 'cdk.tf.json'), 'utf8')) as {
      module: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(config.module).sort()).toEqual(['dashboard', 'database', 'database_roles', 'log_key_policy', 'proxy', 'reader', 'writer']);
    expect(config.module.proxy).toMatchObject({
      source: path.relative(path.join(outdir, 'stacks', 'complete'), path.join(ROOT, 'modules', 'pooling-proxy')),
      cluster_identifier: '${module.database.cluster_identifier}',
      max_connections_percent: 100,
      readers: 2,
    });
    expect(config.module.reader).toMatchObject({ endpoint: '${module.proxy.endpoints["aurora-proxy-kit-ro"]}', depends_on: ['module.database_roles'] });
  });

  test('GIVEN both flavours planned offline THEN the cdktn app plans the same resources per type as modules/examples/complete', () => {
    const counts = managedCounts(cdktnPlan);
    expect(counts).toEqual(managedCounts(hclPlan));
    expect(counts).toMatchObject({ aws_rds_cluster: 1, aws_rds_cluster_instance: 3, aws_db_proxy: 1, aws_db_proxy_endpoint: 2, aws_lambda_function: 3, aws_cloudwatch_dashboard: 1 });
  });

  test('GIVEN both flavours planned offline THEN every module resource has the same address and planned values', () => {
    const resources = moduleResources(cdktnPlan);
    expect(Object.keys(resources).length).toBeGreaterThan(50);
    expect(resources).toEqual(moduleResources(hclPlan));
  });
});

describe('the kit\'s rules at construction', () => {
  const proxyProps = {
    name: 'orders',
    clusterIdentifier: 'orders',
    readers: 2,
    clusterSecurityGroupId: 'sg-cluster',
    clusterResourceId: 'cluster-ORDERS',
    vpcId: 'vpc-data',
    subnetIds: ['subnet-d1', 'subnet-d2'],
  };
  const endpoint = { vpc_id: 'vpc-consumer', subnet_ids: ['subnet-c1', 'subnet-c2'] };
  // Constructing writes nothing; the app only needs a directory it would synthesize into.
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdktn-rules-'));
  const ordersStack = () => new TerraformStack(new App({ outdir }), 'Orders');
  afterAll(() => fs.rmSync(outdir, { recursive: true, force: true }));

  test('GIVEN readers 16 WHEN the example is synthesized THEN it throws the cluster rule\'s message naming the prop, before anything is written', () => {
    const badOutdir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdktn-bad-'));
    try {
      expect(() => synthComplete(badOutdir, { readers: 16 })).toThrow(
        'complete/database: readers 16 is out of range: Aurora allows up to 15 readers per cluster (an integer from 0 to 15)',
      );
      expect(fs.existsSync(path.join(badOutdir, 'stacks', 'complete', 'cdk.tf.json'))).toBe(false);
    } finally {
      fs.rmSync(badOutdir, { recursive: true, force: true });
    }
  });

  test('GIVEN maxConnectionsPercent 150 THEN PoolingProxy throws KitValidationError with the kit\'s message', () => {
    const stack = ordersStack();
    let error: unknown;
    try {
      new PoolingProxy(stack, 'Proxy', { ...proxyProps, maxConnectionsPercent: 150 });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({
      name: 'KitValidationError',
      constructPath: 'Orders/Proxy',
      violations: ["maxConnectionsPercent 150 is out of range: set the share of the target's max_connections the proxy may use (an integer from 1 to 100)"],
    });
  });

  test('GIVEN maxConnectionsPercent 40 and the idle share left out THEN the module\'s default (50) breaks idle <= max, as plan would', () => {
    const stack = ordersStack();
    expect(() => new PoolingProxy(stack, 'Proxy', { ...proxyProps, maxConnectionsPercent: 40 })).toThrow(
      'Orders/Proxy: maxIdleConnectionsPercent 50 exceeds maxConnectionsPercent 40: set it to 40 or less',
    );
  });

  test('GIVEN bad endpoints THEN each endpoint is checked: its name, its role, a READ_ONLY one on a writer-only cluster', () => {
    const stack = ordersStack();
    expect(() =>
      new PoolingProxy(stack, 'Proxy', { ...proxyProps, readers: 0, endpoints: { Reports: { ...endpoint, target_role: 'READ_WRITE' }, reports: endpoint } }),
    ).toThrow(
      [
        'Orders/Proxy: readers 0 leaves a READ_ONLY endpoint (endpoints target_role) without a target: RDS Proxy refuses READ_ONLY endpoints for a cluster with only a writer; add a reader or use a READ_WRITE endpoint',
        'Orders/Proxy: endpoints key Reports is not a valid proxy endpoint name: use 1 to 63 lower-case letters, digits and hyphens, starting with a letter, without "--" or a trailing hyphen',
      ].join('\n'),
    );
  });

  test('GIVEN values known only at plan (tokens) THEN the rules that read them wait for Terraform, the others still run', () => {
    const stack = ordersStack();
    const unknownNumber = Token.asNumber({ resolve: () => '${var.readers}' });
    // An unknown reader count with a READ_ONLY endpoint, and an unknown endpoint map: decided at plan.
    expect(() => new PoolingProxy(stack, 'A', { ...proxyProps, readers: unknownNumber, endpoints: { reports: endpoint } })).not.toThrow();
    expect(() => new PoolingProxy(stack, 'B', { ...proxyProps, endpoints: Token.asAny('${var.endpoints}') })).not.toThrow();
    // A key ARN from another resource is set, though unknown: the KMS switch rule holds.
    const consumer = {
      functionName: 'reports',
      filename: 'read-handler.zip',
      vpcId: 'vpc-consumer',
      subnetIds: ['subnet-c1'],
      endpoint: Token.asAny('${module.proxy.endpoints["reports"]}'),
      connectArnPrefix: 'arn:aws:rds-db:us-east-1:123456789012:dbuser:prx-1/',
      dbUser: 'report_reader',
      databaseName: 'app',
      createKmsKey: false,
    };
    expect(() => new LambdaConsumer(stack, 'C', { ...consumer, kmsKeyArn: Token.asString({ resolve: () => '${aws_kms_key.logs.arn}' }) })).not.toThrow();
    expect(() => new LambdaConsumer(stack, 'D', { ...consumer, memorySize: 64 })).toThrow(
      'Orders/D: memorySize 64 is out of range: Lambda memory is 128 MB to 10,240 MB (an integer from 128 to 10240)\n' +
        'Orders/D: kmsKeyArn is not set: pass kmsKeyArn when createKmsKey is false',
    );
  });

  test('GIVEN a prop the module does not have (from JavaScript) THEN the error names it and lists the inputs', () => {
    const stack = ordersStack();
    expect(() => new PoolingProxy(stack, 'Proxy', { ...proxyProps, maxConnectionPercent: 80 } as never)).toThrow(
      /^maxConnectionPercent is not an input of modules\/pooling-proxy: use one of name, clusterIdentifier, /,
    );
  });
});
