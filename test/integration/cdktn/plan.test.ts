import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { synthComplete } from '../../../packages/cdktn/examples/complete';
import { synthCompletePgBouncer } from '../../../packages/cdktn/examples/complete-pgbouncer';
import type { PlanOfResources } from '../../../lib/terraform/plan-json';
import { EXAMPLE_POOLER_IMAGE_ID, ROOT, TerraformDir } from '../../terraform/terraform-cli';

/**
 * The CDK Terrain flavour: modules/examples/complete and complete-pgbouncer rebuilt as cdktn apps from the
 * package's generated constructs, synthesized through the library API to cdk.tf.json and planned by
 * Terraform against the offline stand-in provider; each must plan the same resources as its HCL example: the
 * same values for every module resource and every root resource and data source (the endpoints' policies,
 * the policy documents' statements, a value known only after apply by the module outputs and documents it is
 * made from), and the PgBouncer app the same module inputs. (Bad props at construction: test/cdktn/cdktn.test.ts.)
 */

const COMPLETE = path.join(ROOT, 'modules', 'examples', 'complete');
const COMPLETE_PGBOUNCER = path.join(ROOT, 'modules', 'examples', 'complete-pgbouncer');


function managedCounts(plan: PlanOfResources): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of plan.resource_changes.filter((c) => c.mode === 'managed')) counts[r.type] = (counts[r.type] ?? 0) + 1;
  return counts;
}

/**
 * What the modules plan, by address: the same addresses and values in both flavours (zip paths compared by
 * file). `rename` maps an HCL module instance to the cdktn app's module (a for_each instance to a construct).
 */
