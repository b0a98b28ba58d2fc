/**
 * Bringing a rehearsal up, after the checks: the work dir, the initial state, then the processes in
 * order (writer, replicas, PgBouncer endpoints, comparison proxies, the health checker's supervisor), each tracked by pid as soon
 * as it is spawned so a failed start can stop everything it started.
 */
import { chownSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { EndpointRole } from '../model/vocabulary';
import { REHEARSAL_MAX_REPLICAS } from './rules';
import { applyConsumerRoles } from './consumer-roles';
import type { Binaries } from './binaries';
import { RehearsalStartError } from './errors';
import { poolerBudgetFiles } from './cpu-budgets';
import { CHECKER_UNIT, launchHealthSupervisor, readSupervisorReport } from './health-supervisor';
import type { WorkDirLayout } from './layout';
import type { OsUser } from './os-user';
import { launchHaproxy, launchPgpool, pgpoolSocketFile } from './comparison-proxies';
import { installPgBouncer, writeStandInSecrets } from './pgbouncer';
import { Poolers } from './poolers';
import { adminTarget, bootstrapWriter, cloneReplica, initWriter, launchNode, nodeState, setSynchronous, waitReady, waitStreaming } from './postgres';
import type { RehearsalNetworkMode } from './network/rehearsal-network';
import type { RehearsedDeployment } from './rehearsed-deployment';
import type { Listener } from './preflight';
import { isAlive, logTail, type TrackedProcess } from './processes';
import type { RunningRehearsal } from './running';
import type { Secrets } from './secrets';
import type { AddressPlan, ResolvedSettings } from './settings';
import { GiveUp, query, waitFor } from './sql';
import type { NodeState, PgBouncerEndpointSpec, RehearsalState } from './state';
import { generateTls } from './tls';
import type { Endpoint } from './types';

/**
 * The steps of `up`, in order, as a progress display names them (`network` only with namespaces, `consumer roles` only with --from,
 * `pooler hosts` only with --from a PgBouncer engine deployment).
 */
export const UP_PHASES = ['checks', 'network', 'instances', 'consumer roles', 'replication', 'poolers', 'comparison proxies', 'health checker', 'pooler hosts'] as const;
export type UpPhase = (typeof UP_PHASES)[number];
/** Hears each step of `up` as it begins: the phase and what it does. */
export type UpProgress = (phase: UpPhase, detail: string) => void;

/** Every address:port the rehearsal will listen on, with the role an AddressInUseError names. */
export function listeners(s: ResolvedSettings, plan: AddressPlan): Listener[] {
  const at = (role: string, address: string, port = s.port): Listener => ({ role, address, port });
  return [
    at('writer', plan.writer),
    ...plan.replicas.map((a, i) => at(`replica${i + 1}`, a)),
    at('read/write endpoint', plan.readWrite),
    at('read-only endpoint', plan.readOnly),
    ...(s.comparisonProxies ? [at('haproxy', plan.haproxy), at('pgpool', plan.pgpool), at('pgpool pcp', plan.pgpool, s.port + 1)] : []),
  ];
}

/** Clears what a previous run left (logs included) and makes the directories the servers write to. */
export function prepareWorkDir(layout: WorkDirLayout, user: OsUser | undefined): void {
  mkdirSync(layout.workDir, { recursive: true, mode: 0o755 });
  // The PgBouncer engine's paths too: a previous run's fleet file naming its stopped emulator would be taken up.
  const f = layout.poolerFleet;
  for (const dir of [layout.nodesDir, layout.pgbouncerDir, layout.comparisonProxiesDir, layout.tls.dir, layout.logsDir, layout.healthFile, layout.healthSupervisorFile, layout.processesFile, f.file, f.dir, f.hostsDir, f.loadBalancerDir, f.deploymentFile]) rmSync(dir, { recursive: true, force: true });
  mkdirSync(layout.logsDir, { mode: 0o755 });
  // Traversable by the server user; what is private lives one level down.
  mkdirSync(layout.nodesDir, { mode: 0o755 });
  mkdirSync(layout.comparisonProxiesDir, { mode: 0o755 });
  mkdirSync(layout.pgbouncerDir, { mode: 0o700 });
  if (user !== undefined) {
    // The servers write their logs and pgbouncer files there.
    chownSync(layout.logsDir, user.uid, user.gid);
    chownSync(layout.pgbouncerDir, user.uid, user.gid);
  }
}

/**
 * One endpoint's PgBouncer settings as the rehearsal runs them (the compatibility probes start a pooler
 * from the same spec, so what they measure is the rehearsal's ini).
 */
export function pgBouncerEndpointSpec(settings: ResolvedSettings, secrets: Secrets, name: string, role: EndpointRole, listenAddress: string): PgBouncerEndpointSpec {
  return {
    name,
    role,
    listenAddress,
    listenPort: settings.port,
    database: secrets.database,
    serverPort: settings.port,
    maxConnections: settings.sizingMaxConnections,
    pool: settings.pool,
    maxClientConnections: settings.maxClientConnections,
    processesPerTarget: settings.poolerProcesses,
    adminUser: secrets.adminUser,
  };
}

/** The state before anything runs: nodes, endpoints and certificates laid out in the work dir. */
export async function initialState(settings: ResolvedSettings, deployment: RehearsedDeployment | undefined, network: RehearsalNetworkMode, layout: WorkDirLayout, secrets: Secrets, user: OsUser | undefined, bin: Pick<Binaries, 'openssl' | 'pgbouncer'>): Promise<RehearsalState> {
  const plan = network.addressPlan(settings.replicas);
  const nodes = [nodeState(layout, 'writer', plan.writer, settings.port), ...plan.replicas.map((a, i) => nodeState(layout, `replica${i + 1}`, a, settings.port))];
  // Every replica address the block can hold, so a replica added later (addReplica) is covered too.
  const spareReplicas = network.addressPlan(REHEARSAL_MAX_REPLICAS).replicas;
  const tls = await generateTls(layout.tls.dir, [plan.writer, ...spareReplicas, plan.readWrite, plan.readOnly, plan.haproxy, plan.pgpool, ...network.certificateNames()], user, bin.openssl);
  return {
    version: 1,
    startedAt: new Date().toISOString(),
    phase: 'starting',
    settings,
    ...(deployment !== undefined ? { deployment } : {}),
    plan,
    tls,
    nodes,
    writerName: 'writer',
    pgbouncer: {
      program: installPgBouncer(bin.pgbouncer, layout),
      readWrite: network.withConsumerEndpoint(pgBouncerEndpointSpec(settings, secrets, 'read-write', EndpointRole.READ_WRITE, plan.readWrite), 'readWrite'),
      readOnly: network.withConsumerEndpoint(pgBouncerEndpointSpec(settings, secrets, 'read-only', EndpointRole.READ_ONLY, plan.readOnly), 'readOnly'),
      cgroupProcsFiles: poolerBudgetFiles(settings, 'pgbouncer'),
    },
  };
}

async function waitEndpoint(run: RunningRehearsal, endpoint: Endpoint, proc: TrackedProcess, timeoutMs: number): Promise<void> {
  try {
    await waitFor(`${proc.name} on ${endpoint.host}:${endpoint.port}`, timeoutMs, async () => {
      if (!isAlive(proc.pid)) throw new GiveUp(`${proc.name} exited during start`);
      // As the admin user: pgpool caches the backend connections of this login, and they must not
      // count against the application's budget on the replicas.
      await query({ ...endpoint, user: run.secrets.adminUser, password: run.secrets.adminPassword, database: 'postgres' }, 'SELECT 1', undefined, 1000);
      return true;
    }, 200);
  } catch (err) {
    throw new RehearsalStartError(proc.name, (err as Error).message, logTail(proc.logFile), { cause: err });
  }
}

async function startComparisonProxies(run: RunningRehearsal, bin: Required<Binaries>, writer: NodeState, replicas: ReadonlyArray<NodeState>, timeoutMs: () => number): Promise<void> {
  const s = run.state.settings;
  const plan = run.state.plan;
  const backends = replicas.map((r) => ({ name: r.name, address: r.address, port: r.port }));
  const haproxy = run.track(
    launchHaproxy({ listenAddress: plan.haproxy, listenPort: s.port, replicas: backends, maxClientConnections: s.maxClientConnections, adminSocket: run.layout.haproxy.adminSocket }, run.layout.haproxy, bin.haproxy, run.user, poolerBudgetFiles(s, 'haproxy')),
  );
  const pgpool = run.track(
    launchPgpool(
      { listenAddress: plan.pgpool, listenPort: s.port, paths: run.layout.pgpool, writer: { name: writer.name, address: writer.address, port: writer.port }, replicas: backends, secrets: run.secrets, tls: run.state.tls, children: 16 },
      bin.pgpool,
      run.user,
      poolerBudgetFiles(s, 'pgpool'),
    ),
  );
  await waitEndpoint(run, run.endpoints.haproxy!, haproxy, timeoutMs());
  await waitEndpoint(run, run.endpoints.pgpool!, pgpool, timeoutMs());
  // A pgpool-II that ignored socket_dir (another major names it differently) would share a system directory.
  const socket = pgpoolSocketFile({ paths: run.layout.pgpool, listenPort: s.port });
  if (!existsSync(socket)) throw new RehearsalStartError('pgpool', `its Unix socket is not at ${socket}: this pgpool-II did not take socket_dir (the rehearsal renders pgpool-II 4.3's settings)`, logTail(pgpool.logFile));
}

/** The supervisor (health-supervisor.ts), which starts the checker and keeps it and the PgBouncer processes running. */
async function startHealthChecker(run: RunningRehearsal, timeoutMs: number): Promise<void> {
  const supervisor = run.track(launchHealthSupervisor(run.layout, run.state.settings.healthCheckIntervalMs));
  try {
    await waitFor('the health checker to report', timeoutMs, async () => {
      if (!isAlive(supervisor.pid)) throw new GiveUp('the health supervisor exited');
      const report = readSupervisorReport(run.layout.healthSupervisorFile);
      const failed = report?.failed?.[CHECKER_UNIT];
      if (failed !== undefined) throw new GiveUp(`the supervisor gave up restarting the health checker: ${failed}`);
      return report?.checkerPid !== undefined && run.health()?.pid === report.checkerPid ? true : undefined;
    });
  } catch (err) {
    throw new RehearsalStartError('health-checker', (err as Error).message, `${logTail(supervisor.logFile, 10)}\n--- health checker ---\n${logTail(run.layout.healthCheckerLog)}`, { cause: err });
  }
}

/** The read/write endpoint's processes for the writer, the read-only endpoint's for each replica (poolers.ts). */
async function startPoolers(run: RunningRehearsal, writer: NodeState, replicas: ReadonlyArray<NodeState>, timeoutMs: () => number): Promise<void> {
  writeStandInSecrets(run.layout.pgbouncerDir, run.secrets, run.state.tls, run.user);
  const poolers = new Poolers({ layout: run.layout, pgbouncer: run.state.pgbouncer, secrets: run.secrets, user: run.user });
  try {
    await poolers.startGroup('readWrite', writer.address, timeoutMs());
    for (const r of replicas) await poolers.startGroup('readOnly', r.address, timeoutMs());
  } catch (err) {
    throw new RehearsalStartError('pgbouncer', (err as Error).message, '', { cause: err });
  }
}

/** Starts every process of the state, within settings.startTimeoutMs; the caller stops them on failure. */
export async function startProcesses(run: RunningRehearsal, bin: Binaries, progress: UpProgress = () => undefined): Promise<void> {
  const s = run.state.settings;
  const deadline = Date.now() + s.startTimeoutMs;
  const left = (): number => Math.max(1000, deadline - Date.now());
  const ctx = run.ctx(bin.postgresBinDir);
  const [writer, ...replicas] = run.state.nodes as [NodeState, ...NodeState[]];

  progress('instances', `writer ${writer.address}:${writer.port}: initdb, start`);
  await initWriter(ctx, writer, left());
  const writerProc = run.track(launchNode(ctx, writer));
  await waitReady(ctx, writer, writerProc, left());
  await bootstrapWriter(ctx, writer);
  // A rehearsed deployment's consumer roles, by the deployed role bootstrap's own code.
  const deployment = run.state.deployment;
  if (deployment !== undefined) progress('consumer roles', `the deployment's consumer roles, by its role bootstrap's code`);
  if (deployment !== undefined) await applyConsumerRoles(adminTarget(ctx, writer), deployment, run.secrets.consumerLogins ?? []);

  if (replicas.length > 0) progress('instances', `${replicas.length} replica${replicas.length === 1 ? '' : 's'} (${replicas.map((r) => r.address).join(', ')}): base backup from the writer, start`);
  await Promise.all(replicas.map((r) => cloneReplica(ctx, r, writer, left())));
  const replicaProcs = replicas.map((r) => run.track(launchNode(ctx, r)));
  await Promise.all(replicas.map((r, i) => waitReady(ctx, r, replicaProcs[i]!, left())));
  progress('replication', `waiting for ${replicas.length} replica${replicas.length === 1 ? '' : 's'} to stream${s.synchronous ? ', then synchronous commit (ANY 1)' : ' (asynchronous)'}`);
  await waitStreaming(ctx, writer, replicas.map((r) => r.name), left());
  // Only now: with quorum commit on and no replica attached, the bootstrap commits would wait forever.
  if (s.synchronous) await setSynchronous(ctx, writer, true);

  const plan = run.state.plan;
  progress('poolers', `PgBouncer, ${s.poolerProcesses} process${s.poolerProcesses === 1 ? '' : 'es'} per target: read/write endpoint ${plan.readWrite}, read-only endpoint ${plan.readOnly}`);
  await startPoolers(run, writer, replicas, left);

  if (s.comparisonProxies && bin.haproxy !== undefined && bin.pgpool !== undefined) progress('comparison proxies', `HAProxy ${plan.haproxy} (reader endpoint analog), pgpool-II ${plan.pgpool}`);
  if (s.comparisonProxies && bin.haproxy !== undefined && bin.pgpool !== undefined) await startComparisonProxies(run, { ...bin, haproxy: bin.haproxy, pgpool: bin.pgpool }, writer, replicas, left);
  progress('health checker', 'its supervisor, then the first health report');
  await startHealthChecker(run, left());
  run.state.phase = 'up';
  run.save();
}
