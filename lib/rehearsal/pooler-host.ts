/**
 * A pooler host of the PgBouncer engine on the rehearsal: the engine's own bootstrap (the user data
 * its hosts run, lib/model/pgbouncer-bootstrap.ts) configures a host in the data namespace, beside the
 * rehearsal's instances, and its PgBouncer processes serve the engine's two listeners (6432 read/write,
 * 6433 read-only) on every address of the namespace. What AWS would provide has a stand-in:
 *
 * - Secrets Manager: files under `<workDir>/pooler-host-aws/secrets` (APK_AWS_STANDIN), 0600;
 * - the packages from S3: the rehearsal's PgBouncer 1.24 and its CA as the RDS CA bundle (install skipped);
 * - systemd: the rehearsal starts the units' programs, each PgBouncer process the bootstrap lists and
 *   the host agent's `serve` (health endpoint, metrics exporter), in the pooler host's CPU budget, each
 *   under a small shell loop that restarts it FLEET_RESTART_SECONDS after it exits, as the units'
 *   Restart=always does, and gives up at the units' start limit (restart-loop.ts; where a PgBouncer unit
 *   would power the host off for the Auto Scaling group to replace, the rehearsal's host stays down); the
 *   loops are tracked by pid (`down` stops them, and they stop their program);
 * - CloudWatch: the exporter writes each PutMetricData request's form body to `<standin>/cloudwatch/`;
 * - the Auto Scaling group: the rehearsal runs one host of a fleet of DEFAULT_FLEET_HOSTS, with that
 *   host's share of each budget, as each host of the fleet has.
 *
 * The read/write pools reach the writer by the cluster endpoint's name, which the rehearsal moves at a
 * failover as Aurora's DNS does, so the engine's failover path is the one AWS runs.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Client } from 'pg';
import { EndpointRole } from '../../lambda/src/environment';
import { applyDatabaseRoles, type RoleBootstrapRequest } from '../../lambda/src/role-bootstrap';
import { derivedScramVerifier } from '../../lambda/src/scram-salt';
import { ensureRdsIamRole } from './consumer-roles';
import { FLEET_PROCESS_LIST, renderPoolerBootstrap, substitutePlaceholders } from '../model/pgbouncer-bootstrap';
import { HOST_AGENT_PATH } from '../model/pgbouncer-host-agent';
import { POOLER_HEALTH_PORT } from '../model/pgbouncer-host-serve';
import { POOLER_METRICS_PERIOD_SECONDS } from '../model/pgbouncer-metrics';
import { DEFAULT_FLEET_HOSTS, FLEET_PATHS, FLEET_PORTS, fleetPath } from '../model/pgbouncer-fleet';
import { RehearsalConfigError, RehearsalOperationError } from './errors';
import { REHEARSAL_CLUSTER, rehearsalAwsNames, rehearsalNetworkPlan } from './network/rehearsal-network';
import { chownTo } from './os-user';
import { FLEET_RESTART_POLICY, restartLoopArgs, UNLIMITED_RESTART_POLICY, type RestartPolicy } from './restart-loop';
import { cleanEnv, isAlive, logTail, spawnDaemon, type ProcessKind, type TrackedProcess } from './processes';
import type { RunningRehearsal } from './running';
import { clientConfig } from './sql';

/** A login of the engine: a consumer's or the read-only listener's server role. */
export interface PoolerHostLogin {
  readonly username: string;
  readonly password: string;
}

export interface PoolerHostOptions {
  /** The consumers' logins: each gets a role whose password is its secret's derived verifier, as the role bootstrap makes it. */
  readonly consumers: ReadonlyArray<PoolerHostLogin & { readonly access: 'READ_ONLY' | 'READ_WRITE' }>;
  /** The read-only listener's server role (read-only privileges). */
  readonly server: PoolerHostLogin;
  /** PgBouncer processes per listener, as a host's vCPUs (default 2). */
  readonly vcpus?: number;
  /** The NLB idle timeout the host's keepalives derive from (default 350 s). */
  readonly tcpIdleTimeoutSeconds?: number;
  /** The Fleet dimension of its metrics (default 'rehearsal-pooler'). */
  readonly fleetName?: string;
  /** The exporter's period (default POOLER_METRICS_PERIOD_SECONDS; a test shortens it). */
  readonly metricsPeriodSeconds?: number;
}

export interface PoolerHost {
  /** The directory standing in for the host's /. */
  readonly root: string;
  /** Where its listeners are reached from the root namespace (any address of the data namespace). */
  readonly host: string;
  readonly ports: { readonly readWrite: number; readonly readOnly: number };
  /** Each PgBouncer process's restart loop (its PgBouncer's own pid is in its pidfile: pgbouncerPid). */
  readonly processes: ReadonlyArray<TrackedProcess>;
  /** The restart loop of the host agent's `serve`: the health endpoint on healthPort, the exporter. */
  readonly agent: TrackedProcess;
  readonly healthPort: number;
  /** Where the exporter's PutMetricData requests land (one form body per file). */
  readonly cloudWatchDir: string;
  /** The deploy-time values its user data was substituted with (what Fn::Sub / templatefile would take). */
  readonly values: Readonly<Record<string, string>>;
}