function moduleResources(plan: PlanOfResources, rename: Readonly<Record<string, string>> = {}): Record<string, unknown> {
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

/** The VPCs of both examples: the app makes each VPC's subnets and route tables per zone, the HCL examples by for_each. */
const VPC_ADDRESSES: ReadonlyArray<readonly [RegExp, string]> = [
  [/^aws_vpc\.vpc_(\w+)$/, 'aws_vpc.this["$1"]'],
  [/^aws_(subnet|route_table)\.(?:subnet|routes)_(\w+)_(\d+)$/, 'aws_$1.isolated["$2-$3"]'],
  [/^aws_route_table_association\.routes_(\w+)_(\d+)_association$/, 'aws_route_table_association.isolated["$1-$2"]'],
];

/** The complete example app's root resources by the HCL example's address (its flow logs per VPC are for_each there). */
const COMPLETE_ROOT_ADDRESSES: ReadonlyArray<readonly [RegExp, string]> = [
  ...VPC_ADDRESSES,
  [/^data\.aws_iam_policy_document\.flow_logs_policy_(\w+)$/, 'data.aws_iam_policy_document.flow_logs["$1"]'],
  [/^aws_cloudwatch_log_group\.flow_logs_(\w+)$/, 'aws_cloudwatch_log_group.flow_logs["$1"]'],
  [/^aws_flow_log\.flow_log_(\w+)$/, 'aws_flow_log.this["$1"]'],
  [/^aws_iam_role\.flow_logs_role_(\w+)$/, 'aws_iam_role.flow_logs["$1"]'],
  [/^aws_iam_role_policy\.flow_logs_role_policy_(\w+)$/, 'aws_iam_role_policy.flow_logs["$1"]'],
  [/^aws_vpc_endpoint\.secrets_manager_endpoint_interface$/, 'aws_vpc_endpoint.secrets_manager'],
];

/** An HCL module instance (of a for_each call) -> the cdktn app's module: the example's `consumer` instances are the app's reader and writer. */
const PGBOUNCER_MODULES: Readonly<Record<string, string>> = { 'module.consumer["reader"]': 'module.reader', 'module.consumer["writer"]': 'module.writer' };

/**
 * The cdktn app's root resources by the HCL example's address: a for_each instance there is a construct of
 * its own here (its key in the id), and a few ids differ where the name was taken in the construct scope.
 */
const PGBOUNCER_ROOT_ADDRESSES: ReadonlyArray<readonly [RegExp, string]> = [
  ...VPC_ADDRESSES,
  [/^aws_vpc_endpoint\.host_services_(\w+)$/, 'aws_vpc_endpoint.host_services["$1"]'],
  [/^aws_vpc_endpoint\.consumer_secrets_endpoint$/, 'aws_vpc_endpoint.consumer_secrets'],
  [/^aws_vpc_security_group_ingress_rule\.consumer_secrets_(\w+)$/, 'aws_vpc_security_group_ingress_rule.consumer_secrets["$1"]'],
  [/^aws_vpc_security_group_ingress_rule\.host_services_from_hosts$/, 'aws_vpc_security_group_ingress_rule.host_services'],
  [/^data\.aws_iam_policy_document\.consumer_secrets_policy$/, 'data.aws_iam_policy_document.consumer_secrets'],
  [/^data\.aws_partition\.partition$/, 'data.aws_partition.current'],
];

interface Naming {
  /** A root resource's address in the terms compared (the HCL example's). */
  readonly address: (address: string) => string;
  /** A module instance in the terms compared (the cdktn app's). */
  readonly modules: Readonly<Record<string, string>>;
}

const HCL_NAMING = (modules: Readonly<Record<string, string>>): Naming => ({ address: (a) => a, modules });
const CDKTN_NAMING = (renames: ReadonlyArray<readonly [RegExp, string]>): Naming => ({
  address: (a) => renames.reduce((out, [from, to]) => (from.test(out) ? out.replace(from, to) : out), a),
  modules: {},
});

type Expression = { references?: ReadonlyArray<string>; constant_value?: unknown };
type ModuleCall = NonNullable<PlanOfResources['configuration']['root_module']['module_calls']>[string];
const isExpression = (e: unknown): e is Expression => e !== null && typeof e === 'object' && !Array.isArray(e) && ('references' in e || 'constant_value' in e);

/**
 * What a value known only after apply is made from: the module outputs and data sources its expression
 * references (module.x.output, data.type.name.attribute), in the HCL example's names. References to root
 * resources are left out: the example reaches its subnets through locals and its for_each instances through
 * each.value, so its references do not say which instance; those resources are compared by their own values.
 * A for_each call or data source indexed by each.key (`module.consumer[each.key].x`) is referenced without what
 * is read of it: with the resource instance's key (`eachKey`) it is that instance's, `module.reader.*`, an output
 * (attribute) the plan does not name.
 */
function madeFrom(expression: Expression | undefined, naming: Naming, eachKey?: string): string[] {
  const all = expression?.references ?? [];
  const byEachKey = (ref: string): string | undefined => {
    if (eachKey === undefined || !all.includes('each.key') || !/^(module\.\w+|data\.\w+\.\w+)$/.test(ref)) return undefined;
    // A bare reference is also listed as the prefix of a longer one (module.pooler with module.pooler.x).
    if (all.some((o) => o.startsWith(`${ref}.`) || o.startsWith(`${ref}[`))) return undefined;
    const instance = `${ref}["${eachKey}"]`;
    return `${ref.startsWith('module.') ? (naming.modules[instance] ?? instance) : instance}.*`;
  };
  const refs = all.flatMap((ref) => {
    const keyed = byEachKey(ref);
    if (keyed !== undefined) return [keyed];
    const instance = Object.keys(naming.modules).find((m) => ref === m || ref.startsWith(`${m}.`));
    const renamed = instance === undefined ? ref : `${naming.modules[instance]}${ref.slice(instance.length)}`;
    // module.<name>.<output>: a key or index into an output (a lookup of a consumer's secret) reads that output.
    const output = /^module\.\w+\.\w+/.exec(renamed);
    if (output) return [output[0]];
    const data = /^(data\.\w+\.\w+(?:\["[^"]*"\])?)(\.\w+)?/.exec(renamed);
    return data ? [`${naming.address(data[1])}${data[2] ?? ''}`] : [];
  });
  // A reference is listed with its prefixes (data.x.y with data.x.y.json): the longest says what is read.
  return [...new Set(refs)].filter((r) => !refs.some((o) => o !== r && o.startsWith(`${r}.`))).sort();
}

/**
 * A planned value with each part known only after apply replaced by what it is made from (its expression's
 * references); a part made from an output the plan does not name (`module.reader.*`) matches any output of it.
 */
function described(value: unknown, unknown: unknown, expression: unknown, naming: Naming, eachKey?: string): unknown {
  if (unknown === true) {
    const from = madeFrom(isExpression(expression) ? expression : undefined, naming, eachKey);
    const text = `(known after apply${from.length > 0 ? ` from ${from.join(', ')}` : ''})`;
    if (!from.some((f) => f.endsWith('.*'))) return text;
    const pattern = text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\\\.\\\*/g, '\\.\\w+');
    return expect.stringMatching(new RegExp(`^${pattern}$`));
  }
  // A nested block's expressions are a list of blocks, an attribute's one expression for all its elements.
  const child = (key: string | number): unknown =>
    isExpression(expression) ? expression : ((expression as Record<string | number, unknown> | undefined) ?? {})[key];
  // An attribute known only after apply is absent from the planned value, marked in `unknown` alone.
  const marks = (unknown ?? {}) as Record<string, unknown>;
  if (Array.isArray(value)) return value.map((v, i) => described(v, marks[i], child(i), naming, eachKey));
  if ((value !== null && typeof value === 'object') || (value === undefined && Object.keys(marks).length > 0)) {
    const known = (value ?? {}) as Record<string, unknown>;
    const keys = [...new Set([...Object.keys(known), ...Object.keys(marks)])].sort();
    return Object.fromEntries(keys.map((k) => [k, described(known[k], marks[k], child(k), naming, eachKey)]));
  }
  return value;
}

/**
 * Every root resource and data source by its address in the HCL example's terms: its planned values, each part
 * known only after apply by what it is made from. Data sources whose inputs are known are read at plan (prior
 * state), the others at apply (a planned read, with the statements of a policy document as far as known).
 */
function rootResources(plan: PlanOfResources, naming: Naming): Record<string, unknown> {
  const configured = new Map(plan.configuration.root_module.resources.map((r) => [r.address, r.expressions]));
  const expressionsOf = (address: string) => configured.get(address.replace(/\[[^\]]*\]$/, ''));
  const out: Record<string, unknown> = {};
  for (const c of plan.resource_changes.filter((r) => !r.address.startsWith('module.'))) {
    const eachKey = /\["([^"]+)"\]$/.exec(c.address)?.[1];
    out[naming.address(c.address)] = described(c.change.after, c.change.after_unknown ?? {}, expressionsOf(c.address), naming, eachKey);
  }
  for (const r of plan.prior_state?.values?.root_module?.resources ?? []) {
    if (!(naming.address(r.address) in out)) out[naming.address(r.address)] = r.values;
  }
  return out;
}

