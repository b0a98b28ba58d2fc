/** `status`: each instance's role as it answers now, replication as the writer sees it, the pools. */
import { healthCheckerStatus } from './health-status';
import { showPools, type PoolRow } from './pgbouncer';
import { poolerSocketDir, readPoolers } from './poolers';
import { adminTarget } from './postgres';
import { isOurs } from './processes';
import type { RunningRehearsal } from './running';
import { query } from './sql';
import type { FleetStatus, NodeStatus, RehearsalStatus, ReplicationStatus } from './types';
import { healthyTargets } from './hosts/load-balancer';
import { rehearsalProxyEndpoints } from './network/rehearsal-network';
import { readDeploymentFleet } from './pooler-fleet';

async function nodeStatuses(run: RunningRehearsal): Promise<NodeStatus[]> {
  const ctx = run.ctx();
  const procByName = new Map(run.allProcesses().map((p) => [p.name, p]));
  return Promise.all(
    run.state.nodes.map(async (n): Promise<NodeStatus> => {
      const proc = procByName.get(n.name);
      let role: NodeStatus['role'] = 'down';
      try {
        const rows = await query<{ r: boolean }>(adminTarget(ctx, n), 'SELECT pg_is_in_recovery() AS r', undefined, 1500);
        role = rows[0]?.r ? 'replica' : 'writer';
      } catch {
        // down
      }
      return { name: n.name, address: n.address, port: n.port, role, pid: proc !== undefined && isOurs(proc) ? proc.pid : undefined };
    }),
  );
}

async function replicationFrom(run: RunningRehearsal, writer: NodeStatus | undefined): Promise<ReplicationStatus[]> {
  if (writer === undefined) return [];
  return query<ReplicationStatus>(
    adminTarget(run.ctx(), writer),
    `SELECT application_name, host(client_addr) AS client_addr, state, sync_state,
            COALESCE(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn), 0)::bigint::int AS replay_lag_bytes
     FROM pg_stat_replication ORDER BY application_name`,
    undefined,
    1500,
  ).catch(() => []);
}

/** SHOW POOLS of every process of the endpoint, through each one's Unix socket. */
async function pools(run: RunningRehearsal, which: 'readWrite' | 'readOnly'): Promise<ReadonlyArray<PoolRow> | string> {
  const port = run.state.pgbouncer[which].listenPort;
  const processes = readPoolers(run.layout).filter((p) => p.pooler.endpoint === which);
  const answers = await Promise.all(
    processes.map((p) => showPools(p.name, poolerSocketDir(run.layout, run.state.pgbouncer, p), port, run.secrets).catch((err: Error) => `${p.name}: ${err.message}`)),
  );
  const failures = answers.filter((a): a is string => typeof a === 'string');
  return failures.length > 0 ? `unavailable: ${failures.join('; ')}` : answers.flatMap((a) => a as PoolRow[]);
}

export async function readStatus(run: RunningRehearsal): Promise<RehearsalStatus> {
  const nodes = await nodeStatuses(run);
  const writer = nodes.find((n) => n.role === 'writer' && n.name === run.state.writerName) ?? nodes.find((n) => n.role === 'writer');
  return {
    workDir: run.layout.workDir,
    phase: run.state.phase,
    settings: run.state.settings,
    ...(run.state.deployment !== undefined ? { deployment: run.state.deployment } : {}),
    endpoints: run.endpoints,
    poolSizes: run.poolSizes,
    processes: run.allProcesses().map((p) => ({ ...p, alive: isOurs(p) })),
    nodes,
    replication: await replicationFrom(run, writer),
    pools: { readWrite: await pools(run, 'readWrite'), readOnly: await pools(run, 'readOnly') },
    health: run.health(),
    healthChecker: healthCheckerStatus(run),
    ...(run.state.deployment?.fleet !== undefined ? { fleet: await fleetStatus(run) } : {}),
  };
}

async function fleetStatus(run: RunningRehearsal): Promise<FleetStatus> {
  const fleet = readDeploymentFleet(run)!;
  let healthy: FleetStatus['loadBalancer']['healthy'];
  try {
    healthy = await healthyTargets(fleet.loadBalancer);
  } catch (err) {
    healthy = `unreadable: ${(err as Error).message}`;
  }
  return {
    hosts: fleet.hosts.map((h) => ({ name: h.name, address: h.host, pid: h.booted.container.pid, alive: isOurs(h.booted.container) })),
    loadBalancer: { address: fleet.loadBalancer.address, healthy },
    endpoints: rehearsalProxyEndpoints(run.rehearsed)
      .filter((e) => !e.isDefault)
      .map((e) => ({ name: e.name, role: e.role, vpc: e.vpc, host: e.host, address: e.address, port: fleet.loadBalancer.ports[e.role] })),
  };
}
