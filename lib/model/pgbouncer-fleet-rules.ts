/**
 * The PgBouncer engine's fleet rules (FLEET_RULES): hosts, vCPUs, readers, the NLB's TCP idle timeout, the
 * session pools' share, and the budget splits over every process of the fleet (pgbouncer-fleet.ts), with the
 * Terraform module's names beside each row.
 */
import { DEFAULT_SESSION_MAX_CONNECTIONS_PERCENT, processesPerReader, sessionShare, withSessionDefaults, type PoolerFleetSpec } from './pgbouncer-fleet';
import { custom, integerRange, runRules, type Rule } from './rule-table';
import { poolSizing, RESERVED_CONNECTIONS } from './sizing';

/** The Terraform module of the engine (modules/pgbouncer-proxy). */
const FLEET_MODULE = 'pgbouncer-proxy';

export const FLEET_RULES: ReadonlyArray<Rule<PoolerFleetSpec>> = [
  integerRange({
    id: 'fleet-hosts',
    properties: ['hosts'],
    terraform: { module: FLEET_MODULE, names: { hosts: 'hosts' } },
    min: 2,
    max: 20,
    fix: 'run at least two hosts, in two Availability Zones, so one can be replaced while the other serves',
  }),
  integerRange({
    id: 'fleet-vcpus',
    properties: ['vcpusPerHost'],
    notInTerraform: 'the module takes no vCPU count: it looks up instance_type\'s vCPUs in the catalog (1 to 64), and pooler-instance-known refuses a type outside it',
    min: 1,
    max: 64,
    fix: 'use the vCPUs of the hosts\' instance type',
  }),
  integerRange({
    id: 'fleet-readers',
    properties: ['readers'],
    // The module takes each reader's endpoint; the rule counts them.
    terraform: { module: FLEET_MODULE, names: { readers: 'reader_endpoints' } },
    min: 1,
    max: 15,
    fix: 'the read-only listener needs at least one reader; Aurora allows 15',
  }),
  integerRange({
    id: 'fleet-tcp-idle-timeout',
    properties: ['tcpIdleTimeoutSeconds'],
    terraform: { module: FLEET_MODULE, names: { tcpIdleTimeoutSeconds: 'tcp_idle_timeout_seconds' } },
    min: 60,
    max: 6000,
    fix: 'the NLB accepts a TCP idle timeout of 60 to 6000 seconds',
    aws: {
      constraint: 'A Network Load Balancer TCP listener\'s tcp.idle_timeout.seconds is 60 to 6000 seconds (default 350)',
      sources: ['https://docs.aws.amazon.com/elasticloadbalancing/latest/network/update-idle-timeout.html', 'https://docs.aws.amazon.com/elasticloadbalancing/latest/APIReference/API_ListenerAttribute.html'],
    },
  }),
  integerRange({
    id: 'fleet-session-max-connections-percent',
    properties: ['sessionMaxConnectionsPercent'],
    terraform: { module: FLEET_MODULE, names: { sessionMaxConnectionsPercent: 'session_max_connections_percent' } },
    min: 1,
    max: 99,
    fix: 'the session pools take 1 to 99 percent of each target\'s budget, the transaction pools keep the rest',
  }),
  custom({
    id: 'fleet-budget-split',
    properties: ['hosts', 'vcpusPerHost', 'readers', 'maxConnections', 'pool'],
    // What the message names: the pool's share that decides the budget.
    names: { pool: 'maxConnectionsPercent' },
    terraform: {
      module: FLEET_MODULE,
      names: { hosts: 'hosts', vcpusPerHost: 'instance_type', readers: 'reader_endpoints', maxConnections: 'max_connections', pool: 'max_connections_percent' },
    },
    summary: 'every process of the fleet gets at least one server connection of its target\'s budget, which leaves the reserved connections (a precondition)',
    check: (s, n) => {
      if ([s.hosts, s.vcpusPerHost, s.readers].some((v) => !Number.isInteger(v) || v < 1)) return undefined; // reported by the rows above
      const budget = poolSizing(s.maxConnections, s.pool).maxServerConnections;
      const need = s.hosts * Math.max(s.vcpusPerHost, processesPerReader(s));
      if (budget >= need) return undefined;
      return `${n('hosts')} ${s.hosts} x ${Math.max(s.vcpusPerHost, processesPerReader(s))} processes per target need ${need} server connections of a budget of ${budget} (${n('pool')} ${s.pool.maxConnectionsPercent} of max_connections ${s.maxConnections}, never into the ${RESERVED_CONNECTIONS} connections reserved for rdsadmin, AWS's automation, the master user and the role bootstrap): use fewer hosts or a smaller instance type, or raise ${n('pool')} up to 100`;
    },
  }),
  custom({
    id: 'fleet-session-budget-split',
    properties: ['hosts', 'vcpusPerHost', 'readers', 'maxConnections', 'pool', 'sessionRoles', 'sessionMaxConnectionsPercent'],
    names: { pool: 'maxConnectionsPercent' },
    terraform: {
      module: FLEET_MODULE,
      names: {
        hosts: 'hosts',
        vcpusPerHost: 'instance_type',
        readers: 'reader_endpoints',
        maxConnections: 'max_connections',
        pool: 'max_connections_percent',
        // The roles of the endpoints whose pool_mode is session.
        sessionRoles: 'endpoints role where pool_mode == session',
        sessionMaxConnectionsPercent: 'session_max_connections_percent',
      },
    },
    summary: 'with a session listener, each process of the session pools and of the transaction pools gets at least one server connection of its share of the target\'s budget (a precondition)',
    check: (s, n) => {
      // Both are set here: a custom rule runs only when every property it reads is.
      if ((s.sessionRoles ?? []).length === 0) return undefined;
      if ([s.hosts, s.vcpusPerHost, s.readers].some((v) => !Number.isInteger(v) || v < 1)) return undefined; // reported by the rows above
      const pct = s.sessionMaxConnectionsPercent ?? DEFAULT_SESSION_MAX_CONNECTIONS_PERCENT;
      if (!Number.isInteger(pct) || pct < 1 || pct > 99) return undefined; // fleet-session-max-connections-percent
      const budget = poolSizing(s.maxConnections, s.pool).maxServerConnections;
      const session = sessionShare(budget, pct);
      const perTarget = Math.max(s.vcpusPerHost, processesPerReader(s));
      const need = s.hosts * perTarget;
      if (session >= need && budget - session >= need) return undefined;
      return `${n('sessionMaxConnectionsPercent')} ${pct} splits each target's budget of ${budget} into ${session} server connections for session pooling and ${budget - session} for transaction pooling, and ${n('hosts')} ${s.hosts} x ${perTarget} processes per target need ${need} in each: use fewer hosts or a smaller instance type, raise ${n('pool')}, or choose a ${n('sessionMaxConnectionsPercent')} that leaves both shares that many`;
    },
  }),
];

/** Throws with every problem of the spec at once. */
export function validateFleet(spec: PoolerFleetSpec): void {
  const problems = runRules(FLEET_RULES, withSessionDefaults(spec));
  if (problems.length > 0) throw new Error(problems.join('\n'));
}