/** Each module call's instances by the cdktn app's module names: a for_each call's instances are calls of their own there. */
function callInstances(plan: PlanOfResources, naming: Naming): Array<[string, string, ModuleCall]> {
  return Object.entries(plan.configuration.root_module.module_calls ?? {}).flatMap(([call, config]) => {
    const instances = Object.entries(naming.modules)
      .filter(([m]) => m.startsWith(`module.${call}[`))
      .map(([, to]) => to.replace(/^module\./, ''));
    return (instances.length > 0 ? instances : [call]).map((name): [string, string, ModuleCall] => [name, call, config]);
  });
}

/**
 * The inputs whose values the HCL example states, by the cdktn app's module names: each as its value, a
 * constant or one of the example's variables as planned. The plan gives an input's references, not its
 * expression (`!var.x` also references var.x), so an input is a variable only where the example writes it as
 * `var.<name>` alone, at the top of the module block.
 */
function statedInputs(plan: PlanOfResources, naming: Naming, exampleDir: string): Record<string, Record<string, unknown>> {
  const writtenAsVariable: Record<string, Record<string, string>> = {};
  for (const file of fs.readdirSync(exampleDir).filter((f) => f.endsWith('.tf'))) {
    let call: string | undefined;
    let depth = 0;
    for (const line of fs.readFileSync(path.join(exampleDir, file), 'utf8').replace(/^\s*#.*$/gm, '').split('\n')) {
      const opened = /^module "(\w+)" \{/.exec(line);
      if (opened) [call, depth] = [opened[1], 0];
      const variable = /^\s*(\w+)\s*=\s*var\.(\w+)\s*$/.exec(line);
      if (call !== undefined && depth === 1 && variable) (writtenAsVariable[call] ??= {})[variable[1]] = variable[2];
      depth += (line.match(/[{[(]/g) ?? []).length - (line.match(/[}\])]/g) ?? []).length;
      if (depth === 0) call = undefined;
    }
  }
  return Object.fromEntries(
    callInstances(plan, naming).map(([name, call, config]) => [
      name,
      Object.fromEntries(
        Object.entries(config.expressions ?? {}).flatMap(([input, e]): Array<[string, unknown]> => {
          const variable = writtenAsVariable[call]?.[input];
          if (variable !== undefined && (e.references ?? []).join() === `var.${variable}`) return [[input, plan.variables?.[variable]?.value]];
          return (e.references ?? []).length === 0 ? [[input, e.constant_value]] : [];
        }),
      ),
    ]),
  );
}

/**
 * The inputs of each module call (and its depends_on), by the cdktn app's module names: one the HCL example states
 * a value for (`stated`, from statedInputs) as the constant the call passes, any other (module outputs, the
 * example's locals, each.value) by the module outputs it reads; the values themselves reach the modules' planned
 * resources, compared on their own. The HCL example's stated values are statedInputs', laid over these.
 */
function moduleInputs(plan: PlanOfResources, naming: Naming, stated: Readonly<Record<string, Readonly<Record<string, unknown>>>>): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    callInstances(plan, naming).map(([name, , config]) => {
      const inputs: Record<string, unknown> = Object.fromEntries(
        Object.entries(config.expressions ?? {}).map(([input, e]) => [
          input,
          input in (stated[name] ?? {}) && (e.references ?? []).length === 0 ? e.constant_value : { reads: madeFrom(e, naming) },
        ]),
      );
      inputs.depends_on = [...(config.depends_on ?? [])].sort();
      return [name, inputs];
    }),
  );
}

