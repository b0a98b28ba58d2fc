import { PROPERTY_LOOKUPS, RULE_TABLES, type PropertyLookup, type Rule, type TerraformUse, terraformUse, terraformUses } from '../model';
import { GRAVITON_SIZE_VCPUS, POOLER_INSTANCE_FAMILIES } from '../model/pgbouncer-hosts';
import { POOL_VARIABLES } from './pool-variables';

/**
 * The Terraform modules the generator writes into, and what it must know about each: its rules (the
 * rows of lib/model whose `terraform.module` names it), its one property-to-variable table (from those
 * rows), the variables every test run needs, and where a rule is not a variable's validation.
 */

type AnyRule = Rule<Record<string, unknown>>;
type Projected<R> = R extends unknown ? Omit<R, 'terraform'> & { readonly terraform: TerraformUse } : never;

/** A rule as one module states it: `terraform` is that module's use (its names) only. */
export type ModuleRule = Projected<AnyRule>;

export interface ModuleSpec {
  /** Directory under modules/. */
  readonly module: string;
  /** Values of the required variables, for the vector runs. */
  readonly fixture: Readonly<Record<string, unknown>>;
  /**
   * Rule id -> the object whose `precondition` states it, for rules that span variables: a resource
   * address in main.tf, or an address and the file that holds it (an `output.` address: the output's own).
   */
  readonly preconditions?: Readonly<Record<string, string | PreconditionSite>>;
  /** HCL name of a property inside a collection variable (`endpoints key`) -> the `for` clause over the elements and the element's value. */
  readonly collections?: Readonly<Record<string, { readonly each: string; readonly value: string }>>;
  /** Variables that rules read as their number of elements (a list of reader endpoints stands for the readers). */
  readonly lengths?: ReadonlyArray<string>;
  /**
   * Model properties the module derives from its variables rather than takes as one (the hosts' vCPUs
   * from instance_type, the fleet's pool from the three pool variables).
   */
  readonly derived?: Readonly<Record<string, DerivedProperty>>;
}

/** Where a precondition is: the checkable object (what `expect_failures` names) and the file holding it. */
export interface PreconditionSite {
  readonly address: string;
  readonly file: string;
}

/**
 * A model property the module derives from its variables rather than takes as one: a lookup of the model
 * applied to one variable (the hosts' vCPUs from instance_type; `variables` gives a variable that makes a
 * value, for the vectors), or an object of several variables by attribute (the fleet's pool settings).
 * Declared as data, so the cdktn constructs' generated rule reads say the same (lib/terraform/cdktn-bindings.ts).
 */
export type DerivedProperty =
  | { readonly variable: string; readonly lookup: PropertyLookup; readonly variables: (value: unknown) => Record<string, unknown> }
  | { readonly object: Readonly<Record<string, string>> };

/** A derived property's value for the module's variables. */
export function derivedValue(derived: DerivedProperty, variables: Readonly<Record<string, unknown>>): unknown {
  if ('object' in derived) return Object.fromEntries(Object.entries(derived.object).map(([attribute, name]) => [attribute, variables[name]]));
  return PROPERTY_LOOKUPS[derived.lookup](variables[derived.variable]);
}

/** Variables that give a derived property `value`. */
export function derivedVariables(derived: DerivedProperty, value: unknown): Record<string, unknown> {
  if ('object' in derived) return Object.fromEntries(Object.entries(derived.object).map(([attribute, name]) => [name, (value as Record<string, unknown>)[attribute]]));
  return derived.variables(value);
}

/** A Graviton type of the pooler catalog with `vcpus` vCPUs. */
function poolerInstanceType(vcpus: unknown): string {
  const size = Object.keys(GRAVITON_SIZE_VCPUS).find((s) => GRAVITON_SIZE_VCPUS[s] === vcpus);
  if (size === undefined) throw new Error(`no pooler instance type has ${String(vcpus)} vCPUs`);
  return `${POOLER_INSTANCE_FAMILIES[0]}.${size}`;
}

export const PROXY_ENDPOINT = { vpc_id: 'vpc-consumer', subnet_ids: ['subnet-c1', 'subnet-c2'] };

