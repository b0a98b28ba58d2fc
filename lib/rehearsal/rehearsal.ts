/**
 * A local rehearsal of the deployed data path on one machine, from real parts: a PostgreSQL 15 writer
 * and streaming replicas (each its own loopback "host"), PgBouncer read/write and read-only endpoints
 * sized like the AWS proxy, a health checker that re-points them, and HAProxy / pgpool-II peers.
 *
 *   const r = await Rehearsal.up({ replicas: 2 });   // validated first; a failed start stops what it started
 *   r.endpoints.readOnly ...; await r.status(); await r.killReplica(0); await r.failover();
 *   await r.down();                                   // by pid, verified
 *
 * The CLI (bin/rehearse.ts) uses the same API; `Rehearsal.attach(workDir)` picks up a running one.
 */
import { randomBytes } from 'node:crypto';
import { chownSync, mkdirSync, rmSync } from 'node:fs';
import { extname, join } from 'node:path';
import { pgBouncerPoolSizes, type PgBouncerEndpointSpec } from '../model/pgbouncer';
import { scramSha256Verifier } from '../model/scram';
import { findBinaries, type Binaries } from './binaries';
import { RehearsalOperationError, RehearsalStartError, RehearsalStateError } from './errors';
import { serverOsUser, type OsUser } from './os-user';
import { haproxyAddServer, haproxyAdminSocket, launchHaproxy, launchPgpool } from './peers';
import { consoleTarget, launchPgBouncer, showPools, type PoolRow, pgBouncerPaths, waitPgBouncerReady, writePgBouncerConfig } from './pgbouncer';
import {
  adminTarget,
  bootstrapWriter,
  cloneReplica,
  follow,
  initWriter,
  launchNode,
  nodeLayout,
  promote,
  setSynchronous,
  waitReady,
  waitStreaming,
  type PostgresContext,
} from './postgres';
import { assertAddressesFree, assertWorkDirUsable, type Listener } from './preflight';
import { REHEARSAL_MAX_REPLICAS } from './rules';
import { cleanEnv, groupMembers, isAlive, isOurs, killProcess, logTail, spawnDaemon, stopProcess, type TrackedProcess } from './processes';
import { addressPlan, resolveSettings, validateSettings, type AddressPlan, type RehearsalSettings, type ResolvedSettings } from './settings';
import { GiveUp, query, waitFor } from './sql';
import {
  HEALTH_FILE,
  SECRETS_FILE,
  readHealth,
  readSecrets,
  readState,
  writeSecrets,
  writeState,
  type HealthReport,
  type NodeState,
  type PgBouncerState,
  type RehearsalState,
  type Secrets,
} from './state';
import { generateTls } from './tls';

/** What a client needs to connect somewhere in the rehearsal (always TLS, verify-full with caFile). */
export interface Endpoint {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
  readonly password: string;
  readonly caFile: string;
}

export interface Endpoints {
  /** PgBouncer read/write endpoint (RDS Proxy's default endpoint). */
  readonly readWrite: Endpoint;
  /** PgBouncer read-only endpoint over the live replicas (RDS Proxy READ_ONLY endpoint). */
  readonly readOnly: Endpoint;
  /** HAProxy TCP round-robin over the replicas (Aurora reader endpoint analog); absent without peers. */
  readonly haproxy?: Endpoint;
  /** pgpool-II read/write split (ProxySQL analog); absent without peers. */
  readonly pgpool?: Endpoint;
  /** The current writer, directly. */
  readonly writer: Endpoint;
  /** The current replicas, directly (including ones that were killed). */
  readonly replicas: ReadonlyArray<Endpoint>;
}

export interface KillReport {
  readonly name: string;
  readonly address: string;
  /** Time from the kill until the health checker had removed the replica from the read-only pool. */
  readonly droppedAfterMs: number;
}

export interface FailoverReport {
  readonly oldWriter: string;
  readonly newWriter: string;
  readonly newWriterAddress: string;
  /** Replicas re-pointed at the new writer. */
  readonly followers: ReadonlyArray<string>;
  /** Kill -> promotion finished. */
  readonly promotedAfterMs: number;
  /** Kill -> the read/write endpoint points at the new writer. */
  readonly repointedAfterMs: number;
}

