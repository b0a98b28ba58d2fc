import { INSTANCE_CLASS_CATALOG } from './instance-classes';
import { FLEET_RULES } from './pgbouncer-fleet-rules';
import { POOLER_HOST_RULES, poolerInstanceVcpus } from './pgbouncer-hosts';
import { CLUSTER_RULES } from './rules/cluster';
import { DASHBOARD_RULES } from './rules/dashboard';
import { DEPLOYMENT_RULES } from './rules/deployment';
import { FUNCTION_RULES } from './rules/function';
import { PGBOUNCER_PROXY_RULES } from './rules/pgbouncer-proxy';
import { ENDPOINT_RULES, PROXY_RULES } from './rules/proxy';
import { ROLE_BOOTSTRAP_RULES } from './rules/role-bootstrap';

/**
 * Validation rules, as tables (machinery in rule-table.ts): one row per rule, with its kind, its bounds
 * or values as data, the properties it reads, and where each flavour states it. The CDK constructs run
 * these tables at synth time; bin/generate-terraform.ts renders them into the Terraform modules; the
 * shared vectors in test/vectors/ prove the two agree. A message names the property, the bad value and
 * the fix; CDK names the construct prop, Terraform the module's variable.
 */
export * from './rules/cluster';
export * from './rules/proxy';
export * from './rules/function';
export * from './rules/dashboard';
export * from './rules/deployment';
export * from './rules/role-bootstrap';
export * from './rules/pgbouncer-proxy';
export * from './rules/api-routes';

/** Every table the constructs and the Terraform modules share. */
export const RULE_TABLES = {
  cluster: CLUSTER_RULES,
  proxy: PROXY_RULES,
  endpoint: ENDPOINT_RULES,
  function: FUNCTION_RULES,
  dashboard: DASHBOARD_RULES,
  deployment: DEPLOYMENT_RULES,
  roleBootstrap: ROLE_BOOTSTRAP_RULES,
  fleet: FLEET_RULES,
  poolerHost: POOLER_HOST_RULES,
  pgbouncerProxy: PGBOUNCER_PROXY_RULES,
} as const;

/**
 * How a Terraform module turns one variable into a property its rules read, where the module takes
 * something else than the property (the hosts' instance_type, not their vCPUs): named, so that the
 * generated cdktn constructs can say which one a property is read through. undefined: no value (a
 * rule on the variable itself reports why).
 */
export const PROPERTY_LOOKUPS = {
  /** vCPUs of a pooler instance type, as the module's catalog.tf looks them up. */
  poolerInstanceVcpus: (value: unknown): number | undefined => (typeof value === 'string' ? poolerInstanceVcpus(value) : undefined),
} as const;

export type PropertyLookup = keyof typeof PROPERTY_LOOKUPS;

/** Catalog classes listed for error messages and docs. */
export const OPTIMIZED_READS_CLASS_NAMES = INSTANCE_CLASS_CATALOG.map((s) => s.instanceClass);
