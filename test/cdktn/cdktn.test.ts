import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { synthComplete } from '../../packages/cdktn/examples/complete';
import { synthCompletePgBouncer } from '../../packages/cdktn/examples/complete-pgbouncer';
import { type KitValidationError, LambdaConsumer, PgBouncerProxy, type PgBouncerProxyProps, PoolingProxy } from '../../packages/cdktn/src';
import { PlanJson, ROOT, TerraformDir, ensureLambdaZips } from '../terraform/terraform-cli';
import { App, TerraformStack, Token } from './cdktn-runtime';

/**
 * The CDK Terrain flavour: modules/examples/complete and complete-pgbouncer rebuilt as cdktn apps from the
 * package's generated constructs, synthesized through the library API to cdk.tf.json and planned by
 * Terraform against the offline stand-in provider; each must plan the same resources as its HCL example.
 * Bad props fail at construction with the kit's message naming the prop.
 */

const COMPLETE = path.join(ROOT, 'modules', 'examples', 'complete');
const COMPLETE_PGBOUNCER = path.join(ROOT, 'modules', 'examples', 'complete-pgbouncer');

/** Init (with the stack's local backend, which cdktn always writes), plan and `show -json` of the synthesized stack. */
function planStack(dir: TerraformDir): PlanJson {
  // The modules read the Lambda zips at plan (filebase64sha256).
  ensureLambdaZips();
  const planFile = path.join(dir.dir, 'stack.tfplan');
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

/**
 * What the modules plan, by address: the same addresses and values in both flavours (zip paths compared by
 * file). `rename` maps an HCL module instance to the cdktn app's module (a for_each instance to a construct).
 */
function moduleResources(plan: PlanJson, rename: Readonly<Record<string, string>> = {}): Record<string, unknown> {
  return Object.fromEntries(
    plan.resource_changes
      .filter((c) => c.mode === 'managed' && c.address.startsWith('module.'))
      .map((c) => {
        const after = { ...(c.change.after ?? {}) };
        if (typeof after.filename === 'string') after.filename = path.basename(after.filename);
        const from = Object.keys(rename).find((m) => c.address.startsWith(`${m}.`));
        return [from === undefined ? c.address : `${rename[from]}${c.address.slice(from.length)}`, after];
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

describe('the complete-pgbouncer example as a cdktn app', () => {
  let outdir: string;
  let cdktnPlan: PlanJson;
  let hclPlan: PlanJson;
  const dirs: TerraformDir[] = [];

  beforeAll(() => {
    outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdktn-complete-pgbouncer-'));
    const stackDir = synthCompletePgBouncer(outdir, { modulesDir: path.join(ROOT, 'modules') });
    const cdktn = new TerraformDir(stackDir);
    const hcl = new TerraformDir(COMPLETE_PGBOUNCER);
    dirs.push(cdktn, hcl);
    cdktnPlan = planStack(cdktn);
    hclPlan = hcl.planJson();
  }, 600_000);

  afterAll(() => {
    for (const d of dirs) d.dispose();
    if (outdir) fs.rmSync(outdir, { recursive: true, force: true });
  });

  test('GIVEN the app WHEN synthesized THEN the fleet is the PgBouncerProxy construct, fed by the cluster module\'s outputs', () => {
    const stackDir = path.join(outdir, 'stacks', 'complete-pgbouncer');
    const config = JSON.parse(fs.readFileSync(path.join(stackDir, 'cdk.tf.json'), 'utf8')) as { module: Record<string, Record<string, unknown>> };
    expect(Object.keys(config.module).sort()).toEqual(['dashboard', 'database', 'database_roles', 'log_key_policy', 'pooler', 'reader', 'writer']);
    expect(config.module.pooler).toMatchObject({
      source: path.relative(stackDir, path.join(ROOT, 'modules', 'pgbouncer-proxy')),
      reader_endpoints: '${module.database.reader_instance_endpoints}',
      max_connections: '${module.database.max_connections}',
      consumer_users: ['app_reader', 'app_writer'],
      endpoints: { 'apk-pgbouncer-ro': { role: 'READ_ONLY' }, 'apk-pgbouncer-rw': { role: 'READ_WRITE' } },
    });
    expect(config.module.reader).toMatchObject({ endpoint: '${module.pooler.endpoints["apk-pgbouncer-ro"]}', auth: 'secret' });
    expect(config.module.dashboard).toMatchObject({ pgbouncer_targets: '${module.pooler.metric_targets}', pgbouncer_fleet_name: '${module.pooler.fleet_name}' });
  });

  test('GIVEN both flavours planned offline THEN the cdktn app plans the same resources per type as modules/examples/complete-pgbouncer', () => {
    const counts = managedCounts(cdktnPlan);
    expect(counts).toEqual(managedCounts(hclPlan));
    expect(counts).toMatchObject({ aws_rds_cluster: 1, aws_autoscaling_group: 1, aws_lb: 1, aws_vpc_endpoint_service: 1, aws_lambda_function: 4 });
  });

  test('GIVEN both flavours planned offline THEN every module resource has the same address and planned values', () => {
    const resources = moduleResources(cdktnPlan);
    expect(Object.keys(resources).filter((a) => a.startsWith('module.pooler.')).length).toBeGreaterThan(20);
    expect(resources).toEqual(moduleResources(hclPlan, { 'module.consumer["reader"]': 'module.reader', 'module.consumer["writer"]': 'module.writer' }));
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

  describe('PgBouncerProxy', () => {
    const fleet = {
      name: 'orders',
      vpcId: 'vpc-data',
      subnetIds: ['subnet-d1', 'subnet-d2'],
      clusterSecurityGroupId: 'sg-cluster',
      clusterEndpoint: 'orders.cluster-abc.us-east-1.rds.amazonaws.com',
      readerEndpoints: ['orders-reader-1.abc.us-east-1.rds.amazonaws.com'],
      databaseName: 'app',
      maxConnections: 1000,
      packagesBucket: 'orders-packages',
      packagesKey: 'pgbouncer/packages.tar',
      // The module's own CA, issued by the release's certificate function.
      certificateFunction: { filename: 'lambda/pooler-certificate.zip' },
    };
    const USER_FIX = 'use lower-case letters, digits and underscores, not starting with a digit, at most 63 characters';
    const READERS_FIX = 'the read-only listener needs at least one reader; Aurora allows 15 (an integer from 1 to 15)';
    const unknownList = (ref: string) => Token.asList({ resolve: () => ref });
    /** The construct's violations with these props: none when it is made. */
    const violations = (props: Partial<PgBouncerProxyProps>): ReadonlyArray<string> => {
      try {
        new PgBouncerProxy(ordersStack(), 'Pooler', { ...fleet, ...props });
        return [];
      } catch (e) {
        expect(e).toMatchObject({ name: 'KitValidationError', constructPath: 'Orders/Pooler' });
        return (e as KitValidationError).violations;
      }
    };

    test('GIVEN no reader endpoints and bad user names THEN the list\'s length and each consumer user are checked, naming the props', () => {
      expect(violations({ readerEndpoints: [], readOnlyServerUser: 'Reader', consumerUsers: ['app_reader', 'App-Writer', '9lives'] })).toEqual([
        `readerEndpoints 0 is out of range: ${READERS_FIX}`,
        `readOnlyServerUser Reader is not a valid database user name: ${USER_FIX}`,
        `consumerUsers item App-Writer is not a valid database user name: ${USER_FIX}`,
        `consumerUsers item 9lives is not a valid database user name: ${USER_FIX}`,
      ]);
      expect(violations({ readerEndpoints: Array.from({ length: 16 }, (_, i) => `orders-reader-${i + 1}.abc`) })).toEqual([`readerEndpoints 16 is out of range: ${READERS_FIX}`]);
      expect(violations({ readerEndpoints: Array.from({ length: 15 }, (_, i) => `orders-reader-${i + 1}.abc`), consumerUsers: ['app_reader', 'app_writer'] })).toEqual([]);
    });

    test('GIVEN a large instance type THEN the budget split counts its vCPUs from the catalog, as the module looks them up', () => {
      expect(violations({ instanceType: 'c7g.16xlarge', hosts: 20, maxConnections: 200 })).toEqual([
        'hosts 20 x 64 processes per target need 1280 server connections of a budget of 200 (maxConnectionsPercent 100 of max_connections 200): use fewer hosts or a smaller instance type, or raise maxConnectionsPercent',
      ]);
      expect(violations({ instanceType: 'c7g.medium', hosts: 20, maxConnections: 200 })).toEqual([]);
    });

    test('GIVEN lists known only at plan THEN their length waits for Terraform, and the users known at synth are still checked', () => {
      // The cluster module's output, and a list with an output spread into it: its length is known at plan only.
      expect(violations({ readerEndpoints: unknownList('${module.database.reader_instance_endpoints}') })).toEqual([]);
      expect(violations({ readerEndpoints: [...unknownList('${var.more_readers}'), ...Array.from({ length: 15 }, (_, i) => `orders-reader-${i + 1}.abc`)] })).toEqual([]);
      // An unknown instance type or pool share leaves the budget split to plan.
      expect(violations({ instanceType: Token.asString({ resolve: () => '${var.instance_type}' }), hosts: 20, maxConnections: 200 })).toEqual([]);
      expect(violations({ instanceType: 'c7g.16xlarge', hosts: 20, maxConnections: 200, maxConnectionsPercent: Token.asNumber({ resolve: () => '${var.pct}' }) })).toEqual([]);
      // Users from elsewhere (a spread list, an output) are checked at plan; the literal ones now.
      const users = [...unknownList('${var.users}'), Token.asString({ resolve: () => '${var.user}' }), 'Bad-User'];
      expect(violations({ consumerUsers: users })).toEqual([`consumerUsers item Bad-User is not a valid database user name: ${USER_FIX}`]);
      expect(violations({ consumerUsers: unknownList('${var.users}'), readOnlyServerUser: 'Reader' })).toEqual([`readOnlyServerUser Reader is not a valid database user name: ${USER_FIX}`]);
    });
  });

  test('GIVEN a prop the module does not have (from JavaScript) THEN the error names it and lists the inputs', () => {
    const stack = ordersStack();
    expect(() => new PoolingProxy(stack, 'Proxy', { ...proxyProps, maxConnectionPercent: 80 } as never)).toThrow(
      /^maxConnectionPercent is not an input of modules\/pooling-proxy: use one of name, clusterIdentifier, /,
    );
  });
});