export interface AddReplicaReport {
  readonly name: string;
  readonly address: string;
  /** Start of addReplica -> the new replica streams from the writer. */
  readonly streamingAfterMs: number;
  /** Start -> the health checker has put it into the read-only endpoint's host list. */
  readonly inReadOnlyPoolAfterMs: number;
  /** Whether HAProxy (the reader-endpoint analog) now round-robins over it too. */
  readonly inHaproxy: boolean;
}

export interface ProcessStatus extends TrackedProcess {
  readonly alive: boolean;
}

export interface NodeStatus {
  readonly name: string;
  readonly address: string;
  readonly port: number;
  readonly role: 'writer' | 'replica' | 'down';
  readonly pid: number | undefined;
}

export interface ReplicationStatus {
  readonly application_name: string;
  readonly client_addr: string;
  readonly state: string;
  readonly sync_state: string;
  readonly replay_lag_bytes: number;
}

export interface RehearsalStatus {
  readonly workDir: string;
  readonly phase: RehearsalState['phase'];
  readonly settings: ResolvedSettings;
  readonly endpoints: Endpoints;
  readonly poolSizes: { readonly readWrite: number; readonly readOnly: number };
  readonly processes: ReadonlyArray<ProcessStatus>;
  readonly nodes: ReadonlyArray<NodeStatus>;
  readonly replication: ReadonlyArray<ReplicationStatus>;
  /** SHOW POOLS of each PgBouncer endpoint, or why it could not be read. */
  readonly pools: Readonly<Record<'readWrite' | 'readOnly', ReadonlyArray<PoolRow> | string>>;
  readonly health: HealthReport | undefined;
}

const APP_DATABASE = 'kit';

/** The app password and its SCRAM verifier, which the writer and PgBouncer's auth file both store. */
function appCredentials(appPassword: string): Pick<Secrets, 'appPassword' | 'appPasswordVerifier'> {
  return { appPassword, appPasswordVerifier: scramSha256Verifier(appPassword) };
}

function newSecrets(): Secrets {
  const pw = (): string => randomBytes(18).toString('base64url');
  return {
    database: APP_DATABASE,
    adminUser: 'kit_admin',
    adminPassword: pw(),
    appUser: 'kit_app',
    ...appCredentials(pw()),
    replicationUser: 'kit_replicator',
    replicationPassword: pw(),
  };
}

/** How the health checker process is started: compiled JS as is, TypeScript through ts-node. */
function healthCheckerCommand(): { program: string; args: string[]; env: Record<string, string> } {
  const script = require.resolve('./health-checker');
  if (extname(script) !== '.ts') return { program: process.execPath, args: [script], env: {} };
  // ts-node looks for tsconfig.json from the working directory (the work dir): point it at the kit's.
  return {
    program: process.execPath,
    args: ['-r', require.resolve('ts-node/register/transpile-only'), script],
    env: { TS_NODE_PROJECT: join(__dirname, '..', '..', 'tsconfig.json'), TS_NODE_TRANSPILE_ONLY: 'true' },
  };
}

export class Rehearsal {
  private constructor(
    private state: RehearsalState,
    private readonly secrets: Secrets,
    private readonly user: OsUser | undefined,
  ) {}

  get workDir(): string {
    return this.state.settings.workDir;
  }

  get settings(): ResolvedSettings {
    return this.state.settings;
  }

  get plan(): AddressPlan {
    return this.state.plan;
  }

  /** Picks up the rehearsal running in `workDir` (for status, down, drills from another process). */
  static attach(workDir: string): Rehearsal {
    const resolved = resolveSettings({ workDir }).workDir;
    const state = readState(resolved);
    if (state === undefined) throw new RehearsalStateError(`no rehearsal in ${resolved} (no state.json): start one with \`rehearse up\``);
    return new Rehearsal(state, readSecrets(state.secretsFile), serverOsUser());
  }

