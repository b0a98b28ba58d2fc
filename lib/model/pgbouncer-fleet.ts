/**
 * The PgBouncer engine's fleet (docs/PGBOUNCER-ENGINE.md): which PgBouncer processes run on each
 * pooler host, how each target's budget is split over the whole fleet, and the files that configure
 * them. Every host of the Auto Scaling group runs the same processes (one launch template), so the
 * plan is per host and the fleet's size divides the budgets.
 *
 * Per host, per listener, processes share one port (so_reuseport) with [peers] between them:
 * - read/write: one process per vCPU, pooling for the writer through the cluster endpoint's DNS name;
 * - read-only: for each reader, max(1, floor(vCPUs / readers)) processes pooling for that reader's
 *   instance endpoint, so each reader has pools of its own and no reader exceeds its budget.
 * A target's pool (poolSizing of its max_connections: never into the connections reserved for rdsadmin,
 * AWS's automation, the master user and the role bootstrap) is split evenly over every process of the
 * fleet that pools for it, rounded down, so the fleet never opens more than the budget.
 *
 * Server host names are deploy-time values: the files carry `${Name}` placeholders, which CloudFormation's
 * Fn::Sub and Terraform's templatefile both substitute (FLEET_PLACEHOLDERS).
 *
 * Here: the fleet's spec, listeners, ports, paths, placeholders and read-only routing. Its rules are
 * pgbouncer-fleet-rules.ts (FLEET_RULES); its processes and files pgbouncer-fleet-files.ts.
 */
import { PoolMode } from './pgbouncer-ini';
import type { PoolSettings } from './sizing';
import { EndpointRole } from './vocabulary';

/**
 * A listener of the hosts: a role's transaction-pooling processes (always there), or its session-pooling
 * ones (only where some endpoint of the role asks for session pooling: PoolerFleetSpec.sessionRoles).
 */
export type FleetListener = 'readWrite' | 'readOnly' | 'readWriteSession' | 'readOnlySession';
/** Every listener, in the order the hosts lay them out. */
export const FLEET_LISTENERS: ReadonlyArray<FleetListener> = ['readWrite', 'readOnly', 'readWriteSession', 'readOnlySession'];

/**
 * Each listener's short name: its processes' names (`rw-1`, `sw-1`), peers file and health path key. Two
 * letters each, distinct, as the host agent tells a process's listener by its name's first two.
 */
export const FLEET_LISTENER_SHORT: Readonly<Record<FleetListener, string>> = { readWrite: 'rw', readOnly: 'ro', readWriteSession: 'sw', readOnlySession: 'sr' };

/** The endpoint role a listener serves. */
export function fleetListenerRole(listener: FleetListener): EndpointRole {
  return listener === 'readWrite' || listener === 'readWriteSession' ? EndpointRole.READ_WRITE : EndpointRole.READ_ONLY;
}

/** The pool mode of a listener's processes. */
export function fleetListenerPoolMode(listener: FleetListener): PoolMode {
  return listener === 'readWriteSession' || listener === 'readOnlySession' ? PoolMode.SESSION : PoolMode.TRANSACTION;
}

/** The listener of a role and pool mode. */
export function fleetListenerOf(role: EndpointRole, poolMode: PoolMode = PoolMode.TRANSACTION): FleetListener {
  const readWrite = role === EndpointRole.READ_WRITE;
  if (poolMode === PoolMode.SESSION) return readWrite ? 'readWriteSession' : 'readOnlySession';
  return readWrite ? 'readWrite' : 'readOnly';
}

/** What decides the fleet's processes and pools. */
export interface PoolerFleetSpec {
  /** Hosts in the Auto Scaling group (fixed: min = max = desired). */
  readonly hosts: number;
  readonly vcpusPerHost: number;
  /** Reader instances of the cluster the read-only listener pools for. */
  readonly readers: number;
  /** max_connections of each instance (the cluster's default for its class, or the parameter group's). */
  readonly maxConnections: number;
  readonly pool: PoolSettings;
  /** The NLB listeners' TCP idle timeout (tcp.idle_timeout.seconds). */
  readonly tcpIdleTimeoutSeconds: number;
  /** Client connections each process accepts. @default DEFAULT_FLEET_MAX_CLIENT_CONNECTIONS */
  readonly maxClientConnections?: number;
  /**
   * The roles some endpoint uses in session pooling: each gets a session listener of its own (processes,
   * port, NLB listener and target group). @default none
   */
  readonly sessionRoles?: ReadonlyArray<EndpointRole>;
  /**
   * Share (percent) of each target's pool budget its session pools take, when its role has a session
   * listener; the transaction pools keep the rest. @default DEFAULT_SESSION_MAX_CONNECTIONS_PERCENT
   */
  readonly sessionMaxConnectionsPercent?: number;
}