const hostDir = (run: RunningRehearsal): string => join(run.layout.workDir, 'pooler-host');

/** Runs the engine's bootstrap on a host of the data namespace and starts its processes. */
export async function startPoolerHost(run: RunningRehearsal, options: PoolerHostOptions, timeoutMs = 30_000): Promise<PoolerHost> {
  const s = run.state.settings;
  if (s.network !== 'namespaces') throw new RehearsalConfigError([`network ${s.network}: a pooler host listens on every address of its host, so it runs in the data namespace: use network namespaces (as root)`]);
  const root = hostDir(run);
  const standin = join(run.layout.workDir, 'pooler-host-aws');
  mkdirSync(root, { recursive: true, mode: 0o755 });
  // The stand-ins' directory is traversed by the host agent (as the server user) to its cloudwatch/; the secrets stay root's.
  mkdirSync(standin, { recursive: true, mode: 0o755 });
  mkdirSync(join(standin, 'secrets'), { recursive: true, mode: 0o700 });

  const secret = (name: string, value: object): string => {
    writeFileSync(join(standin, 'secrets', `${name}.json`), JSON.stringify(value), { mode: 0o600 });
    return `arn:aws:secretsmanager:${s.deployment?.region ?? 'us-east-1'}:111122223333:secret:${name}`;
  };
  const tls = run.state.tls;
  const serverArn = secret('server', { username: options.server.username, password: options.server.password });
  const consumerArns = options.consumers.map((c, i) => secret(`consumer-${i + 1}`, { username: c.username, password: c.password }));
  await makeRoles(run, options, new Map([[options.server.username, serverArn], ...options.consumers.map((c, i): [string, string] => [c.username, consumerArns[i]!])]));
  const tlsArn = secret('tls', { certificate: readFileSync(tls.certFile, 'utf8'), privateKey: readFileSync(tls.keyFile, 'utf8'), ca: readFileSync(tls.caFile, 'utf8') });
  // What the install step takes from the packages: the CA the servers' certificates chain to.
  mkdirSync(dirname(fleetPath(root, FLEET_PATHS.rdsCaBundle)), { recursive: true, mode: 0o755 });
  copyFileSync(tls.caFile, fleetPath(root, FLEET_PATHS.rdsCaBundle));

  const names = rehearsalAwsNames(s);
  const replicas = run.state.nodes.filter((n) => n.name !== run.state.writerName);
  const values: Record<string, string> = {
    ClusterEndpoint: names.clusterEndpoint(s.deployment?.clusterName ?? REHEARSAL_CLUSTER),
    ReaderEndpoints: replicas.map((n) => names.instanceEndpoint(n.name)).join(' '),
    DatabaseName: run.secrets.database,
    ServerPort: String(s.port),
    ServerUser: options.server.username,
    Hosts: String(DEFAULT_FLEET_HOSTS),
    Vcpus: String(options.vcpus ?? 2),
    MaxConnections: String(s.sizingMaxConnections),
    MaxConnectionsPercent: String(s.pool.maxConnectionsPercent),
    MaxIdleConnectionsPercent: String(s.pool.maxIdleConnectionsPercent),
    BorrowTimeoutSeconds: String(s.pool.connectionBorrowTimeoutSeconds),
    MaxClientConnections: String(s.maxClientConnections),
    TcpIdleTimeoutSeconds: String(options.tcpIdleTimeoutSeconds ?? 350),
    PackagesBucket: 'stand-in',
    PackagesKey: 'stand-in',
    ServerSecretArn: serverArn,
    ConsumerSecretArns: consumerArns.join(' '),
    TlsSecretArn: tlsArn,
    FleetName: options.fleetName ?? 'rehearsal-pooler',
  };
  // What CloudFormation's Fn::Sub / Terraform's templatefile do with the user data.
  const script = join(standin, 'user-data.sh');
  writeFileSync(script, substitutePlaceholders(renderPoolerBootstrap(), values), { mode: 0o700 });
  const owner = run.user === undefined ? `${process.getuid?.() ?? 0}:${process.getgid?.() ?? 0}` : `${run.user.uid}:${run.user.gid}`;
  const bootstrap = spawnSync('bash', [script], { encoding: 'utf8', timeout: timeoutMs, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', APK_ROOT: root, APK_SKIP: 'install start', APK_AWS_STANDIN: standin, APK_FILE_OWNER: owner } });
  if (bootstrap.status !== 0) throw new RehearsalOperationError(`pooler host: the bootstrap failed (exit ${bootstrap.status ?? bootstrap.signal}): ${bootstrap.stderr.trim()}`);

  // The units' job: one process per listed name, as the server user, in the pooler host's budget.
  const namespace = rehearsalNetworkPlan(s).dataNamespace;
  const unit = (name: string, kind: ProcessKind, stopSignal: string, policy: RestartPolicy, program: string, args: ReadonlyArray<string>, env?: Record<string, string>): TrackedProcess => {
    const logFile = join(run.layout.logsDir, `pooler-host-${name}.log`);
    return run.track(
      spawnDaemon({ name: `pooler-host-${name}`, kind, program: '/bin/bash', args: restartLoopArgs(`pooler-host-${name}`, stopSignal, program, args, policy), logFile, cwd: root, user: run.user, namespace, cgroupProcsFiles: run.state.pgbouncer.cgroupProcsFiles, env: cleanEnv(env) }),
    );
  };
  const processes: TrackedProcess[] = [];
  for (const name of readFileSync(fleetPath(root, FLEET_PROCESS_LIST), 'utf8').trim().split(/\s+/)) {
    const socketDir = fleetPath(root, `${FLEET_PATHS.runDir}/${name}`);
    mkdirSync(dirname(socketDir), { recursive: true, mode: 0o755 });
    mkdirSync(socketDir, { recursive: true, mode: 0o700 });
    chmodSync(socketDir, 0o700);
    chownTo(run.user, socketDir);
    processes.push(unit(name, 'pgbouncer', 'INT', FLEET_RESTART_POLICY, run.state.pgbouncer.program, [fleetPath(root, `${FLEET_PATHS.dir}/${name}.ini`)]));
  }
  // Python ignores SIGINT when started in the background of a shell: TERM stops it.
  const cloudWatchDir = join(standin, 'cloudwatch');
  mkdirSync(cloudWatchDir, { recursive: true, mode: 0o755 });
  chownTo(run.user, cloudWatchDir);
  const agentEnv = { APK_ROOT: root, APK_AWS_STANDIN: standin, APK_METRICS_PERIOD: String(options.metricsPeriodSeconds ?? POOLER_METRICS_PERIOD_SECONDS) };
  const agent = unit('agent', 'host-agent', 'TERM', UNLIMITED_RESTART_POLICY, '/usr/bin/python3', [`${root}${HOST_AGENT_PATH}`, 'serve'], agentEnv);
  const host = run.state.plan.readWrite;
  await waitListening(run, options.consumers[0] ?? options.server, host, [...processes, agent], timeoutMs);
  return { root, host, ports: { readWrite: FLEET_PORTS.readWrite, readOnly: FLEET_PORTS.readOnly }, processes, agent, healthPort: POOLER_HEALTH_PORT, cloudWatchDir, values };
}

/** The pid of a PgBouncer process of the host (its pidfile), to crash it in a drill; undefined while it is down. */
export function pgbouncerPid(host: Pick<PoolerHost, 'root'>, name: string): number | undefined {
  try {
    const pid = Number(readFileSync(fleetPath(host.root, `${FLEET_PATHS.runDir}/${name}/pgbouncer.pid`), 'utf8').trim());
    return Number.isInteger(pid) && isAlive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The roles, made by the deployed role bootstrap's own code (applyDatabaseRoles) as it makes them for
 * this engine: each login with a password secret, so its password is the secret's derived verifier
 * (the one in the host's auth file); the read-only listener's server role as a READ_ONLY role.
 */
async function makeRoles(run: RunningRehearsal, options: PoolerHostOptions, secretArns: ReadonlyMap<string, string>): Promise<void> {
  const writer = run.state.nodes.find((n) => n.name === run.state.writerName)!;
  const logins = [...options.consumers, { ...options.server, access: 'READ_ONLY' as const }];
  const request: RoleBootstrapRequest = {
    database: run.secrets.database,
    roles: logins.map((l) => ({ name: l.username, access: l.access === 'READ_WRITE' ? EndpointRole.READ_WRITE : EndpointRole.READ_ONLY, passwordSecretArn: secretArns.get(l.username)! })),
  };
  const client = new Client(clientConfig({ ...run.adminEndpoint(writer), database: run.secrets.database }, 10_000));
  client.on('error', () => undefined);
  await client.connect();
  try {
    await ensureRdsIamRole(client);
    await applyDatabaseRoles(client, request, new Map(logins.map((l) => [l.username, derivedScramVerifier(l.username, l.password)])));
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Until a login through the read/write listener succeeds; a process that exits fails the start with its log. */
async function waitListening(run: RunningRehearsal, login: PoolerHostLogin, host: string, processes: ReadonlyArray<TrackedProcess>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const dead = processes.find((p) => !isAlive(p.pid));
    if (dead !== undefined) throw new RehearsalOperationError(`pooler host: ${dead.name} exited at start: ${logTail(dead.logFile)}`);
    const client = new Client({ host, port: FLEET_PORTS.readWrite, user: login.username, password: login.password, database: run.secrets.database, ssl: { ca: readFileSync(run.state.tls.caFile, 'utf8') }, connectionTimeoutMillis: 2000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return;
    } catch (err) {
      last = (err as Error).message;
      await new Promise((r) => setTimeout(r, 150));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  // The restart loops outlive a program that keeps exiting: their logs say why.
  throw new RehearsalOperationError(`pooler host: no login through ${host}:${FLEET_PORTS.readWrite} within ${timeoutMs} ms (${last}); ${processes.map((p) => `${p.name}: ${logTail(p.logFile, 5)}`).join('; ')}`);
}