  /** Validates, checks binaries and addresses, then starts everything; on failure stops what it started. */
  static async up(input: RehearsalSettings = {}): Promise<Rehearsal> {
    const settings = resolveSettings(input);
    validateSettings(settings);
    const binaries = findBinaries({ peers: settings.peers });
    const user = serverOsUser();
    assertWorkDirUsable(settings.workDir, user);
    const previous = readState(settings.workDir);
    if (previous !== undefined && previous.processes.some((p) => isOurs(p))) {
      throw new RehearsalStateError(`a rehearsal is already running in ${settings.workDir}: run \`rehearse down --work-dir ${settings.workDir}\` first`);
    }
    const plan = addressPlan(settings);
    await assertAddressesFree(listeners(settings, plan));

    const workDir = settings.workDir;
    mkdirSync(workDir, { recursive: true, mode: 0o755 });
    for (const sub of ['nodes', 'pgbouncer', 'peers', 'tls', 'logs']) rmSync(join(workDir, sub), { recursive: true, force: true });
    mkdirSync(join(workDir, 'logs'), { mode: 0o755 });
    // Traversable by the server user; what is private lives one level down.
    mkdirSync(join(workDir, 'nodes'), { mode: 0o755 });
    mkdirSync(join(workDir, 'peers'), { mode: 0o755 });
    mkdirSync(join(workDir, 'pgbouncer'), { mode: 0o700 });
    if (user !== undefined) {
      // The servers write their logs and pgbouncer files there.
      chownSync(join(workDir, 'logs'), user.uid, user.gid);
      chownSync(join(workDir, 'pgbouncer'), user.uid, user.gid);
    }
    const secrets = newSecrets();
    const secretsFile = join(workDir, SECRETS_FILE);
    writeSecrets(secretsFile, secrets);
    rmSync(join(workDir, HEALTH_FILE), { force: true });

    const nodes = [nodeLayout(workDir, 'writer', plan.writer, settings.port), ...plan.replicas.map((a, i) => nodeLayout(workDir, `replica${i + 1}`, a, settings.port))];
    // Every replica address the block can hold, so a replica added later (addReplica) is covered too.
    const spareReplicas = addressPlan({ ...settings, replicas: REHEARSAL_MAX_REPLICAS }).replicas;
    const tls = await generateTls(join(workDir, 'tls'), [plan.writer, ...spareReplicas, plan.readWrite, plan.readOnly, plan.haproxy, plan.pgpool], user, binaries.openssl);
    const pgbouncerState = (name: string, processName: string, listenAddress: string, hosts: string[]): PgBouncerState => {
      const paths = pgBouncerPaths(workDir, processName);
      const spec: PgBouncerEndpointSpec = {
        name,
        listenAddress,
        listenPort: settings.port,
        database: secrets.database,
        hosts,
        serverPort: settings.port,
        maxConnections: settings.sizingMaxConnections,
        pool: settings.pool,
        maxClientConnections: settings.maxClientConnections,
        adminUser: secrets.adminUser,
        files: { authFile: join(workDir, 'pgbouncer', 'userlist.txt'), pidFile: paths.pidFile, unixSocketDir: paths.socketDir, tlsCertFile: tls.certFile, tlsKeyFile: tls.keyFile, tlsCaFile: tls.caFile },
      };
      return { spec, configFile: paths.configFile, processName };
    };
    const state: RehearsalState = {
      version: 1,
      startedAt: new Date().toISOString(),
      phase: 'starting',
      settings,
      plan,
      tls,
      nodes,
      writerName: 'writer',
      pgbouncer: {
        readWrite: pgbouncerState('read-write', 'pgbouncer-rw', plan.readWrite, [plan.writer]),
        readOnly: pgbouncerState('read-only', 'pgbouncer-ro', plan.readOnly, [...plan.replicas]),
      },
      processes: [],
      secretsFile,
      healthFile: join(workDir, HEALTH_FILE),
    };
    writeState(workDir, state);
    const rehearsal = new Rehearsal(state, secrets, user);
    try {
      await rehearsal.start(binaries);
    } catch (err) {
      // Stop everything this attempt started, by pid, before reporting.
      await rehearsal.stopAll().catch(() => undefined);
      throw err;
    }
    return rehearsal;
  }

  private ctx(binDir = ''): PostgresContext {
    return { binDir, user: this.user, settings: this.state.settings, tls: this.state.tls, secrets: this.secrets };
  }

