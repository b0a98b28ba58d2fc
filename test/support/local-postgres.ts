/**
 * A throwaway, real PostgreSQL server for tests and local rehearsals.
 *
 *   const pg = new LocalPostgres({ ssl: true });
 *   await pg.start();               // initdb + postgres on 127.0.0.1:<free port>
 *   ...pg.connectionConfig(), pg.caFile, pg.pid...
 *   await pg.stop();                // by pid, then removes the temp dir
 *
 * A hot standby of a running server: new LocalPostgres({ standbyOf: primary }).
 *
 * Design notes:
 * - PostgreSQL refuses to run as root. When the tests run as root, every
 *   PostgreSQL program is spawned with the uid/gid of the `postgres` OS user
 *   (Node drops supplementary groups too), and the temp tree is chowned to it.
 * - The postmaster is spawned directly (no pg_ctl, no runuser wrapper), so
 *   `pid` is the postmaster itself and stop() can signal it and observe its
 *   exit as a child process, without zombies or pid-file races.
 * - Server settings are passed as `-c` flags rather than written to
 *   postgresql.conf, so pg_basebackup does not copy the primary's port or
 *   certificate paths into a standby.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client, type ClientConfig, type QueryResultRow } from 'pg';

const execFileAsync = promisify(execFile);

const INSTALL_HINT = 'Install PostgreSQL 15 server binaries, e.g. `apt-get install -y postgresql-15` (Debian/Ubuntu).';

export interface LocalPostgresSslOptions {
  /**
   * subjectAltName entries of the server certificate. Default: the listen
   * address (as IP:) plus IP:127.0.0.1 and DNS:localhost. Set it to names
   * that do not match to exercise hostname-verification failures.
   */
  readonly subjectAltNames?: readonly string[];
}

export interface LocalPostgresOptions {
  /** Loopback address to listen on (default 127.0.0.1). */
  readonly listenAddress?: string;
  /** Bootstrap superuser (default kit_admin). Ignored for a standby (inherits the primary's). */
  readonly superuser?: string;
  /** Superuser password (default: random). Ignored for a standby. */
  readonly password?: string;
  /** Serve TLS with a certificate signed by a per-server throwaway CA (see caFile). */
  readonly ssl?: boolean | LocalPostgresSslOptions;
  /** Create this server as a streaming hot standby of a running server (pg_basebackup -R). */
  readonly standbyOf?: LocalPostgres;
  /** Bound on start() (default 30 s). */
  readonly startTimeoutMs?: number;
  /** Extra `-c name=value` server settings. */
  readonly settings?: Readonly<Record<string, string>>;
}

interface OsUser {
  readonly uid: number;
  readonly gid: number;
}

/** Locates the directory holding the `postgres` server binary. */
export function findPostgresBinDir(): string {
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (dir !== '' && existsSync(join(dir, 'postgres'))) return dir;
  } catch {
    // pg_config missing (or only the client package installed): try the Debian layout.
  }
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const majors = readdirSync(root)
      .filter((name) => /^\d+$/.test(name) && existsSync(join(root, name, 'bin', 'postgres')))
      .sort((a, b) => Number(b) - Number(a));
    if (majors[0] !== undefined) return join(root, majors[0], 'bin');
  }
  throw new Error(`PostgreSQL server binaries not found (pg_config --bindir has no 'postgres', nothing under ${root}/<major>/bin). ${INSTALL_HINT}`);
}

/** Asks the OS for a currently free TCP port on `address`. */
export async function findFreePort(address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host: address, port: 0, exclusive: true }, () => {
      const bound = server.address();
      const port = typeof bound === 'object' && bound !== null ? bound.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('could not determine a free port'))));
    });
  });
}

function postgresOsUser(): OsUser | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    throw new Error(`Running as root, but there is no 'postgres' OS user to run PostgreSQL as (it refuses to run as root). ${INSTALL_HINT} (the package creates the user), or run the tests as a non-root user.`);
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Servers still running, stopped hard if the test process exits without stop(). */
const live = new Set<LocalPostgres>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const server of live) server.killSync();
  });
}

export class LocalPostgres {
  readonly host: string;
  readonly superuser: string;
  readonly password: string;