export const MODULE_SPECS: ReadonlyArray<ModuleSpec> = [
  {
    module: 'aurora-optimized-reads',
    fixture: { cluster_identifier: 'vectors', vpc_id: 'vpc-data', subnet_ids: ['subnet-d1', 'subnet-d2'] },
    preconditions: { 'cluster-kms-key': 'aws_rds_cluster.this' },
  },
  {
    module: 'rds-proxy',
    fixture: {
      name: 'vectors',
      cluster_identifier: 'vectors',
      cluster_security_group_id: 'sg-cluster',
      cluster_resource_id: 'cluster-VECTORS',
      vpc_id: 'vpc-data',
      subnet_ids: ['subnet-d1', 'subnet-d2'],
      readers: 1,
    },
    preconditions: { 'idle-within-max': 'aws_db_proxy_default_target_group.this', 'read-only-endpoint-readers': 'aws_db_proxy_endpoint.this' },
    collections: {
      'endpoints key': { each: 'n in keys(var.endpoints)', value: 'n' },
      'endpoints target_role': { each: 'e in values(var.endpoints)', value: 'e.target_role' },
    },
  },
  {
    module: 'pgbouncer-proxy',
    fixture: {
      name: 'vectors',
      vpc_id: 'vpc-data',
      subnet_ids: ['subnet-d1', 'subnet-d2'],
      cluster_security_group_id: 'sg-cluster',
      cluster_endpoint: 'vectors.cluster-abc.us-east-1.rds.amazonaws.com',
      reader_endpoints: ['vectors-reader-1.abc.us-east-1.rds.amazonaws.com'],
      writer_instance_endpoint: 'vectors-writer.abc.us-east-1.rds.amazonaws.com',
      database_name: 'app',
      max_connections: 1000,
      image_id: 'ami-0123456789abcdef0',
      packages_bucket: 'vectors-packages',
      packages_key: 'pgbouncer/packages.tar',
      tls_secret_arn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:vectors-tls',
      // A certificate made outside the module comes with its CA (the kit CA's resources have tests of their own).
      tls_ca_certificate: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----',
      // Where the module's own certificate function would come from, for the vectors that leave tls_secret_arn out.
      certificate_function: { s3_bucket: 'vectors-lambda', s3_key: 'pooler-certificate.zip' },
      // The hosts' route to AWS's APIs, so that only the route vectors meet the route rule.
      subnets_have_egress: true,
    },
    preconditions: {
      'idle-within-max': 'aws_launch_template.this',
      'fleet-budget-split': 'aws_launch_template.this',
      'fleet-session-budget-split': 'aws_launch_template.this',
      'pooler-s3-egress-vpc-cidr': 'aws_security_group.hosts',
      // Consumers read the CA from this output: with a secret of the user's and no CA it would be null.
      'pooler-tls-certificate-pair': { address: 'output.client_ca_certificate', file: 'outputs.tf' },
      // The function's policy exists only without tls_secret_arn (count), so its precondition is checked only then.
      'pooler-certificate-function': { address: 'data.aws_iam_policy_document.certificate', file: 'certificate.tf' },
      // The hosts call these APIs from their first boot on.
      'pooler-api-route': 'aws_launch_template.this',
    },
    collections: {
      'consumer_users item': { each: 'u in var.consumer_users', value: 'u' },
      'endpoints role': { each: 'e in values(var.endpoints)', value: 'e.role' },
      'endpoints pool_mode': { each: 'e in values(var.endpoints)', value: 'e.pool_mode' },
      'endpoints key': { each: 'n in keys(var.endpoints)', value: 'n' },
    },
    lengths: ['reader_endpoints'],
    derived: {
      vcpusPerHost: { variable: 'instance_type', lookup: 'poolerInstanceVcpus', variables: (vcpus) => ({ instance_type: poolerInstanceType(vcpus) }) },
      pool: { object: POOL_VARIABLES },
    },
  },
  {
    module: 'lambda-consumer',
    fixture: {
      function_name: 'vectors',
      filename: 'vectors.zip',
      source_code_hash: 'vectors',
      vpc_id: 'vpc-consumer',
      subnet_ids: ['subnet-c1', 'subnet-c2'],
      endpoint: {
        endpoint: 'vectors-ro.endpoint.proxy-vectors.us-east-1.rds.amazonaws.com',
        target_role: 'READ_ONLY',
        security_group_id: 'sg-endpoint',
        proxy_default_endpoint: 'vectors.proxy-vectors.us-east-1.rds.amazonaws.com',
        is_proxy_default_endpoint: false,
      },
      connect_arn_prefix: 'arn:aws:rds-db:us-east-1:123456789012:dbuser:prx-vectors/',
      db_user: 'postgres',
      database_name: 'app',
      // A consumer with auth secret reads its secret: a route to Secrets Manager, so that only the route vectors meet the route rule.
      subnets_have_egress: true,
    },
    // The function is internal/handler-function's: its rules that span variables sit on the policy the module grants it.
    preconditions: {
      'function-kms-key': 'data.aws_iam_policy_document.function',
      'function-code-source': 'data.aws_iam_policy_document.function',
      'consumer-credential': 'data.aws_iam_policy_document.function',
      'consumer-api-route': 'data.aws_iam_policy_document.function',
    },
  },
  {
    module: 'database-role-bootstrap',
    fixture: {
      function_name: 'vectors-database-roles',
      filename: 'vectors.zip',
      source_code_hash: 'vectors',
      roles: [{ name: 'app_reader', access: 'READ_ONLY' }],
      cluster_identifier: 'vectors',
      cluster_endpoint: 'vectors.cluster-abc.us-east-1.rds.amazonaws.com',
      cluster_security_group_id: 'sg-cluster',
      database_name: 'app',
      master_user_secret_arn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:rds!cluster-vectors',
      secret_kms_key_arn: 'arn:aws:kms:us-east-1:123456789012:key/vectors',
      vpc_id: 'vpc-data',
      subnet_ids: ['subnet-d1', 'subnet-d2'],
      kms_key_arn: 'arn:aws:kms:us-east-1:123456789012:key/logs',
      subnets_have_egress: true,
    },
    // As lambda-consumer's: on the policy the module grants internal/handler-function's function.
    preconditions: { 'role-bootstrap-code-source': 'data.aws_iam_policy_document.function', 'role-bootstrap-api-route': 'data.aws_iam_policy_document.function' },
  },
  {
    module: 'dashboard',
    fixture: { dashboard_name: 'vectors', instance_identifiers: ['vectors-writer', 'vectors-reader-1'], proxy_name: 'vectors', functions: { Reader: 'vectors-reader' } },
  },
  {
    module: 'examples/complete',
    fixture: {},
  },
];

