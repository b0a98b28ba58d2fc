/** Human-readable `rehearse status`: endpoints, processes, roles, replication, PgBouncer pools. */
import { WorkDirLayout } from './layout';
import type { FleetStatus, RehearsalStatus } from './types';

function table(header: string[], rows: Array<Array<string | number>>): string[] {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells.map((r) => `  ${r.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ')}`.trimEnd());
}

export function formatStatus(s: RehearsalStatus): string {
  const e = s.endpoints;
  const endpointRows: Array<[string, string]> = [
    ['read/write (PgBouncer)', `${e.readWrite.host}:${e.readWrite.port}  pool ${s.poolSizes.readWrite} on the writer, over ${s.settings.poolerProcesses} processes`],
    ['read-only (PgBouncer)', `${e.readOnly.host}:${e.readOnly.port}  pool ${s.poolSizes.readOnly} on each replica, over ${s.settings.poolerProcesses} processes per replica`],
    ...(e.haproxy ? [['reader (HAProxy, no pooling)', `${e.haproxy.host}:${e.haproxy.port}`] as [string, string]] : []),
    ...(e.pgpool ? [['read/write split (pgpool-II)', `${e.pgpool.host}:${e.pgpool.port}`] as [string, string]] : []),
  ];
  const lines = [
    `rehearsal in ${s.workDir} (${s.phase}); ${s.settings.replicas} replicas, ${s.settings.synchronous ? 'synchronous (ANY 1) ' : 'asynchronous '}replication`,
    `connect: user ${e.readWrite.user}, database ${e.readWrite.database}, TLS verify-full with ${e.readWrite.caFile} (password in ${new WorkDirLayout(s.workDir).secretsFile})`,
    '',
    'endpoints',
    ...table(['endpoint', 'address'], endpointRows),
    '',
    ...(s.fleet === undefined ? [] : formatFleet(s.fleet)),
    'instances',
    ...table(['name', 'address', 'role', 'pid'], s.nodes.map((n) => [n.name, `${n.address}:${n.port}`, n.role, n.pid ?? '-'])),
    '',
    'replication (from the writer)',
    ...(s.replication.length === 0
      ? ['  (none)']
      : table(['replica', 'from', 'state', 'sync', 'replay lag (bytes)'], s.replication.map((r) => [r.application_name, r.client_addr, r.state, r.sync_state, r.replay_lag_bytes]))),
    '',
    'processes',
    ...table(['name', 'pid', 'state', 'log'], s.processes.map((p) => [p.name, p.pid, p.alive ? 'running' : 'gone', p.logFile])),
    '',
  ];
  for (const which of ['readWrite', 'readOnly'] as const) {
    const pools = s.pools[which];
    lines.push(`SHOW POOLS (${which === 'readWrite' ? 'read/write' : 'read-only'})`);
    if (typeof pools === 'string') lines.push(`  ${pools}`);
    else lines.push(...table(['process', 'database', 'user', 'cl_active', 'cl_waiting', 'sv_active', 'sv_idle', 'sv_used', 'sv_login', 'maxwait'], pools.map((p) => [p.pooler, p.database, p.user, p.cl_active, p.cl_waiting, p.sv_active, p.sv_idle, p.sv_used, p.sv_login, p.maxwait])));
    lines.push('');
  }
  lines.push(...formatHealth(s));
  return lines.join('\n');
}

/** The health checker's last report, and loudly, when it is not current any more. */
function formatHealth(s: RehearsalStatus): string[] {
  const h = s.health;
  const c = s.healthChecker;
  const supervision = `supervisor ${c.supervisorPid ?? '-'} ${c.supervisorRunning ? 'running' : 'NOT RUNNING'}, ${c.restarts} restarts`;
  const lines = [
    h === undefined
      ? `health checker: no report yet (${supervision})`
      : `health checker (pid ${h.pid}, ${h.checkedAt}; ${supervision}): writer ${h.writer ?? 'none'}; read/write -> ${h.readWriteHosts.join(',')}; read-only -> ${h.readOnlyHosts.join(',')}; ${h.reloads} reloads; ${c.poolerRestarts} PgBouncer restarts${h.lastError ? `; last error: ${h.lastError}` : ''}`,
  ];
  if (c.state === 'stale') lines.push(`  STALE health report: the endpoints are not being re-pointed (${(c.problems ?? []).join('; ')})`);
  else if (c.problems !== undefined) lines.push(`  warning: ${c.problems.join('; ')}`);
  return lines;
}

/** A PgBouncer engine deployment's fleet: where its consumers connect, and the hosts behind the load balancer. */
function formatFleet(f: FleetStatus): string[] {
  const healthy = typeof f.loadBalancer.healthy === 'string' ? f.loadBalancer.healthy : Object.entries(f.loadBalancer.healthy).map(([role, hosts]) => `${role} ${hosts.join(', ') || 'none'}`).join('; ');
  return [
    'PgBouncer engine fleet (the deployment\'s consumers connect here)',
    ...table(['interface endpoint', 'role', 'VPC', 'address'], f.endpoints.map((e) => [e.host, e.role, e.vpc, `${e.address}:${e.port}`])),
    ...table(['host', 'address', 'pid', 'state'], f.hosts.map((h) => [h.name, h.address, h.pid, h.alive ? 'running' : 'gone'])),
    `  load balancer stand-in ${f.loadBalancer.address}; healthy targets: ${healthy}`,
    '',
  ];
}