  private track(proc: TrackedProcess): TrackedProcess {
    this.state.processes.push(proc);
    writeState(this.workDir, this.state);
    return proc;
  }

  private async start(bin: Binaries): Promise<void> {
    const s = this.state.settings;
    const deadline = Date.now() + s.startTimeoutMs;
    const left = (): number => Math.max(1000, deadline - Date.now());
    const ctx = this.ctx(bin.postgresBinDir);
    const [writer, ...replicas] = this.state.nodes as [NodeState, ...NodeState[]];

    await initWriter(ctx, writer, left());
    const writerProc = this.track(launchNode(ctx, writer));
    await waitReady(ctx, writer, writerProc, left());
    await bootstrapWriter(ctx, writer);

    await Promise.all(replicas.map((r) => cloneReplica(ctx, r, writer, left())));
    const replicaProcs = replicas.map((r) => this.track(launchNode(ctx, r)));
    await Promise.all(replicas.map((r, i) => waitReady(ctx, r, replicaProcs[i]!, left())));
    await waitStreaming(ctx, writer, replicas.map((r) => r.name), left());
    // Only now: with quorum commit on and no replica attached, the bootstrap commits would wait forever.
    if (s.synchronous) await setSynchronous(ctx, writer, true);

    const pgb = this.state.pgbouncer;
    for (const endpoint of [pgb.readWrite, pgb.readOnly]) writePgBouncerConfig(endpoint, this.secrets, this.user);
    for (const endpoint of [pgb.readWrite, pgb.readOnly]) {
      const proc = this.track(launchPgBouncer(endpoint, bin.pgbouncer, pgBouncerPaths(this.workDir, endpoint.processName).logFile, join(this.workDir, 'pgbouncer'), this.user));
      await waitPgBouncerReady(consoleTarget(endpoint.spec, this.secrets, this.state.tls.caFile), proc, left());
    }

    if (s.peers && bin.haproxy !== undefined && bin.pgpool !== undefined) {
      const backends = replicas.map((r) => ({ name: r.name, address: r.address, port: r.port }));
      const logs = join(this.workDir, 'logs');
      const haproxyDir = join(this.workDir, 'peers', 'haproxy');
      const haproxy = this.track(
        launchHaproxy({ listenAddress: this.plan.haproxy, listenPort: s.port, replicas: backends, maxClientConnections: s.maxClientConnections, adminSocket: haproxyAdminSocket(haproxyDir) }, haproxyDir, bin.haproxy, join(logs, 'haproxy.log'), this.user),
      );
      const pgpool = this.track(
        launchPgpool(
          { listenAddress: this.plan.pgpool, listenPort: s.port, dir: join(this.workDir, 'peers', 'pgpool'), writer: { name: writer.name, address: writer.address, port: writer.port }, replicas: backends, secrets: this.secrets, tls: this.state.tls, children: 16 },
          bin.pgpool,
          join(logs, 'pgpool.log'),
          this.user,
        ),
      );
      await this.waitEndpoint(this.endpoints.haproxy!, haproxy, left());
      await this.waitEndpoint(this.endpoints.pgpool!, pgpool, left());
    }

    const { program, args, env } = healthCheckerCommand();
    const checker = this.track(
      spawnDaemon({ name: 'health-checker', kind: 'health-checker', program, args: [...args, this.workDir, String(s.healthCheckIntervalMs)], logFile: join(this.workDir, 'logs', 'health-checker.log'), cwd: this.workDir, env: cleanEnv(env) }),
    );
    try {
      await waitFor('the health checker to report', left(), async () => {
        if (!isAlive(checker.pid)) throw new GiveUp('health checker exited');
        return readHealth(this.state.healthFile)?.pid === checker.pid ? true : undefined;
      });
    } catch (err) {
      throw new RehearsalStartError('health-checker', (err as Error).message, logTail(checker.logFile), { cause: err });
    }
    this.state.phase = 'up';
    writeState(this.workDir, this.state);
  }

