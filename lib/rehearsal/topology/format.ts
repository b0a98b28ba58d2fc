/** The topology as text for `rehearse topology` (its `--json` prints the DeployedTopology itself). */
import { settingsFromTopology } from './settings-from-topology';
import type { DeployedTopology, EnvValue } from './types';

export function formatTopology(t: DeployedTopology): string {
  const vpcLabel = (id: string | undefined): string => {
    if (id === undefined) return 'an unknown VPC';
    const vpc = t.vpcs.find((v) => v.id === id);
    return `${vpc?.name ?? id}${vpc?.cidr ? ` (${vpc.cidr})` : ''}`;
  };
  const endpointLabel = (id: string | undefined): string => {
    const e = t.endpoints.find((x) => x.id === id);
    return e === undefined ? 'an unknown endpoint' : `${e.name} (${e.isDefault ? 'default, ' : ''}${e.role})`;
  };
  const envText = (v: EnvValue): string => (v.kind === 'literal' ? v.value : v.kind === 'endpoint-host' ? `<host of ${endpointLabel(v.endpoint)}>` : `<${v.detail}>`);
  const source = t.source.kind === 'cdk-assembly' ? `cloud assembly ${t.source.path} (stacks ${t.source.stacks.join(', ')})` : `Terraform plan ${t.source.path ?? ''}${t.source.terraformVersion ? ` (terraform ${t.source.terraformVersion})` : ''}`;
  const c = t.cluster;
  const p = t.proxy;
  const pool = p.pool;
  const lines = [
    `Deployed topology from ${source}`,
    `Region: ${t.region ?? 'not fixed by the input'}`,
    '',
    `Cluster ${c.identifier ?? c.id}: ${c.engine}${c.engineVersion ? ` ${c.engineVersion}` : ''}, port ${c.port}${c.databaseName ? `, database ${c.databaseName}` : ''}, in ${vpcLabel(c.vpc)}`,
    `  writer  ${c.writer.instanceClass}  ${c.writer.identifier ?? c.writer.id}`,
    ...c.readers.map((r) => `  reader  ${r.instanceClass}  ${r.identifier ?? r.id}`),
    `  ${c.readers.length} reader${c.readers.length === 1 ? '' : 's'}`,
    '',
    `Proxy ${p.name}: ${p.engineFamily}, ${p.requireTls ? 'TLS required' : 'TLS optional'}, auth ${p.authScheme}${p.idleClientTimeoutSeconds !== undefined ? `, idle client timeout ${p.idleClientTimeoutSeconds} s` : ''}, in ${vpcLabel(p.vpc)}`,
    `  pool: MaxConnectionsPercent ${pool.maxConnectionsPercent}, MaxIdleConnectionsPercent ${pool.maxIdleConnectionsPercent}, ConnectionBorrowTimeout ${pool.connectionBorrowTimeoutSeconds} s${pool.initQuery ? `, init query ${JSON.stringify(pool.initQuery)}` : ''}${pool.defaulted.length > 0 ? ` (RDS Proxy defaults for ${pool.defaulted.join(', ')})` : ''}`,
    '  endpoints:',
    ...t.endpoints.map((e) => `    ${e.role.padEnd(10)}  ${e.isDefault ? 'default ' : 'added   '}  ${e.name}  in ${vpcLabel(e.vpc)}`),
    '',
    'VPCs:',
    ...t.vpcs.map((v) => `  ${vpcLabel(v.id)}  ${v.id}`),
    '',
    `Consumers (${t.consumers.length}):`,
    ...t.consumers.flatMap((k) => [
      `  ${k.functionName ?? k.id}  in ${vpcLabel(k.vpc)}  ->  ${endpointLabel(k.endpoint)}`,
      ...Object.entries(k.environment).map(([name, v]) => `    ${name}=${envText(v)}`),
    ]),
    '',
    'Not reproduced locally:',
    ...t.notReproducible.flatMap((n) => [`  - ${n.what}`, `    stand-in: ${n.localStandIn}`]),
  ];
  if (t.notes.length > 0) lines.push('', 'Notes:', ...t.notes.map((n) => `  - ${n}`));
  lines.push('', `Rehearsal settings it implies: ${rehearsalFlags(t)}`);
  return lines.join('\n');
}

/** The `rehearse up` flags of settingsFromTopology, or why there are none. */
function rehearsalFlags(t: DeployedTopology): string {
  try {
    const s = settingsFromTopology(t);
    return `--replicas ${s.replicas} --port ${s.port} --max-connections-percent ${s.pool.maxConnectionsPercent} --max-idle-connections-percent ${s.pool.maxIdleConnectionsPercent} --borrow-timeout ${s.pool.connectionBorrowTimeoutSeconds}`;
  } catch (err) {
    return `none (${err instanceof Error ? err.message : String(err)})`;
  }
}
