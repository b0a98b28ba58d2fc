/**
 * What a Terraform plan would create (`aurora-proxy-kit plan summary`): resources per type, and the
 * Optimized Reads sizing among its planned outputs. Reads `terraform show -json <planfile>`.
 */

export interface PlanJson {
  readonly resource_changes?: ReadonlyArray<{ readonly mode: string; readonly type: string; readonly change: { readonly actions: ReadonlyArray<string> } }>;
  readonly planned_values?: { readonly outputs?: Record<string, { readonly value?: unknown }> };
}

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

export function summarizePlan(plan: PlanJson): string {
  const counts = new Map<string, number>();
  for (const r of (plan.resource_changes ?? []).filter((c) => c.mode === 'managed' && c.change.actions.includes('create'))) {
    counts.set(r.type, (counts.get(r.type) ?? 0) + 1);
  }
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const width = Math.max(0, ...[...counts.keys()].map((k) => k.length));
  const lines = [`the plan creates ${total} resources (nothing is applied):`];
  for (const [type, n] of [...counts].sort(([a], [b]) => a.localeCompare(b))) lines.push(`  ${type.padEnd(width)}  ${n}`);
  const outputs = plan.planned_values?.outputs ?? {};
  const shown = SIZING_OUTPUTS.filter((k) => outputs[k]?.value !== undefined).map((k) => `  ${k} = ${JSON.stringify(outputs[k]!.value)}`);
  if (shown.length > 0) lines.push('outputs known at plan:', ...shown);
  return lines.join('\n');
}
