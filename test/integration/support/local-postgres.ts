/**
 * A throwaway PostgreSQL 15 primary (and hot standby) on 127.0.0.1, for the suites that need a bare
 * server rather than a whole rehearsal. Built from the rehearsal's own pieces (binaries, OS user, CA,
 * initdb, pg_basebackup, process tracking), with two differences the Lambda suites need: each server
 * has its own free port and CA, and plain TCP logins are accepted too (to test DB_TLS=disable).
 *
 *   const primary = await LocalPostgres.start();                  // TLS for 127.0.0.1 and localhost
 *   const standby = await primary.startStandby();                 // pg_basebackup of the primary
 *   const wrong = await LocalPostgres.start({ names: ['db.example.internal'] });   // not 127.0.0.1
 *   await standby.stop(); await primary.stop();                   // by pid, then the files go
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClientConfig, QueryResultRow } from 'pg';
import {
  cloneReplica,
  findPostgres15BinDir,
  generateTls,
  initWriter,
  launchNode,
  nodeState,
  query,
  resolveSettings,
  serverOsUser,
  sleep,
  stopProcess,
  waitReady,
  WorkDirLayout,
  type NodeState,
  type PostgresContext,
  type TrackedProcess,
} from '../../../lib/rehearsal';

const HOST = '127.0.0.1';

/** Asks the OS for a currently free TCP port on `address`. */
export async function findFreePort(address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host: address, port: 0, exclusive: true }, () => {
      const bound = server.address();
      const port = typeof bound === 'object' && bound !== null ? bound.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('could not determine a free port'))));
    });
  });
}

/** Servers still running, killed if the test process exits without stop(). */
const running = new Set<LocalPostgres>();
process.once('exit', () => {
  for (const server of running) server.killNow();
});

/** A fresh directory the postgres user (when tests run as root) can traverse, with a logs directory. */
function newLayout(): WorkDirLayout {
  const layout = new WorkDirLayout(mkdtempSync(join(tmpdir(), 'aurora-proxy-kit-pg-')));
  chmodSync(layout.workDir, 0o755);
  mkdirSync(layout.logsDir);
  return layout;
}

export class LocalPostgres {
  readonly host = HOST;
  private proc: TrackedProcess | undefined;

  private constructor(
    private readonly ctx: PostgresContext,
    private readonly layout: WorkDirLayout,
    private readonly node: NodeState,
    private readonly primary?: LocalPostgres,
  ) {}

  /** A primary whose certificate names `names` and localhost (default: 127.0.0.1, its address). */
  static async start(options: { names?: ReadonlyArray<string> } = {}): Promise<LocalPostgres> {
    const layout = newLayout();
    const user = serverOsUser();
    const names = options.names ?? [HOST];
    const tls = await generateTls(layout.tls.dir, names, user).catch((err: unknown) => {
      rmSync(layout.workDir, { recursive: true, force: true });
      throw err;
    });
    // A certificate without our address is checked against localhost, which every one names, while starting.
    const serverName = names.includes(HOST) ? {} : { serverName: 'localhost' };
    const password = randomBytes(12).toString('hex');
    const ctx: PostgresContext = {
      binDir: findPostgres15BinDir(),
      user,
      // 37 + the rehearsal's 3 superuser slots = max_connections 40.
      settings: resolveSettings({ maxConnections: 37, workDir: layout.workDir }),
      tls: { ...tls, ...serverName },
      secrets: { database: 'postgres', adminUser: 'kit_admin', adminPassword: password, appUser: 'kit_admin', appPassword: password, replicationUser: 'kit_admin', replicationPassword: password, readOnlyServerUser: 'kit_admin', readOnlyServerPassword: password },
      allowPlaintext: true,
    };
    const node = nodeState(layout, 'primary', HOST, await findFreePort(HOST));
    return new LocalPostgres(ctx, layout, node).boot(() => initWriter(ctx, node, 30000));
  }

  /** A streaming hot standby of this server (its own port and directory, the same CA). */
  async startStandby(): Promise<LocalPostgres> {
    const layout = newLayout();
    const node = nodeState(layout, 'standby', HOST, await findFreePort(HOST));
    return new LocalPostgres(this.ctx, layout, node, this).boot(() => cloneReplica(this.ctx, node, this.node, 30000));
  }

  /** Makes the data directory (`prepare`), starts the postmaster and waits for a TLS login; cleans up on failure. */
  private async boot(prepare: () => Promise<void>): Promise<this> {
    running.add(this);
    try {
      await prepare();
      this.proc = launchNode(this.ctx, this.node);
      await waitReady(this.ctx, this.node, this.proc, 30000);
      return this;
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  get port(): number {
    return this.node.port;
  }

  get superuser(): string {
    return this.ctx.secrets.adminUser;
  }

  get password(): string {
    return this.ctx.secrets.adminPassword;
  }

  /** PEM file of the CA that signed the server certificate. */
  get caFile(): string {
    return this.ctx.tls.caFile;
  }

  /** node-postgres options for the superuser over plain TCP. */
  connectionConfig(database = 'postgres'): ClientConfig {
    return { host: this.host, port: this.port, user: this.superuser, password: this.password, database };
  }

  /** Runs one statement on a short-lived superuser connection (TLS, verified). */
  query<R extends QueryResultRow = QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
    return query<R>({ host: this.host, port: this.port, user: this.superuser, password: this.password, database: 'postgres', caFile: this.caFile, ...(this.ctx.tls.serverName === undefined ? {} : { serverName: this.ctx.tls.serverName }) }, sql, params, 5000);
  }

  /** Waits until this standby has replayed everything its primary has written so far. */
  async waitForReplay(timeoutMs = 10000): Promise<void> {
    if (this.primary === undefined) throw new Error('waitForReplay() is only for standbys');
    // The insert position includes WAL still in buffers, i.e. every commit made so far.
    const [{ lsn }] = await this.primary.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn');
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const [{ caught_up }] = await this.query<{ caught_up: boolean }>('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS caught_up', [lsn]);
      if (caught_up) return;
      if (Date.now() > deadline) throw new Error(`standby did not replay up to ${lsn} within ${timeoutMs} ms`);
      await sleep(50);
    }
  }

  /** Stops the server by pid (fast shutdown, then SIGKILL) and removes its files. Idempotent. */
  async stop(): Promise<void> {
    if (this.proc !== undefined) await stopProcess(this.proc);
    running.delete(this);
    rmSync(this.layout.workDir, { recursive: true, force: true });
  }

  /** Synchronous last resort at process exit. */
  killNow(): void {
    try {
      if (this.proc !== undefined) process.kill(-this.proc.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
    rmSync(this.layout.workDir, { recursive: true, force: true });
  }
}