  private readonly options: LocalPostgresOptions;
  private readonly binDir: string;
  private readonly osUser: OsUser | undefined;
  private baseDir: string | undefined;
  private child: ChildProcess | undefined;
  private exited: Promise<void> | undefined;
  private hasExited = false;
  private portNumber = 0;

  constructor(options: LocalPostgresOptions = {}) {
    this.options = options;
    this.host = options.listenAddress ?? '127.0.0.1';
    if (isIP(this.host) === 0) throw new Error(`listenAddress must be an IP address, got ${this.host}`);
    const primary = options.standbyOf;
    this.superuser = primary?.superuser ?? options.superuser ?? 'kit_admin';
    this.password = primary?.password ?? options.password ?? randomBytes(12).toString('hex');
    this.binDir = findPostgresBinDir();
    this.osUser = postgresOsUser();
  }

  get port(): number {
    this.assertStarted();
    return this.portNumber;
  }

  /** Postmaster pid (undefined when not running). */
  get pid(): number | undefined {
    return this.hasExited ? undefined : this.child?.pid;
  }

  get dataDir(): string {
    return join(this.requireBaseDir(), 'data');
  }

  /** PEM file of the CA that signed the server certificate (ssl servers only). */
  get caFile(): string | undefined {
    return this.options.ssl ? join(this.requireBaseDir(), 'tls', 'ca.crt') : undefined;
  }

  get logFile(): string {
    return join(this.requireBaseDir(), 'server.log');
  }

  /** node-postgres options for the superuser over TCP (no TLS). */
  connectionConfig(database = 'postgres'): ClientConfig {
    return { host: this.host, port: this.port, user: this.superuser, password: this.password, database };
  }

