/**
 * The PgBouncer engine's fleet laid out on a host (pgbouncer-fleet.ts): its processes, listener by listener,
 * each target's budget split over every process of the fleet that pools for it, and the files that configure
 * them (`common.ini`, a `[peers]` file per listener, one small file per process that `%include`s them, a route
 * file per read-only process), with `${Name}` placeholders for deploy-time hosts, and the templates the
 * bootstrap fills in.
 */
import { iniLines, connValue, iniValue, PGBOUNCER_MAX_PEER_ID, PoolMode, poolModeSettings, SERVER_RESET_QUERY, sharedPgBouncerSettings, type IniSetting } from './pgbouncer-ini';
import {
  AURORA_ENDPOINT_DNS_TTL_SECONDS,
  DEFAULT_FLEET_MAX_CLIENT_CONNECTIONS,
  FLEET_ADMIN_USER,
  FLEET_LISTENER_SHORT,
  FLEET_PATHS,
  FLEET_PLACEHOLDERS,
  FLEET_PORTS,
  fleetKeepalive,
  fleetListenerPoolMode,
  fleetListenerRole,
  fleetListeners,
  fleetPath,
  NLB_DEFAULT_TCP_IDLE_TIMEOUT_SECONDS,
  processesPerReader,
  READ_ONLY_CHECK_DELAY_SECONDS,
  READ_ONLY_ROLE_GUARD,
  sessionShare,
  withSessionDefaults,
  type FleetListener,
  type PoolerFleetSpec,
} from './pgbouncer-fleet';
import { validateFleet } from './pgbouncer-fleet-rules';
import { poolSizing } from './sizing';
import { EndpointRole } from './vocabulary';

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

/**
 * A host that is not one of the fleet's: the rehearsal's RDS Proxy stand-in runs the fleet's processes on one
 * host with no load balancer in front (RDS Proxy has none), so each listener takes its clients on its endpoint's
 * own addresses and port, and the console admits the rehearsal's admin. Absent: a deployed host (FLEET_PORTS on
 * every address, FLEET_ADMIN_USER).
 */
export interface FleetHostPlacement {
  /** Each listener's addresses and port. */
  readonly listen: Partial<Record<FleetListener, { readonly addresses: ReadonlyArray<string>; readonly port: number }>>;
  readonly adminUser: string;
}

/** The port a listener's processes take: the placement's, or the fleet's. */
export function fleetListenerPort(listener: FleetListener, placement?: FleetHostPlacement): number {
  return placement?.listen[listener]?.port ?? FLEET_PORTS[listener];
}

interface CommonIniValues {
  readonly maxClientConnections: number | string;
  readonly borrowTimeoutSeconds: number | string;
  readonly keepIdleSeconds: number | string;
  readonly clientIdleTimeoutSeconds: number | string;
}

function commonIni(v: CommonIniValues, root: string, adminUser: string = FLEET_ADMIN_USER): string {
  const keepalive = fleetKeepalive(NLB_DEFAULT_TCP_IDLE_TIMEOUT_SECONDS);
  const settings: IniSetting[] = [
    ['listen_addr', '0.0.0.0'],
    ['so_reuseport', 1],
    ...sharedPgBouncerSettings({
      maxClientConnections: v.maxClientConnections,
      connectionBorrowTimeoutSeconds: v.borrowTimeoutSeconds,
      authFile: fleetPath(root, FLEET_PATHS.authFile),
      adminUser,
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
  // This header and each process file's first line name the fleet model's main file: they are part of every
  // host's files (the packages object, the generated user data), so they stay as deployed.
  return [`; PgBouncer engine: settings every process shares, rendered by aurora-proxy-kit lib/model/pgbouncer-fleet.ts; do not edit.`, '[pgbouncer]', ...iniLines(settings), ''].join('\n');
}

/** The [pgbouncer] settings every process of the fleet shares. */
export function renderFleetCommonIni(spec: PoolerFleetSpec, root: string = '', placement?: FleetHostPlacement): string {
  return commonIni(
    {
      maxClientConnections: spec.maxClientConnections ?? DEFAULT_FLEET_MAX_CLIENT_CONNECTIONS,
      borrowTimeoutSeconds: spec.pool.connectionBorrowTimeoutSeconds,
      keepIdleSeconds: fleetKeepalive(spec.tcpIdleTimeoutSeconds).idle,
      clientIdleTimeoutSeconds: spec.tcpIdleTimeoutSeconds,
    },
    root,
    placement?.adminUser,
  );
}

/** The tokens of the shared settings' template, which the bootstrap replaces with the fleet's values. */
export const COMMON_TEMPLATE_TOKENS = { maxClientConnections: '@MAX_CLIENT_CONN@', borrowTimeoutSeconds: '@BORROW_TIMEOUT@', keepIdleSeconds: '@KEEPIDLE@', clientIdleTimeoutSeconds: '@CLIENT_IDLE_TIMEOUT@' } as const;

export function renderFleetCommonTemplate(root: string = ''): string {
  return commonIni(COMMON_TEMPLATE_TOKENS, root);
}

/** A listener's [peers] file, FLEET_PATHS-relative: every process of the listener includes it. */
export function fleetPeersFile(listener: FleetListener): string {
  return `${FLEET_PATHS.dir}/${FLEET_LISTENER_SHORT[listener]}-peers.ini`;
}

/** A listener's [peers]: every process of the listener on the host, by its Unix socket (same port). */
export function renderFleetPeersIni(listener: FleetListener, processes: ReadonlyArray<FleetProcess>, root: string = '', placement?: FleetHostPlacement): string {
  const port = fleetListenerPort(listener, placement);
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

function processIni(v: ProcessIniValues, root: string, placement?: FleetHostPlacement): string {
  const run = fleetPath(root, `${FLEET_PATHS.runDir}/${v.name}`);
  const readOnly = fleetListenerRole(v.listener) === EndpointRole.READ_ONLY;
  const mode = fleetListenerPoolMode(v.listener);
  const addresses = placement?.listen[v.listener]?.addresses;
  const own: IniSetting[] = [
    // Over common.ini's 0.0.0.0: a host with no load balancer in front listens where its endpoint is.
    ...(addresses === undefined ? [] : ([['listen_addr', addresses.join(',')]] as IniSetting[])),
    ['listen_port', fleetListenerPort(v.listener, placement)],
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
    `%include ${fleetPath(root, fleetPeersFile(v.listener))}`,
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
export function renderFleetProcessIni(proc: FleetProcess, root: string = '', placement?: FleetHostPlacement): string {
  return processIni({ listener: proc.listener, name: fleetProcessName(proc), target: proc.target, serverHost: proc.serverHost, peerId: proc.peerId, poolSize: proc.poolSize, minPoolSize: proc.minPoolSize }, root, placement);
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
    ...fleetListeners(spec).map((l): [string, string] => [fleetPeersFile(l), renderFleetPeersIni(l, processes, root)]),
  ]);
  for (const p of processes) {
    files.set(`${FLEET_PATHS.dir}/${fleetProcessName(p)}.ini`, renderFleetProcessIni(p, root));
    if (fleetListenerRole(p.listener) === EndpointRole.READ_ONLY) files.set(`${FLEET_PATHS.routesDir}/${fleetProcessName(p)}.ini`, renderFleetRouteIni(p));
  }
  return files;
}