/** The reusable modules (each with its README); examples hold rules too, e.g. the reference deployment's. */
export const MODULES = MODULE_SPECS.map((m) => m.module).filter((m) => !m.startsWith('examples/'));

/** The examples under modules/examples/, each a root configuration with a README. */
export const EXAMPLES: ReadonlyArray<string> = ['examples/complete', 'examples/complete-pgbouncer', 'examples/minimal', 'examples/split-consumers'];

/** Helpers of the modules, under modules/internal/: no rules of their own, a README with generated tables each. */
export const INTERNAL_MODULES: ReadonlyArray<string> = ['internal/logs-kms-policy', 'internal/cluster-instances', 'internal/handler-function'];

/** The hashicorp/aws version every module and example requires at least. */
export const AWS_PROVIDER_BASE_VERSION = '6.0';

/**
 * Arguments of hashicorp/aws newer than AWS_PROVIDER_BASE_VERSION, with the release that added each: a module
 * that sets one (or calls a module that does) requires that release (AWS fact aws-provider-db-proxy-default-auth-scheme).
 */
export const PROVIDER_ARGUMENT_FLOORS: ReadonlyArray<{ readonly resource: string; readonly argument: string; readonly version: string }> = [
  { resource: 'aws_db_proxy', argument: 'default_auth_scheme', version: '6.15' },
];

export function moduleSpec(module: string): ModuleSpec {
  const spec = MODULE_SPECS.find((m) => m.module === module);
  if (!spec) throw new Error(`no Terraform module ${module}`);
  return spec;
}

const ALL_RULES = Object.values(RULE_TABLES).flat() as AnyRule[];

/** The model's rules a module states, in table order, each with the module's names. */
export function rulesOf(module: string): ModuleRule[] {
  return ALL_RULES.flatMap((r) => {
    const use = terraformUse(r, module);
    return use ? [{ ...r, terraform: use } as ModuleRule] : [];
  });
}

/** Where `module` states `ruleId` as a precondition, if it does: the checkable object and its file. */
export function preconditionOf(module: string, ruleId: string): PreconditionSite | undefined {
  const site = moduleSpec(module).preconditions?.[ruleId];
  return typeof site === 'string' ? { address: site, file: 'main.tf' } : site;
}

/** The modules that state `ruleId` (one, or several that share an input). */
export function modulesOfRule(ruleId: string): string[] {
  const rule = ALL_RULES.find((r) => r.id === ruleId);
  if (!rule) throw new Error(`no rule ${ruleId} in lib/model`);
  return terraformUses(rule).map((u) => u.module);
}

/** The first module that states `ruleId`. */
export function moduleOfRule(ruleId: string): string {
  const [module] = modulesOfRule(ruleId);
  if (module === undefined) throw new Error(`no Terraform module states rule ${ruleId}`);
  return module;
}

/** The module's one property-to-variable table: model property -> the HCL name its messages use. */
export function propertyNames(module: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rule of rulesOf(module)) {
    for (const [property, name] of Object.entries(rule.terraform.names)) {
      if (out[property] !== undefined && out[property] !== name) throw new Error(`${module}: ${property} is named both ${out[property]} and ${name}`);
      out[property] = name;
    }
  }
  return out;
}

/** The variable an HCL name belongs to: `endpoint.target_role` -> endpoint, `endpoints key` -> endpoints. */
export function variableOf(name: string): string {
  return name.split(/[ .]/)[0];
}

/** The HCL expression of a plain name (`var.readers`, `var.endpoint.target_role`); collections have none. */
export function expressionOf(name: string): string | undefined {
  return name.includes(' ') ? undefined : `var.${name}`;
}

/** The variable a rule belongs to (its first property's), where the README lists it. */
export function ruleVariable(rule: ModuleRule): string {
  return variableOf(rule.terraform.names[rule.properties[0]]);
}
