#!/usr/bin/env node
/**
 * Prints what a Terraform plan of modules/examples/complete would create: resources per type, and the
 * Optimized Reads sizing from its planned outputs. Reads `terraform show -json <plan>` on stdin.
 *
 *   terraform -chdir=modules/examples/complete show -json plan.tfplan | npx ts-node --transpile-only bin/summarize-terraform-plan.ts
 */
import * as fs from 'fs';

interface Plan {
  resource_changes: Array<{ mode: string; type: string; change: { actions: string[] } }>;
  planned_values?: { outputs?: Record<string, { value?: unknown }> };
}

export function summarizePlan(plan: Plan): string {
  const counts = new Map<string, number>();
  for (const r of plan.resource_changes.filter((c) => c.mode === 'managed' && c.change.actions.includes('create'))) {
    counts.set(r.type, (counts.get(r.type) ?? 0) + 1);
  }
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const width = Math.max(...[...counts.keys()].map((k) => k.length));
  const lines = [`modules/examples/complete plans ${total} resources (offline stand-in provider; nothing is applied):`];
  for (const [type, n] of [...counts].sort(([a], [b]) => a.localeCompare(b))) lines.push(`  ${type.padEnd(width)}  ${n}`);
  const outputs = plan.planned_values?.outputs ?? {};
  const known = ['instance_class', 'engine_version', 'tiered_cache_gib', 'temporary_objects_gib', 'max_connections', 'proxy_max_server_connections'];
  const shown = known.filter((k) => outputs[k]?.value !== undefined).map((k) => `  ${k} = ${JSON.stringify(outputs[k].value)}`);
  if (shown.length > 0) lines.push('outputs known at plan:', ...shown);
  return lines.join('\n');
}

if (require.main === module) {
  process.stdout.write(`${summarizePlan(JSON.parse(fs.readFileSync(0, 'utf8')) as Plan)}\n`);
}
