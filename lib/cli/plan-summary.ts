/**
 * What a Terraform plan would create (`aurora-proxy-kit plan summary`): resources per type, the
 * Optimized Reads sizing among its planned outputs, and the monthly cost estimate of what it creates
 * (the same estimate `synth summary` prints). Reads `terraform show -json <planfile>`.
 */
import { estimateCost, formatCostEstimate } from '../model/cost-estimate';
import type { DeploymentInventory } from '../model/cost-inventory';
import type { CostEstimateOptions } from '../model/cost-pricing';
import type { PlanJson } from '../terraform/plan-json';

type Attributes = Readonly<Record<string, unknown>>;

/** The input is not a plan's JSON. */
export class PlanInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PlanInputError';
  }
}

/** The outputs the kit's examples plan with known values (the sizing), in the order shown. */
const SIZING_OUTPUTS = ['instance_class', 'engine_version', 'tiered_cache_gib', 'temporary_objects_gib', 'max_connections', 'proxy_max_server_connections', 'reserved_connections'];

/** Parses `terraform show -json` output; `source` names it in the error. */
export function parsePlan(text: string, source: string): PlanJson {
  let plan: unknown;
  try {
    plan = JSON.parse(text);
  } catch (err) {
    throw new PlanInputError(`${source} is not JSON (${(err as Error).message}): pass \`terraform show -json <planfile>\`, not the binary plan file`);
  }
  if (typeof plan !== 'object' || plan === null || !('format_version' in plan || 'resource_changes' in plan)) {
    throw new PlanInputError(`${source} is not a plan's JSON (no resource_changes): pass \`terraform show -json <planfile>\``);
  }
  return plan as PlanJson;
}

/** The plan's Region: the aws provider's constant region, else a `region` variable. */
function planRegion(plan: PlanJson): string | undefined {
  const provider = Object.values(plan.configuration?.provider_config ?? {}).find((p) => p.name === 'aws');
  const region = provider?.expressions?.region?.constant_value ?? plan.variables?.region?.value;
  return typeof region === 'string' ? region : undefined;
}

/** What the plan creates that is billed by the hour (cost-estimate.ts prices it). */
export function inventoryOfPlan(plan: PlanJson): DeploymentInventory {
  const created = (plan.resource_changes ?? []).filter((c) => c.mode === 'managed' && c.change.actions.includes('create'));
  const ofType = (type: string): Attributes[] => created.filter((c) => c.type === type).map((c) => c.change.after ?? {});
  const unknownOf = (type: string): Attributes[] => created.filter((c) => c.type === type).map((c) => c.change.after_unknown ?? {});
  const outputClass = plan.planned_values?.outputs?.instance_class?.value;
  const cluster = ofType('aws_rds_cluster')[0];
  const templates = ofType('aws_launch_template');
  const groups = ofType('aws_autoscaling_group');
  const instanceType = templates.map((t) => t.instance_type).find((t): t is string => typeof t === 'string');
  const hosts = groups.reduce((sum, g) => sum + Number(g.desired_capacity ?? g.min_size ?? 0), 0);
  const endpointUnknowns = unknownOf('aws_vpc_endpoint');
  return {
    region: planRegion(plan),
    // The kit's cluster module always sets aurora-iopt1; a plan that hides it is read as that.
    storageType: cluster ? String(cluster.storage_type ?? 'aurora-iopt1') : undefined,
    instanceClasses: ofType('aws_rds_cluster_instance').map((i) => String(i.instance_class ?? outputClass ?? 'unknown')),
    rdsProxies: ofType('aws_db_proxy').length,
    rdsProxyEndpoints: ofType('aws_db_proxy_endpoint').length,
    fleet: groups.length > 0 && instanceType ? { hosts, instanceType } : undefined,
    networkLoadBalancers: ofType('aws_lb').filter((lb) => lb.load_balancer_type === 'network').length,
    interfaceEndpoints: ofType('aws_vpc_endpoint')
      .map((e, i) => ({ e, unknown: endpointUnknowns[i]! }))
      .filter(({ e }) => e.vpc_endpoint_type === 'Interface')
      .map(({ e, unknown }) => {
        const name = typeof e.service_name === 'string' ? e.service_name : undefined;
        // An endpoint service's name (com.amazonaws.vpce.<region>.vpce-svc-...) is unknown until apply; AWS services' names are known.
        const pooler = name === undefined || name.includes('.vpce.');
        const subnets = Array.isArray(e.subnet_ids) ? e.subnet_ids.length : Array.isArray(unknown.subnet_ids) ? unknown.subnet_ids.length : 0;
        return { service: pooler ? 'PgBouncer' : name!.split('.').pop()!, pooler, azs: subnets || undefined };
      }),
  };
}

/** Resources the plan creates (replacements too), per type. */
export function planCounts(plan: PlanJson): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of (plan.resource_changes ?? []).filter((c) => c.mode === 'managed' && c.change.actions.includes('create'))) {
    counts.set(r.type, (counts.get(r.type) ?? 0) + 1);
  }
  return counts;
}

export function summarizePlan(plan: PlanJson, cost: CostEstimateOptions = {}): string {
  const counts = planCounts(plan);
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const width = Math.max(0, ...[...counts.keys()].map((k) => k.length));
  const lines = [`the plan creates ${total} resources (nothing is applied):`];
  for (const [type, n] of [...counts].sort(([a], [b]) => a.localeCompare(b))) lines.push(`  ${type.padEnd(width)}  ${n}`);
  const outputs = plan.planned_values?.outputs ?? {};
  const shown = SIZING_OUTPUTS.filter((k) => outputs[k]?.value !== undefined).map((k) => `  ${k} = ${JSON.stringify(outputs[k]!.value)}`);
  if (shown.length > 0) lines.push('outputs known at plan:', ...shown);
  const inventory = inventoryOfPlan(plan);
  if (inventory.instanceClasses.length + inventory.rdsProxies + inventory.networkLoadBalancers + inventory.interfaceEndpoints.length > 0) {
    lines.push(formatCostEstimate(estimateCost(inventory, cost), ''));
  }
  return lines.join('\n');
}