  /** Runs one statement on a short-lived superuser connection. */
  async query<R extends QueryResultRow = QueryResultRow>(sql: string, params: unknown[] = [], database = 'postgres'): Promise<R[]> {
    const client = new Client({ ...this.connectionConfig(database), connectionTimeoutMillis: 5000 });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return (await client.query<R>(sql, params)).rows;
    } finally {
      await client.end();
    }
  }

  /** Waits until this standby has replayed everything its primary has written so far. */
  async waitForReplay(timeoutMs = 10000): Promise<void> {
    const primary = this.options.standbyOf;
    if (primary === undefined) throw new Error('waitForReplay() is only for standbys');
    // The insert position includes WAL still in buffers, i.e. every commit made so far.
    const [{ lsn }] = await primary.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn');
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const [{ caught_up }] = await this.query<{ caught_up: boolean }>(
        'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS caught_up',
        [lsn],
      );
      if (caught_up) return;
      if (Date.now() > deadline) throw new Error(`standby did not replay up to ${lsn} within ${timeoutMs} ms`);
      await sleep(50);
    }
  }

  /** Last lines of the server log (for failure messages). */
  logTail(lines = 40): string {
    try {
      return readFileSync(this.logFile, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '(no server log)';
    }
  }

  async start(): Promise<void> {
    if (this.baseDir !== undefined) throw new Error('LocalPostgres.start() called twice');
    const timeoutMs = this.options.startTimeoutMs ?? 30000;
    const deadline = Date.now() + timeoutMs;
    this.createBaseDir();
    installExitHook();
    live.add(this);
    try {
      if (this.options.ssl) await this.generateCertificates();
      if (this.options.standbyOf !== undefined) await this.baseBackup(deadline);
      else await this.initdb(deadline);
      // A free port can be taken between probing and binding; try a few.
      for (let attempt = 1; ; attempt++) {
        this.portNumber = await findFreePort(this.host);
        this.launch();
        const ready = await this.waitUntilReady(deadline);
        if (ready) return;
        if (!/could not bind|Address already in use/i.test(this.logTail()) || attempt >= 3) {
          throw new Error(`PostgreSQL on ${this.host}:${this.portNumber} did not start`);
        }
      }
    } catch (err) {
      const tail = this.logTail();
      await this.stop();
      const message = err instanceof Error ? err.message : String(err);
      throw new Error(`${message}\n--- server log tail (${this.baseDir ?? 'removed'}) ---\n${tail}`, { cause: err });
    }
  }

  /** Stops the server (fast shutdown, escalating) and removes its files. Idempotent. */
  async stop(): Promise<void> {
    const child = this.child;
    if (child !== undefined && !this.hasExited) {
      // SIGINT = "fast" shutdown: roll back sessions, checkpoint, exit.
      // SIGQUIT = "immediate". SIGKILL as the last resort.
      for (const [signal, waitMs] of [['SIGINT', 10000], ['SIGQUIT', 5000], ['SIGKILL', 5000]] as const) {
        child.kill(signal);
        if (await this.waitForExit(waitMs)) break;
      }
    }
    live.delete(this);
    if (this.baseDir !== undefined) rmSync(this.baseDir, { recursive: true, force: true });
  }

  /** Synchronous last-resort cleanup for process exit. */
  killSync(): void {
    if (this.child?.pid !== undefined && !this.hasExited) {
      try {
        process.kill(this.child.pid, 'SIGQUIT');
      } catch {
        // already gone
      }
    }
    if (this.baseDir !== undefined) rmSync(this.baseDir, { recursive: true, force: true });
  }

  // -------------------------------------------------------------------------

  private assertStarted(): void {
    if (this.portNumber === 0) throw new Error('LocalPostgres is not started');
  }

  private requireBaseDir(): string {
    if (this.baseDir === undefined) throw new Error('LocalPostgres is not started');
    return this.baseDir;
  }

  private createBaseDir(): void {
    const parent = tmpdir();
    // The postgres user must be able to traverse the parent of its data dir.
    if (this.osUser !== undefined && (statSync(parent).mode & 0o001) === 0) {
      throw new Error(`${parent} is not traversable by the postgres user; point TMPDIR at a world-traversable directory such as /tmp.`);
    }
    const base = mkdtempSync(join(parent, 'aurora-proxy-kit-pg-'));
    this.baseDir = base;
    chmodSync(base, 0o700);
    mkdirSync(join(base, 'socket'), { mode: 0o700 });
    this.chown(base);
    this.chown(join(base, 'socket'));
  }

  private chown(path: string): void {
    if (this.osUser !== undefined) chownSync(path, this.osUser.uid, this.osUser.gid);
  }

  /** Environment for PostgreSQL programs: minimal, so the caller's PG* variables cannot leak in. */
  private env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', LANG: 'C', TZ: 'UTC', ...extra };
  }

  private async run(program: string, args: string[], deadline: number, extraEnv: Record<string, string> = {}): Promise<void> {
    const remaining = Math.max(1000, deadline - Date.now());
    try {
      await execFileAsync(join(this.binDir, program), args, {
        cwd: this.requireBaseDir(),
        env: this.env(extraEnv),
        timeout: remaining,
        killSignal: 'SIGKILL',
        ...(this.osUser ?? {}),
      });
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(`${program} failed: ${e.message}\n${e.stderr ?? ''}`, { cause: err });
    }
  }

  private async initdb(deadline: number): Promise<void> {
    const base = this.requireBaseDir();
    const pwfile = join(base, 'pwfile');
    writeFileSync(pwfile, `${this.password}\n`, { mode: 0o600 });
    this.chown(pwfile);
    try {
      await this.run(
        'initdb',
        ['-D', this.dataDir, '-U', this.superuser, `--pwfile=${pwfile}`, '--auth-local=trust', '--auth-host=scram-sha-256', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'],
        deadline,
      );
    } finally {
      rmSync(pwfile, { force: true });
    }
    // Password (SCRAM) auth over TCP, loopback only, replication included so
    // a standby can be cloned. The Unix socket lives in a 0700 directory
    // owned by the server user, so `trust` there is reachable only by it.
    const hba = [
      'local all all trust',
      'host all all 127.0.0.0/8 scram-sha-256',
      'host all all ::1/128 scram-sha-256',
      'host replication all 127.0.0.0/8 scram-sha-256',
      'host replication all ::1/128 scram-sha-256',
      '',
    ].join('\n');
    writeFileSync(join(this.dataDir, 'pg_hba.conf'), hba);
    this.chown(join(this.dataDir, 'pg_hba.conf'));
  }

  private async baseBackup(deadline: number): Promise<void> {
    const primary = this.options.standbyOf as LocalPostgres;
    // -R writes standby.signal and primary_conninfo (with the password) so
    // the copy starts as a streaming hot standby.
    await this.run(
      'pg_basebackup',
      ['-h', primary.host, '-p', String(primary.port), '-U', primary.superuser, '-D', this.dataDir, '-R', '-X', 'stream', '-c', 'fast', '--no-sync'],
      deadline,
      { PGPASSWORD: primary.password },
    );
  }

  private async generateCertificates(): Promise<void> {
    const dir = join(this.requireBaseDir(), 'tls');
    mkdirSync(dir, { mode: 0o755 });
    const ssl = typeof this.options.ssl === 'object' ? this.options.ssl : {};
    const sans = ssl.subjectAltNames ?? [...new Set([`IP:${this.host}`, 'IP:127.0.0.1', 'DNS:localhost'])];
    const openssl = (args: string[]): Promise<unknown> => execFileAsync('openssl', args, { cwd: dir, timeout: 15000 });
    // P-256 keys: generated in milliseconds, unlike RSA.
    const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    await openssl(['req', '-x509', ...ecKey, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=aurora-proxy-kit throwaway test CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    await openssl(['req', ...ecKey, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost']);
    writeFileSync(
      join(dir, 'server.ext'),
      [`subjectAltName=${sans.join(',')}`, 'basicConstraints=CA:FALSE', 'keyUsage=critical,digitalSignature', 'extendedKeyUsage=serverAuth', ''].join('\n'),
    );
    await openssl(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '2', '-extfile', 'server.ext']);
    // PostgreSQL refuses a private key readable by others or not owned by it.
    chmodSync(join(dir, 'server.key'), 0o600);
    this.chown(join(dir, 'server.key'));
    rmSync(join(dir, 'ca.key'), { force: true });
  }

  private launch(): void {
    const base = this.requireBaseDir();
    const settings: Record<string, string> = {
      listen_addresses: this.host,
      port: String(this.portNumber),
      unix_socket_directories: join(base, 'socket'),
      // Throwaway data: durability is irrelevant, speed is not. (Not
      // synchronous_commit=off: with fsync off it saves nothing and would
      // delay WAL shipping to standbys by up to wal_writer_delay.)
      fsync: 'off',
      full_page_writes: 'off',
      shared_buffers: '32MB',
      max_connections: '40',
      logging_collector: 'off',
      log_min_messages: 'warning',
      ...(this.options.ssl
        ? { ssl: 'on', ssl_cert_file: join(base, 'tls', 'server.crt'), ssl_key_file: join(base, 'tls', 'server.key') }
        : { ssl: 'off' }),
      ...this.options.settings,
    };
    const args = ['-D', this.dataDir, ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
    const logFd = openSync(this.logFile, 'a');
    let child: ChildProcess;
    try {
      child = spawn(join(this.binDir, 'postgres'), args, {
        cwd: base,
        env: this.env(),
        stdio: ['ignore', logFd, logFd],
        ...(this.osUser ?? {}),
      });
    } finally {
      closeSync(logFd);
    }
    this.child = child;
    this.hasExited = false;
    this.exited = new Promise((resolve) => {
      child.once('exit', () => {
        this.hasExited = true;
        resolve();
      });
      child.once('error', () => {
        this.hasExited = true;
        resolve();
      });
    });
  }

  private async waitForExit(timeoutMs: number): Promise<boolean> {
    if (this.hasExited || this.exited === undefined) return true;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const result = await Promise.race([this.exited.then(() => true), timedOut]);
    clearTimeout(timer);
    return result;
  }

  /** True once a password login over TCP works; false if the postmaster exited. Throws on timeout. */
  private async waitUntilReady(deadline: number): Promise<boolean> {
    for (;;) {
      if (this.hasExited) return false;
      const client = new Client({ ...this.connectionConfig(), connectionTimeoutMillis: 1000 });
      client.on('error', () => undefined);
      try {
        await client.connect();
        await client.end();
        return true;
      } catch {
        // Not listening yet, or 57P03 "starting up" / "not yet accepting connections".
        void client.end().catch(() => undefined);
      }
      if (Date.now() > deadline) throw new Error(`PostgreSQL on ${this.host}:${this.portNumber} not ready within ${this.options.startTimeoutMs ?? 30000} ms`);
      await sleep(100);
    }
  }
}