describe('the complete example as a cdktn app', () => {
  let outdir: string;
  let cdktnPlan: PlanOfResources;
  let hclPlan: PlanOfResources;
  const dirs: TerraformDir[] = [];

  beforeAll(() => {
    outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdktn-complete-'));
    // The modules of this checkout, each read in place through its path relative to the stack's directory.
    const stackDir = synthComplete(outdir, { modulesDir: path.join(ROOT, 'modules') });
    const cdktn = new TerraformDir(stackDir, {}, { backend: true });
    const hcl = new TerraformDir(COMPLETE);
    dirs.push(cdktn, hcl);
    cdktnPlan = cdktn.planJson();
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
      source: path.relative(path.join(outdir, 'stacks', 'complete'), path.join(ROOT, 'modules', 'rds-proxy')),
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

  test('GIVEN both flavours planned offline THEN every root resource and data source has the same planned values: the VPCs, their flow logs, the Secrets Manager endpoint with its policy, the logs key', () => {
    const cdktn = rootResources(cdktnPlan, CDKTN_NAMING(COMPLETE_ROOT_ADDRESSES));
    const hcl = rootResources(hclPlan, HCL_NAMING({}));
    expect(Object.keys(cdktn).sort()).toEqual(Object.keys(hcl).sort());
    expect(cdktn).toEqual(hcl);
    expect((hcl['aws_vpc_endpoint.secrets_manager'] as { policy: unknown }).policy).toBe('(known after apply from data.aws_iam_policy_document.secrets_manager_endpoint.json)');
  });
});

describe('the complete-pgbouncer example as a cdktn app', () => {
  let outdir: string;
  let cdktnPlan: PlanOfResources;
  let hclPlan: PlanOfResources;
  let cdktn: TerraformDir;
  const dirs: TerraformDir[] = [];

  beforeAll(() => {
    outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdktn-complete-pgbouncer-'));
    // The AMI as the HCL example's plans get it (its pooler_image_id; the app's own variable has no default either).
    const stackDir = synthCompletePgBouncer(outdir, { modulesDir: path.join(ROOT, 'modules'), imageId: EXAMPLE_POOLER_IMAGE_ID });
    cdktn = new TerraformDir(stackDir, {}, { backend: true });
    const hcl = new TerraformDir(COMPLETE_PGBOUNCER);
    dirs.push(cdktn, hcl);
    cdktnPlan = cdktn.planJson();
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
    expect(resources).toEqual(moduleResources(hclPlan, PGBOUNCER_MODULES));
  });

  test('GIVEN both flavours planned offline THEN every root resource and data source has the same planned values: each endpoint with its policy, each policy document\'s statements', () => {
    // WHEN each plan's root resources are put in the HCL example's names, a value known only after apply by the
    // module outputs and data sources it is made from
    const cdktn = rootResources(cdktnPlan, CDKTN_NAMING(PGBOUNCER_ROOT_ADDRESSES));
    const hcl = rootResources(hclPlan, HCL_NAMING(PGBOUNCER_MODULES));
    // THEN they are the same resources with the same values
    expect(Object.keys(cdktn).sort()).toEqual(Object.keys(hcl).sort());
    expect(cdktn).toEqual(hcl);
    // AND the comparison reaches the policies: each restricted endpoint's document, its statements' principals and
    // resources by the module outputs they name (the reads at apply: their principals are the modules' roles)
    const policyOf = (address: string) => (hcl[address] as { policy?: unknown }).policy;
    expect(policyOf('aws_vpc_endpoint.s3')).toBe('(known after apply from data.aws_iam_policy_document.s3_endpoint.json)');
    expect(policyOf('aws_vpc_endpoint.secrets_manager')).toBe('(known after apply from data.aws_iam_policy_document.secrets_manager_endpoint.json)');
    expect(policyOf('aws_vpc_endpoint.monitoring')).toBe('(known after apply from data.aws_iam_policy_document.monitoring_endpoint.json)');
    expect(policyOf('aws_vpc_endpoint.consumer_secrets')).toBe('(known after apply from data.aws_iam_policy_document.consumer_secrets.json)');
    // Session Manager's: the default policy, which AWS sets (computed, from no document).
    expect(policyOf('aws_vpc_endpoint.host_services["ssm"]')).toBe('(known after apply)');
    const statements = (address: string) => (hcl[address] as { statement: Array<{ sid: string; principals: unknown }> }).statement;
    expect(statements('data.aws_iam_policy_document.secrets_manager_endpoint').map((st) => [st.sid, st.principals])).toEqual([
      ['RoleBootstrapReadsTheMasterSecret', [{ type: 'AWS', identifiers: ['(known after apply from module.database_roles.role_arn)'] }]],
      ['RoleBootstrapReadsTheRolesSecrets', [{ type: 'AWS', identifiers: ['(known after apply from module.database_roles.role_arn)'] }]],
      ['HostsReadTheirSecrets', [{ type: 'AWS', identifiers: ['(known after apply from module.pooler.host_role_arn)'] }]],
    ]);
    expect(statements('data.aws_iam_policy_document.s3_endpoint')).toMatchObject([
      {
        resources: ['arn:aws:s3:::aurora-proxy-kit-packages/pgbouncer/packages.tar'],
        principals: [{ type: '*', identifiers: ['*'] }],
        condition: [{ test: 'StringEquals', variable: 'aws:PrincipalArn', values: ['(known after apply from module.pooler.host_role_arn)'] }],
      },
    ]);
  });

  test('GIVEN both flavours planned offline THEN each module call passes the same inputs: the values the HCL example states, the module outputs the others read', () => {
    const stated = statedInputs(hclPlan, HCL_NAMING(PGBOUNCER_MODULES), COMPLETE_PGBOUNCER);
    const cdktn = moduleInputs(cdktnPlan, CDKTN_NAMING(PGBOUNCER_ROOT_ADDRESSES), stated);
    const hclInputs = moduleInputs(hclPlan, HCL_NAMING(PGBOUNCER_MODULES), stated);
    const hcl = Object.fromEntries(Object.entries(hclInputs).map(([name, inputs]) => [name, { ...inputs, ...stated[name] }]));
    expect(cdktn).toEqual(hcl);
    // The pooler's: its sizing and packages as the example's variables give them, the cluster's outputs, and the
    // hosts' wait for the role bootstrap.
    expect(hcl.pooler).toMatchObject({
      name: 'apk-pgbouncer',
      hosts: 2,
      packages_key: 'pgbouncer/packages.tar',
      reader_endpoints: { reads: ['module.database.reader_instance_endpoints'] },
      hosts_depend_on: { reads: ['module.database_roles.roles'] },
    });
    expect(hcl.reader).toMatchObject({ auth: 'secret', password_secret_arn: { reads: ['module.pooler.consumer_secret_arns'] }, depends_on: ['module.database_roles'] });
  });

  test('GIVEN a state of the app before its Secrets Manager and CloudWatch endpoints had policies THEN plan moves those endpoints and updates them in place', () => {
    // GIVEN the endpoints at their former addresses, one of the host services' each (as the HCL example's migrations.tf moves them)
    const endpointState = (resource: string, service: string) => ({
      mode: 'managed',
      type: 'aws_vpc_endpoint',
      name: resource,
      provider: 'provider["registry.terraform.io/hashicorp/aws"]',
      instances: [{ schema_version: 0, attributes: { id: `vpce-${service}`, service_name: `com.amazonaws.us-east-1.${service}`, vpc_endpoint_type: 'Interface' } }],
    });
    // WHEN planned against it
    const moved = cdktn.movesFrom([endpointState('host_services_secretsmanager', 'secretsmanager'), endpointState('host_services_monitoring', 'monitoring')]);
    // THEN each is moved to its own resource and updated (its policy set), not replaced
    expect(moved).toEqual([
      ['aws_vpc_endpoint.host_services_monitoring', 'aws_vpc_endpoint.monitoring', ['update']],
      ['aws_vpc_endpoint.host_services_secretsmanager', 'aws_vpc_endpoint.secrets_manager', ['update']],
    ]);
  });
});