  private async waitEndpoint(endpoint: Endpoint, proc: TrackedProcess, timeoutMs: number): Promise<void> {
    try {
      await waitFor(`${proc.name} on ${endpoint.host}:${endpoint.port}`, timeoutMs, async () => {
        if (!isAlive(proc.pid)) throw new GiveUp(`${proc.name} exited during start`);
        // As the admin user: pgpool caches the backend connections of this login, and they must not
        // count against the application's budget on the replicas.
        await query({ ...endpoint, user: this.secrets.adminUser, password: this.secrets.adminPassword, database: 'postgres' }, 'SELECT 1', undefined, 1000);
        return true;
      }, 200);
    } catch (err) {
      throw new RehearsalStartError(proc.name, (err as Error).message, logTail(proc.logFile), { cause: err });
    }
  }

  private endpoint(name: string, host: string): Endpoint {
    return { name, host, port: this.state.settings.port, database: this.secrets.database, user: this.secrets.appUser, password: this.secrets.appPassword, caFile: this.state.tls.caFile };
  }

  private get writerNode(): NodeState {
    const node = this.state.nodes.find((n) => n.name === this.state.writerName);
    if (node === undefined) throw new RehearsalStateError(`state names writer ${this.state.writerName}, which is not a node`);
    return node;
  }

  private get replicaNodes(): NodeState[] {
    return this.state.nodes.filter((n) => n.name !== this.state.writerName);
  }

  get endpoints(): Endpoints {
    const p = this.state.plan;
    const withPeers = this.state.processes.some((x) => x.kind === 'haproxy');
    return {
      readWrite: this.endpoint('read-write', p.readWrite),
      readOnly: this.endpoint('read-only', p.readOnly),
      ...(withPeers ? { haproxy: this.endpoint('haproxy', p.haproxy), pgpool: this.endpoint('pgpool', p.pgpool) } : {}),
      writer: this.endpoint(this.writerNode.name, this.writerNode.address),
      replicas: this.replicaNodes.map((n) => this.endpoint(n.name, n.address)),
    };
  }

  /** The superuser on an instance (for drills and checks that look behind the proxy). */
  adminEndpoint(nodeName: string): Endpoint {
    const node = this.state.nodes.find((n) => n.name === nodeName);
    if (node === undefined) throw new RehearsalOperationError(`no node named ${nodeName}`);
    return { ...adminTarget(this.ctx(), node), name: nodeName };
  }

  /** Server connections each PgBouncer pool may open: poolSizing() of the settings. */
  get poolSizes(): { readWrite: number; readOnly: number } {
    return {
      readWrite: pgBouncerPoolSizes(this.state.pgbouncer.readWrite.spec).poolSize,
      readOnly: pgBouncerPoolSizes(this.state.pgbouncer.readOnly.spec).poolSize,
    };
  }

  health(): HealthReport | undefined {
    return readHealth(this.state.healthFile);
  }

