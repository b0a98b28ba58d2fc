import { RULE_TABLES, type Rule } from '../model';

/**
 * The Terraform modules the generator writes into, and what it must know about each: its rules (the
 * rows of lib/model whose `terraform.module` names it), its one property-to-variable table (from those
 * rows), the variables every test run needs, and where a rule is not a variable's validation.
 */

export type ModuleRule = Rule<Record<string, unknown>>;

export interface ModuleSpec {
  /** Directory under modules/. */
  readonly module: string;
  /** Values of the required variables, for the vector runs. */
  readonly fixture: Readonly<Record<string, unknown>>;
  /** Rule id -> the resource whose `precondition` states it (in main.tf), for rules that span variables. */
  readonly preconditions?: Readonly<Record<string, string>>;
  /** Rule id -> how the rule reaches values inside a collection variable: the `for` clause and the element's value. */
  readonly collections?: Readonly<Record<string, { readonly each: string; readonly value: string }>>;
}

export const PROXY_ENDPOINT = { vpc_id: 'vpc-consumer', subnet_ids: ['subnet-c1', 'subnet-c2'] };

export const MODULE_SPECS: ReadonlyArray<ModuleSpec> = [
  {
    module: 'aurora-optimized-reads',
    fixture: { cluster_identifier: 'vectors', vpc_id: 'vpc-data', subnet_ids: ['subnet-d1', 'subnet-d2'] },
    preconditions: { 'cluster-kms-key': 'aws_rds_cluster.this' },
  },
  {
    module: 'pooling-proxy',
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
      'endpoint-name': { each: 'n in keys(var.endpoints)', value: 'n' },
      'endpoint-target-role': { each: 'e in values(var.endpoints)', value: 'e.target_role' },
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
    },
    preconditions: { 'function-kms-key': 'aws_lambda_function.this', 'function-code-source': 'aws_lambda_function.this' },
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
    },
    preconditions: { 'role-bootstrap-code-source': 'aws_lambda_function.this' },
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
export const EXAMPLES: ReadonlyArray<string> = ['examples/complete', 'examples/complete-pgbouncer', 'examples/minimal'];

/**
 * Modules whose rules are hand-written validations for now (their model tables have no TerraformUse
 * rows yet): a README with generated tables each, no vector file, no cdktn binding.
 */
export const HAND_VALIDATED_MODULES: ReadonlyArray<string> = ['pgbouncer-proxy'];

/** Helpers of the modules, under modules/internal/: no rules of their own, a README with generated tables each. */
export const INTERNAL_MODULES: ReadonlyArray<string> = ['internal/logs-kms-policy', 'internal/cluster-instances'];

export function moduleSpec(module: string): ModuleSpec {
  const spec = MODULE_SPECS.find((m) => m.module === module);
  if (!spec) throw new Error(`no Terraform module ${module}`);
  return spec;
}

const ALL_RULES = Object.values(RULE_TABLES).flat() as ModuleRule[];

/** The model's rules a module states, in table order. */
export function rulesOf(module: string): ModuleRule[] {
  return ALL_RULES.filter((r) => r.terraform?.module === module);
}

/** The module whose rules include `ruleId`. */
export function moduleOfRule(ruleId: string): string {
  const rule = ALL_RULES.find((r) => r.id === ruleId);
  if (!rule?.terraform) throw new Error(`no Terraform module states rule ${ruleId}`);
  return rule.terraform.module;
}

/** The module's one property-to-variable table: model property -> the HCL name its messages use. */
export function propertyNames(module: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rule of rulesOf(module)) {
    for (const [property, name] of Object.entries(rule.terraform!.names)) {
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
  return variableOf(rule.terraform!.names[rule.properties[0]]);
}
