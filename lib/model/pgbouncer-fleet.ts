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
 */
import { iniLines, connValue, iniValue, PGBOUNCER_MAX_PEER_ID, PoolMode, poolModeSettings, renderPgBouncerUserlist, SERVER_RESET_QUERY, sharedPgBouncerSettings, type IniSetting, type PgBouncerUser } from './pgbouncer-ini';
import { custom, integerRange, runRules, type Rule } from './rule-table';
import { poolSizing, RESERVED_CONNECTIONS, type PoolSettings } from './sizing';
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

/** Throws with every problem of the spec at once. */
export function validateFleet(spec: PoolerFleetSpec): void {
  const problems = runRules(FLEET_RULES, withSessionDefaults(spec));
  if (problems.length > 0) throw new Error(problems.join('\n'));
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

/** One PgBouncer process of a host. */
export interface FleetProcess {
  readonly listener: FleetListener;
  readonly peerId: number;
  /** `writer` or `reader<i>` (1-based). */
  readonly target: string;
  /** The server host (a placeholder). */
  readonly serverHost: string;
  readonly poolSize: number;
  readonly minPoolSize: number;
}

/**
 * The processes every host runs, listener by listener (FLEET_LISTENERS' order); peer ids are unique per
 * listener. A role with a session listener splits each target's budget: sessionShare() for the session
 * processes, the rest for the transaction ones, so the two never exceed the budget together. Session
 * pools keep no idle floor (a session connection serves one client for as long as it stays).
 *
 * What the constructs' rules and summaries read. The hosts lay themselves out with host/apk_host.py plan(), from
 * the user data's values (a Terraform module's are known only at apply); test/model/pgbouncer-host-files.test.ts
 * holds the two to the same files, so the layout has one definition on the hosts and this is its reference.
 */
export function planFleetProcesses(spec: PoolerFleetSpec): FleetProcess[] {
  validateFleet(spec);
  const full = withSessionDefaults(spec);
  const sizing = poolSizing(spec.maxConnections, spec.pool);
  const session = new Set(full.sessionRoles);
  const perReader = processesPerReader(spec);
  return fleetListeners(full).flatMap((listener) => {
    const role = fleetListenerRole(listener);
    const inSession = fleetListenerPoolMode(listener) === PoolMode.SESSION;
    const sessionBudget = sessionShare(sizing.maxServerConnections, full.sessionMaxConnectionsPercent);
    const budget = inSession ? sessionBudget : sizing.maxServerConnections - (session.has(role) ? sessionBudget : 0);
    const idle = inSession ? 0 : Math.min(sizing.maxIdleServerConnections, budget);
    const share = (processesPerTarget: number) => ({
      poolSize: Math.floor(budget / (spec.hosts * processesPerTarget)),
      minPoolSize: Math.floor(idle / (spec.hosts * processesPerTarget)),
    });
    if (role === EndpointRole.READ_WRITE) {
      return Array.from({ length: spec.vcpusPerHost }, (_, i): FleetProcess => ({ listener, peerId: i + 1, target: 'writer', serverHost: FLEET_PLACEHOLDERS.clusterEndpoint, ...share(spec.vcpusPerHost) }));
    }
    const readOnly = Array.from({ length: spec.readers }, (_, r) =>
      Array.from({ length: perReader }, (_, k): FleetProcess => ({ listener, peerId: r * perReader + k + 1, target: `reader${r + 1}`, serverHost: FLEET_PLACEHOLDERS.readerEndpoint(r + 1), ...share(perReader) })),
    ).flat();
    if (readOnly.length > PGBOUNCER_MAX_PEER_ID) throw new Error(`the read-only listener would need ${readOnly.length} processes: at most ${PGBOUNCER_MAX_PEER_ID}`);
    return readOnly;
  });
}

/** A process's file and its Unix socket directory: one per process, as they share the TCP port. */
export function fleetProcessName(p: Pick<FleetProcess, 'listener' | 'peerId'>): string {
  return `${FLEET_LISTENER_SHORT[p.listener]}-${p.peerId}`;
}

interface CommonIniValues {
  readonly maxClientConnections: number | string;
  readonly borrowTimeoutSeconds: number | string;
  readonly keepIdleSeconds: number | string;
  readonly clientIdleTimeoutSeconds: number | string;
}

function commonIni(v: CommonIniValues, root: string): string {
  const keepalive = fleetKeepalive(NLB_DEFAULT_TCP_IDLE_TIMEOUT_SECONDS);
  const settings: IniSetting[] = [
    ['listen_addr', '0.0.0.0'],
    ['so_reuseport', 1],
    ...sharedPgBouncerSettings({
      maxClientConnections: v.maxClientConnections,
      connectionBorrowTimeoutSeconds: v.borrowTimeoutSeconds,
      authFile: fleetPath(root, FLEET_PATHS.authFile),
      adminUser: FLEET_ADMIN_USER,
      clientTls: { certFile: fleetPath(root, FLEET_PATHS.tlsCertFile), keyFile: fleetPath(root, FLEET_PATHS.tlsKeyFile), caFile: fleetPath(root, FLEET_PATHS.tlsCaFile) },
      serverCaFile: fleetPath(root, FLEET_PATHS.rdsCaBundle),
    }),
    // Re-resolve the cluster endpoint at Aurora's TTL, so new server connections reach a new writer within seconds.
    ['dns_max_ttl', AURORA_ENDPOINT_DNS_TTL_SECONDS],
    // Close a server connection of a pool whose host changed (or after RELOAD) as soon as it is idle.
    ['server_fast_close', 1],
    ['tcp_keepalive', 1],
    ['tcp_keepidle', v.keepIdleSeconds],
    ['tcp_keepintvl', keepalive.interval],
    ['tcp_keepcnt', keepalive.count],
    // A client quiet for longer than the NLB keeps its flow is gone for the NLB: close it here too.
    ['client_idle_timeout', v.clientIdleTimeoutSeconds],
  ];
  return [`; PgBouncer engine: settings every process shares, rendered by aurora-proxy-kit lib/model/pgbouncer-fleet.ts; do not edit.`, '[pgbouncer]', ...iniLines(settings), ''].join('\n');
}

/** The [pgbouncer] settings every process of the fleet shares. */
export function renderFleetCommonIni(spec: PoolerFleetSpec, root: string = ''): string {
  return commonIni(
    {
      maxClientConnections: spec.maxClientConnections ?? DEFAULT_FLEET_MAX_CLIENT_CONNECTIONS,
      borrowTimeoutSeconds: spec.pool.connectionBorrowTimeoutSeconds,
      keepIdleSeconds: fleetKeepalive(spec.tcpIdleTimeoutSeconds).idle,
      clientIdleTimeoutSeconds: spec.tcpIdleTimeoutSeconds,
    },
    root,
  );
}

/** The tokens of the shared settings' template, which the bootstrap replaces with the fleet's values. */
export const COMMON_TEMPLATE_TOKENS = { maxClientConnections: '@MAX_CLIENT_CONN@', borrowTimeoutSeconds: '@BORROW_TIMEOUT@', keepIdleSeconds: '@KEEPIDLE@', clientIdleTimeoutSeconds: '@CLIENT_IDLE_TIMEOUT@' } as const;

export function renderFleetCommonTemplate(root: string = ''): string {
  return commonIni(COMMON_TEMPLATE_TOKENS, root);
}

/** A listener's [peers]: every process of the listener on the host, by its Unix socket (same port). */
export function renderFleetPeersIni(listener: FleetListener, processes: ReadonlyArray<FleetProcess>, root: string = ''): string {
  const port = FLEET_PORTS[listener];
  const mine = processes.filter((p) => p.listener === listener);
  return ['[peers]', ...mine.map((p) => `${p.peerId} = ${iniValue('[peers]', `host=${connValue(fleetPath(root, `${FLEET_PATHS.runDir}/${fleetProcessName(p)}`))} port=${port}`)}`), ''].join('\n');
}

/** What varies from one process file to the next; the rest is its listener's. */
interface ProcessIniValues {
  readonly listener: FleetListener;
  readonly name: string;
  readonly target: string;
  readonly serverHost: string;
  readonly peerId: string | number;
  readonly poolSize: string | number;
  readonly minPoolSize: string | number;
}

/** A process's pool: its [databases] entry. A read-only pool guards every server connection (READ_ONLY_ROLE_GUARD). */
function poolEntry(v: ProcessIniValues): string {
  const readOnly = fleetListenerRole(v.listener) === EndpointRole.READ_ONLY ? [`user=${FLEET_PLACEHOLDERS.serverUser}`, `connect_query=${connValue(READ_ONLY_ROLE_GUARD)}`] : [];
  const db = [`host=${v.serverHost}`, `port=${FLEET_PLACEHOLDERS.serverPort}`, `dbname=${FLEET_PLACEHOLDERS.databaseName}`, ...readOnly, `pool_size=${v.poolSize}`, `min_pool_size=${v.minPoolSize}`, `max_db_connections=${v.poolSize}`].join(' ');
  return `${FLEET_PLACEHOLDERS.databaseName} = ${iniValue('[databases]', db)}`;
}

/** The first line of a read-only process's route file: what the host agent reads to re-point it (READ_ONLY_ROUTING). */
export function routeHeader(v: { readonly name: string; readonly target: string; readonly home: string }): string {
  return `; ${v.name} (${v.target}) home=${v.home} spare=${FLEET_PLACEHOLDERS.writerInstanceEndpoint} writer=${FLEET_PLACEHOLDERS.clusterEndpoint}`;
}

function routeIni(v: ProcessIniValues): string {
  return [routeHeader({ name: v.name, target: v.target, home: v.serverHost }), '[databases]', poolEntry(v), ''].join('\n');
}

function processIni(v: ProcessIniValues, root: string): string {
  const run = fleetPath(root, `${FLEET_PATHS.runDir}/${v.name}`);
  const readOnly = fleetListenerRole(v.listener) === EndpointRole.READ_ONLY;
  const mode = fleetListenerPoolMode(v.listener);
  const own: IniSetting[] = [
    ['listen_port', FLEET_PORTS[v.listener]],
    ['peer_id', v.peerId],
    ['unix_socket_dir', run],
    ['pidfile', `${run}/pgbouncer.pid`],
    ['default_pool_size', v.poolSize],
    ['max_db_connections', v.poolSize],
    ...(readOnly
      ? ([
          // The guard after the reset, in the same round trip; before reuse after a second idle.
          ['server_reset_query', `${SERVER_RESET_QUERY}; ${READ_ONLY_ROLE_GUARD}`],
          ['server_check_query', READ_ONLY_ROLE_GUARD],
          ['server_check_delay', READ_ONLY_CHECK_DELAY_SECONDS],
        ] as IniSetting[])
      : []),
    // Session pooling and its own reset (the read-only guard after it): later lines win.
    ...poolModeSettings(mode, readOnly ? READ_ONLY_ROLE_GUARD : undefined),
  ];
  return [
    `; ${v.name} (${v.target}): lib/model/pgbouncer-fleet.ts`,
    // A read-only process's pool is in its route file, which the host agent may re-point.
    ...(readOnly ? [`%include ${fleetPath(root, `${FLEET_PATHS.routesDir}/${v.name}.ini`)}`] : ['[databases]', poolEntry(v)]),
    `%include ${fleetPath(root, `${FLEET_PATHS.dir}/${FLEET_LISTENER_SHORT[v.listener]}-peers.ini`)}`,
    '[pgbouncer]',
    // First: PgBouncer 1.24 takes the included file's [pgbouncer] header as the section starting over,
    // dropping what came before it in the section (checked: a unix_socket_dir set above was lost).
    `%include ${fleetPath(root, FLEET_PATHS.commonIni)}`,
    ...iniLines(own),
    '',
  ].join('\n');
}

/**
 * One process's own file: its database, its listener's peers and the shared settings (both
 * included, so each file stays a few lines), then its port, id and pool.
 */
export function renderFleetProcessIni(proc: FleetProcess, root: string = ''): string {
  return processIni({ listener: proc.listener, name: fleetProcessName(proc), target: proc.target, serverHost: proc.serverHost, peerId: proc.peerId, poolSize: proc.poolSize, minPoolSize: proc.minPoolSize }, root);
}

/**
 * The tokens of a listener's process template: the bootstrap writes one template per listener and
 * one short line per process (user data is limited to 16 KB), replacing these with the process's values.
 */
export const PROCESS_TEMPLATE_TOKENS = { name: '@NAME@', target: '@TARGET@', serverHost: '@HOST@', peerId: '@PEER@', poolSize: '@POOL@', minPoolSize: '@MINPOOL@' } as const;

export function renderFleetProcessTemplate(listener: FleetListener, root: string = ''): string {
  return processIni({ listener, ...PROCESS_TEMPLATE_TOKENS }, root);
}

/** The read-only processes' route file template (the bootstrap fills it in as it does the process template). */
export function renderFleetRouteTemplate(): string {
  return routeIni({ listener: 'readOnly', ...PROCESS_TEMPLATE_TOKENS });
}

/** A read-only process's route file: its pool, re-pointed by the host agent (READ_ONLY_ROUTING). */
export function renderFleetRouteIni(proc: FleetProcess): string {
  if (fleetListenerRole(proc.listener) !== EndpointRole.READ_ONLY) throw new Error(`${fleetProcessName(proc)}: only read-only processes have a route file`);
  return routeIni({ listener: proc.listener, name: fleetProcessName(proc), target: proc.target, serverHost: proc.serverHost, peerId: proc.peerId, poolSize: proc.poolSize, minPoolSize: proc.minPoolSize });
}

/** The template's tokens replaced by a process's values: what the bootstrap's process_ini writes. */
export function processTemplateValues(proc: FleetProcess): Readonly<Record<keyof typeof PROCESS_TEMPLATE_TOKENS, string>> {
  return { name: fleetProcessName(proc), target: proc.target, serverHost: proc.serverHost, peerId: String(proc.peerId), poolSize: String(proc.poolSize), minPoolSize: String(proc.minPoolSize) };
}

/** Every file of a host, by its FLEET_PATHS-relative path (the auth file and TLS files are written at boot, from the secrets). */
export function renderFleetFiles(spec: PoolerFleetSpec, root: string = ''): Map<string, string> {
  const processes = planFleetProcesses(spec);
  const files = new Map<string, string>([
    [FLEET_PATHS.commonIni, renderFleetCommonIni(spec, root)],
    ...fleetListeners(spec).map((l): [string, string] => [`${FLEET_PATHS.dir}/${FLEET_LISTENER_SHORT[l]}-peers.ini`, renderFleetPeersIni(l, processes, root)]),
  ]);
  for (const p of processes) {
    files.set(`${FLEET_PATHS.dir}/${fleetProcessName(p)}.ini`, renderFleetProcessIni(p, root));
    if (fleetListenerRole(p.listener) === EndpointRole.READ_ONLY) files.set(`${FLEET_PATHS.routesDir}/${fleetProcessName(p)}.ini`, renderFleetRouteIni(p));
  }
  return files;
}

export { renderPgBouncerUserlist, type PgBouncerUser };