/**
 * A quarter of a target's budget for session pooling: a session client holds a server connection for as
 * long as it stays connected, so a session pool serves as many clients at once as it has connections,
 * while the transaction pools serve many clients per connection and keep most of the budget.
 */
export const DEFAULT_SESSION_MAX_CONNECTIONS_PERCENT = 25;

export const DEFAULT_FLEET_HOSTS = 2;
/**
 * How the Auto Scaling group judges a host: by EC2's checks alone (the instance runs and passes its status
 * checks), not by the load balancer's. Every host uses the same Aurora servers, and the load balancer's checks
 * fail while a listener's servers refuse connections, so a writer failover or a reader's restart fails them on
 * every host at once: with ELB health checks the group would replace every host together
 * (https://docs.aws.amazon.com/autoscaling/ec2/userguide/health-checks-overview.html), while the load balancer,
 * failing open when no target is healthy, keeps routing to them
 * (https://docs.aws.amazon.com/elasticloadbalancing/latest/network/target-group-health-checks.html).
 * A host whose PgBouncer keeps exiting powers itself off (the units' StartLimitAction), which EC2's checks see.
 */
export const FLEET_HOST_HEALTH_CHECK_TYPE = 'EC2';
/**
 * Seconds a new host is given to boot, install and start before it counts: the group's health check grace
 * period, and the wait after each replaced host in a rolling update (CloudFormation's PauseTime, Terraform's
 * instance_warmup), so the next old host is not replaced before the new one serves.
 */
export const FLEET_HOST_WARMUP_SECONDS = 300;
export const DEFAULT_FLEET_MAX_CLIENT_CONNECTIONS = 1000;
/** The NLB's own default (Elastic Load Balancing User Guide, update-idle-timeout). */
export const NLB_DEFAULT_TCP_IDLE_TIMEOUT_SECONDS = 350;
/** Aurora's endpoints are DNS names with a 5-second TTL (Aurora User Guide, Aurora.Endpoints). */
export const AURORA_ENDPOINT_DNS_TTL_SECONDS = 5;

/** The ports PgBouncer listens on, on each host; the NLB's listeners forward to them. */
export const FLEET_PORTS: Readonly<Record<FleetListener, number>> = { readWrite: 6432, readOnly: 6433, readWriteSession: 6434, readOnlySession: 6435 };

/**
 * Where the files live on a host (Debian's pgbouncer package layout), relative to its root. The model renders
 * them for `/` (a host); its own tests may render them below a directory (fleetPath) to run PgBouncer there.
 */
export const FLEET_PATHS = {
  dir: 'etc/pgbouncer',
  commonIni: 'etc/pgbouncer/common.ini',
  authFile: 'etc/pgbouncer/userlist.txt',
  tlsCertFile: 'etc/pgbouncer/tls/server.crt',
  tlsKeyFile: 'etc/pgbouncer/tls/server.key',
  tlsCaFile: 'etc/pgbouncer/tls/ca.crt',
  /** The RDS CA bundle the servers' certificates chain to. */
  rdsCaBundle: 'etc/pgbouncer/tls/rds-ca-bundle.pem',
  runDir: 'run/pgbouncer',
  /**
   * Each read-only process's pool, a file of its own that the host agent rewrites (owned by the PgBouncer
   * user, who runs the agent) when the instance it pools for becomes the writer (READ_ONLY_ROUTING).
   */
  routesDir: 'var/lib/apk-pgbouncer/routes',
} as const;

/** A FLEET_PATHS entry below `root` ('' for /). */
export function fleetPath(root: string, relative: string): string {
  return `${root}/${relative}`;
}

export const FLEET_ADMIN_USER = 'pgbouncer_admin';

/** Placeholders in the rendered files: the cluster endpoint, reader i's instance endpoint (1-based), the database. */
export const FLEET_PLACEHOLDERS = {
  clusterEndpoint: '${ClusterEndpoint}',
  readerEndpoint: (i: number): string => `\${ReaderEndpoint${i}}`,
  databaseName: '${DatabaseName}',
  serverPort: '${ServerPort}',
  /** The read-only listener's server role: a role without write privileges, so the listener stays read-only even on a writer. */
  serverUser: '${ServerUser}',
  /**
   * The writer instance's own endpoint at deploy time: after a failover it is a reader, and the read-only
   * pools of the reader that was promoted pool for it instead (READ_ONLY_ROUTING).
   */
  writerInstanceEndpoint: '${WriterInstanceEndpoint}',
} as const;