  async status(): Promise<RehearsalStatus> {
    const ctx = this.ctx();
    const procByName = new Map(this.state.processes.map((p) => [p.name, p]));
    const nodes = await Promise.all(
      this.state.nodes.map(async (n): Promise<NodeStatus> => {
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
    const writer = nodes.find((n) => n.role === 'writer' && n.name === this.state.writerName) ?? nodes.find((n) => n.role === 'writer');
    let replication: ReplicationStatus[] = [];
    if (writer !== undefined) {
      replication = await query<ReplicationStatus>(
        adminTarget(ctx, writer),
        `SELECT application_name, host(client_addr) AS client_addr, state, sync_state,
                COALESCE(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn), 0)::bigint::int AS replay_lag_bytes
         FROM pg_stat_replication ORDER BY application_name`,
        undefined,
        1500,
      ).catch(() => []);
    }
    const pools = async (which: 'readWrite' | 'readOnly'): Promise<ReadonlyArray<PoolRow> | string> => {
      try {
        return await showPools(consoleTarget(this.state.pgbouncer[which].spec, this.secrets, this.state.tls.caFile));
      } catch (err) {
        return `unavailable: ${(err as Error).message}`;
      }
    };
    return {
      workDir: this.workDir,
      phase: this.state.phase,
      settings: this.state.settings,
      endpoints: this.endpoints,
      poolSizes: this.poolSizes,
      processes: this.state.processes.map((p) => ({ ...p, alive: isOurs(p) })),
      nodes,
      replication,
      pools: { readWrite: await pools('readWrite'), readOnly: await pools('readOnly') },
      health: this.health(),
    };
  }

  /** Crashes replica `index` (0-based among the current replicas) and waits until the read-only pool drops it. */
  async killReplica(index: number, timeoutMs = 15000): Promise<KillReport> {
    const node = this.replicaNodes[index];
    if (node === undefined) throw new RehearsalOperationError(`killReplica(${index}): there are ${this.replicaNodes.length} replicas (index from 0)`);
    const proc = this.process(node.name);
    const started = Date.now();
    await killProcess(proc);
    await waitFor(`the health checker to drop ${node.name} from the read-only pool`, timeoutMs, async () => {
      const h = this.health();
      return h !== undefined && Date.parse(h.checkedAt) > started && !h.readOnlyHosts.includes(node.address) ? true : undefined;
    }, 50);
    return { name: node.name, address: node.address, droppedAfterMs: Date.now() - started };
  }

  /**
   * Writer failover, as Aurora does it: the writer dies (SIGKILL to its process group), the most
   * up-to-date live replica is promoted, the other replicas follow it, quorum commit is restored, and
   * the health checker re-points the read/write endpoint. Returns the timings.
   */
  async failover(timeoutMs = 30000): Promise<FailoverReport> {
    const ctx = this.ctx();
    const old = this.writerNode;
    const started = Date.now();
    await killProcess(this.process(old.name));

    const candidates = this.replicaNodes.filter((n) => isOurs(this.process(n.name)));
    const positions = await Promise.all(
      candidates.map(async (n) => {
        try {
          const rows = await query<{ lag: string }>(adminTarget(ctx, n), "SELECT pg_wal_lsn_diff(COALESCE(pg_last_wal_receive_lsn(), '0/0'), '0/0')::text AS lag", undefined, 2000);
          return { node: n, lsn: BigInt((rows[0]?.lag ?? '0').split('.')[0] ?? '0') };
        } catch {
          return undefined;
        }
      }),
    );
    const live = positions.filter((p): p is { node: NodeState; lsn: bigint } => p !== undefined);
    // The replica that received the most WAL: with quorum commit it holds every acknowledged commit.
    live.sort((a, b) => (a.lsn === b.lsn ? 0 : a.lsn > b.lsn ? -1 : 1));
    const chosen = live[0]?.node;
    if (chosen === undefined) throw new RehearsalOperationError(`failover: no live replica to promote after killing ${old.name}`);

    await promote(ctx, chosen, Math.ceil(timeoutMs / 1000));
    const promotedAfterMs = Date.now() - started;
    this.state.writerName = chosen.name;
    writeState(this.workDir, this.state);

    const followers = live.slice(1).map((p) => p.node);
    await Promise.all(followers.map((f) => follow(ctx, f, chosen)));
    await waitFor(`the read/write endpoint to be re-pointed at ${chosen.name}`, timeoutMs, async () => {
      const h = this.health();
      return h !== undefined && h.readWriteHosts.length === 1 && h.readWriteHosts[0] === chosen.address ? true : undefined;
    }, 50);
    const repointedAfterMs = Date.now() - started;
    if (followers.length > 0) {
      await waitStreaming(ctx, chosen, followers.map((f) => f.name), timeoutMs);
      if (this.state.settings.synchronous) await setSynchronous(ctx, chosen, true);
    }
    return { oldWriter: old.name, newWriter: chosen.name, newWriterAddress: chosen.address, followers: followers.map((f) => f.name), promotedAfterMs, repointedAfterMs };
  }

  /**
   * Adds a streaming replica while everything runs, as adding an Aurora reader does: pg_basebackup
   * from the writer onto the next address of the block, start it, wait until it streams; then the
   * health checker (which re-reads the node list every round) puts it into the read-only endpoint's
   * host list, and HAProxy gets it through its runtime API. pgpool-II is not told (it keeps its list).
   */
  async addReplica(timeoutMs = 60000): Promise<AddReplicaReport> {
    const s = this.state.settings;
    const started = Date.now();
    const left = (): number => Math.max(1000, started + timeoutMs - Date.now());
    const count = this.state.nodes.length - 1;
    if (count >= REHEARSAL_MAX_REPLICAS) throw new RehearsalOperationError(`addReplica: already ${count} replicas, the most the rehearsal (and Aurora) allows is ${REHEARSAL_MAX_REPLICAS}`);
    const address = addressPlan({ addressBlock: s.addressBlock, replicas: count + 1 }).replicas[count]!;
    let name = `replica${count + 1}`;
    for (let i = count + 2; this.state.nodes.some((n) => n.name === name); i++) name = `replica${i}`;
    await assertAddressesFree([{ role: name, address, port: s.port }]);
    const bin = findBinaries({ peers: s.peers });
    const ctx = this.ctx(bin.postgresBinDir);
    const writer = this.writerNode;
    const node = nodeLayout(this.workDir, name, address, s.port);
    await cloneReplica(ctx, node, writer, left());
    const proc = this.track(launchNode(ctx, node));
    try {
      await waitReady(ctx, node, proc, left());
      await waitStreaming(ctx, writer, [name], left());
    } catch (err) {
      await stopProcess(proc).catch(() => undefined);
      throw err;
    }
    const streamingAfterMs = Date.now() - started;
    this.state.nodes.push(node);
    this.state = { ...this.state, plan: { ...this.state.plan, replicas: [...this.state.plan.replicas, address] } };
    writeState(this.workDir, this.state);

    let inHaproxy = false;
    if (this.state.processes.some((p) => p.kind === 'haproxy' && isOurs(p))) {
      await haproxyAddServer(haproxyAdminSocket(join(this.workDir, 'peers', 'haproxy')), { name, address, port: s.port });
      inHaproxy = true;
    }
    await waitFor(`the health checker to add ${name} to the read-only pool`, left(), async () => {
      const h = this.health();
      return h !== undefined && h.readOnlyHosts.includes(address) ? true : undefined;
    }, 50);
    return { name, address, streamingAfterMs, inReadOnlyPoolAfterMs: Date.now() - started, inHaproxy };
  }

  /** Pid of a tracked process that is still ours (postmasters for CPU accounting, ...). */
  pidOf(name: string): number | undefined {
    const proc = [...this.state.processes].reverse().find((p) => p.name === name);
    return proc !== undefined && isOurs(proc) ? proc.pid : undefined;
  }

  private process(name: string): TrackedProcess {
    const proc = [...this.state.processes].reverse().find((p) => p.name === name);
    if (proc === undefined) throw new RehearsalOperationError(`no process named ${name}`);
    return proc;
  }

  /** Stops every tracked process, newest first; returns the pids that survived (none on success). */
  private async stopAll(): Promise<number[]> {
    const leftover: number[] = [];
    for (const proc of [...this.state.processes].reverse()) leftover.push(...(await stopProcess(proc)));
    return leftover;
  }

  /** Stops everything by pid, verifies nothing is left, and removes the data (logs are kept). */
  async down(): Promise<{ stopped: string[] }> {
    const leftover = await this.stopAll();
    const stillRunning = this.state.processes.filter((p) => isOurs(p) || groupMembers(p.pid).length > 0);
    if (leftover.length > 0 || stillRunning.length > 0) {
      throw new RehearsalOperationError(`down: processes still running after SIGKILL: ${[...new Set([...leftover, ...stillRunning.map((p) => p.pid)])].join(', ')}`);
    }
    for (const sub of ['nodes', 'pgbouncer', 'peers', 'tls', SECRETS_FILE, HEALTH_FILE, 'state.json']) rmSync(join(this.workDir, sub), { recursive: true, force: true });
    return { stopped: this.state.processes.map((p) => p.name) };
  }
}

function listeners(s: ResolvedSettings, plan: AddressPlan): Listener[] {
  const at = (role: string, address: string, port = s.port): Listener => ({ role, address, port });
  return [
    at('writer', plan.writer),
    ...plan.replicas.map((a, i) => at(`replica${i + 1}`, a)),
    at('read/write endpoint', plan.readWrite),
    at('read-only endpoint', plan.readOnly),
    ...(s.peers ? [at('haproxy', plan.haproxy), at('pgpool', plan.pgpool), at('pgpool pcp', plan.pgpool, s.port + 1)] : []),
  ];
}