/**
 * Why the read-only listener never keeps reading from a writer. Its pools point at instance endpoints, and an
 * instance endpoint keeps naming its instance when the instance changes role (Aurora User Guide,
 * Aurora.Overview.Endpoints): after a failover that promotes reader i, reader i's pools would read from the new
 * writer and the demoted writer would get no reads. Two parts, each enough for a different half:
 * - a guard on every server connection of the read-only pools (READ_ONLY_ROLE_GUARD): run when the
 *   connection is opened (connect_query), after every transaction (with the reset) and before a connection idle
 *   for READ_ONLY_CHECK_DELAY_SECONDS is reused (server_check_query). On a server that is not in recovery
 *   it ends its own backend, so PgBouncer drops the connection instead of lending it: a new or reused
 *   connection to a writer never carries a transaction;
 * - the host agent's routing (`apk-host serve`): every READ_ONLY_ROUTING.intervalSeconds it resolves the
 *   cluster endpoint and each reader's instance endpoint; while a reader's address is the writer's, that
 *   reader's pools point at the deploy-time writer's instance endpoint (now a reader), and back once it is a
 *   reader again, with a RELOAD of the process (PgBouncer then closes the old pool's connections).
 * Neither part alone closes the window of the promotion itself: a connection the guard passed as a reader could
 * carry one more transaction after it. Aurora closes it: it restarts the failover target (AWS_FACTS
 * 'aurora-failover-target-restarts'), so no server connection to the reader lives through the promotion, and
 * every connection opened after it meets the guard at login. The demoted writer serves the read-only pools
 * within intervalSeconds of the cluster endpoint's DNS name resolving to the new writer (its TTL is
 * AURORA_ENDPOINT_DNS_TTL_SECONDS) once it accepts connections again.
 */
export const READ_ONLY_ROUTING = { intervalSeconds: 1 } as const;
/** A read-only server connection idle this long is checked with the guard before it is lent again. */
export const READ_ONLY_CHECK_DELAY_SECONDS = 1;
/**
 * Ends the connection's own backend unless the server is in recovery (an Aurora reader is: pg_is_in_recovery()
 * is true on Aurora Replicas). PostgreSQL lets a role end its own backends (pg_terminate_backend), and the
 * connection closes with 57P01 before any client statement runs on it. No quotes, so it fits a connection
 * string's quoted value.
 */
export const READ_ONLY_ROLE_GUARD = 'SELECT pg_catalog.pg_terminate_backend(pg_catalog.pg_backend_pid()) WHERE NOT pg_catalog.pg_is_in_recovery()';

/** The session pools' share of a target's budget: `percent` of it, rounded down. */
export function sessionShare(budget: number, percent: number): number {
  return Math.floor((budget * percent) / 100);
}

/** The spec with its optional session settings filled in (what the rules and the layout read). */
export function withSessionDefaults(spec: PoolerFleetSpec): PoolerFleetSpec & { readonly sessionRoles: ReadonlyArray<EndpointRole>; readonly sessionMaxConnectionsPercent: number } {
  return { ...spec, sessionRoles: spec.sessionRoles ?? [], sessionMaxConnectionsPercent: spec.sessionMaxConnectionsPercent ?? DEFAULT_SESSION_MAX_CONNECTIONS_PERCENT };
}

/** The listeners a fleet runs: both transaction listeners, and a session listener per role in sessionRoles. */
export function fleetListeners(spec: Pick<PoolerFleetSpec, 'sessionRoles'>): FleetListener[] {
  const session = new Set(spec.sessionRoles ?? []);
  return FLEET_LISTENERS.filter((l) => fleetListenerPoolMode(l) === PoolMode.TRANSACTION || session.has(fleetListenerRole(l)));
}

/** Read-only processes per reader on a host. */
export function processesPerReader(spec: Pick<PoolerFleetSpec, 'vcpusPerHost' | 'readers'>): number {
  return Math.max(1, Math.floor(spec.vcpusPerHost / spec.readers));
}

/** tcp_keepidle at most: a dead client is found within about 2.5 minutes whatever the NLB's timeout. */
export const KEEPALIVE_MAX_IDLE_SECONDS = 120;

/**
 * TCP keepalive towards clients, below the NLB's idle timeout so a quiet client connection is probed
 * (keeping its NLB flow) and a dead one is closed after tcp_keepcnt missed probes, not leaked.
 */
export function fleetKeepalive(tcpIdleTimeoutSeconds: number): { readonly idle: number; readonly interval: number; readonly count: number } {
  return { idle: Math.min(KEEPALIVE_MAX_IDLE_SECONDS, Math.floor(tcpIdleTimeoutSeconds / 2)), interval: 10, count: 3 };
}
