/**
 * What the compatibility probes run against: one PostgreSQL 15 writer and two PgBouncer processes in
 * front of it, one in transaction pooling (the kit's endpoints) and one in session pooling, on
 * 127.0.0.1 with ports of their own. Built from the rehearsal's pieces: its initdb and server settings,
 * its roles, its TLS (clients verify-full against its CA, PgBouncer verify-full towards the server),
 * and its read/write endpoint's files (pgBouncerEndpointSpec + standInFiles: the fleet model's), so the probes
 * measure the ini the rehearsal and the kit's hosts run. Session pooling is the fleet's read/write session
 * listener (pool_mode and its reset), as the PgBouncer engine's session listeners run.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fleetProcessName } from '../model/pgbouncer-fleet-files';
import { PoolMode } from '../model/pgbouncer-ini';
import { EndpointRole } from '../model/vocabulary';
import { findPgBouncer, findPostgres15BinDir } from './binaries';
import { WorkDirLayout } from './layout';
import { serverOsUser } from './os-user';
import { installPgBouncer, launchPooler, standInFiles, standInProcess, waitPoolerReady, writeStandInFiles, writeStandInSecrets } from './pgbouncer';
import { adminTarget, bootstrapWriter, initWriter, launchNode, nodeState, waitReady, type PostgresContext } from './postgres';
import { stopProcess, type TrackedProcess } from './processes';
import { newSecrets } from './secrets';
import { resolveSettings } from './settings';
import { query, type Target } from './sql';
import { pgBouncerEndpointSpec, prepareWorkDir } from './start';
import type { PgBouncerEndpointSpec } from './state';
import { generateTls } from './tls';

/** The three ways the probes reach the database. */
export const COMPAT_TARGETS = ['direct', 'transaction', 'session'] as const;
export type CompatTarget = (typeof COMPAT_TARGETS)[number];

export const COMPAT_TARGET_TITLES: Readonly<Record<CompatTarget, string>> = {
  direct: 'PostgreSQL directly',
  transaction: 'PgBouncer, transaction pooling (the kit\'s endpoints, the rehearsal\'s RDS Proxy stand-in)',
  session: 'PgBouncer, session pooling (the same ini with the session listeners\' settings)',
};

const HOST = '127.0.0.1';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host: HOST, port: 0, exclusive: true }, () => {
      const bound = server.address();
      const port = typeof bound === 'object' && bound !== null ? bound.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('compat stand: no free port on 127.0.0.1'))));
    });
  });
}

export interface CompatStand {
  /** The application login on each target (TLS verify-full against the stand's CA). */
  readonly targets: Readonly<Record<CompatTarget, Target>>;
  /** The superuser, directly on the server: what the probes observe the server with. */
  readonly admin: Target;
  /** PgBouncer's version line, for the results file. */
  readonly pgbouncerVersion: string;
  readonly postgresVersion: string;
  /** Process ids of the server and the poolers (each a process group the stop ends). */
  readonly pids: ReadonlyArray<number>;
  stop(): Promise<void>;
}

/** Process groups of stands still running, killed if the process exits without stop() (a test that timed out). */
const runningGroups = new Set<number>();
process.once('exit', () => {
  for (const pgid of runningGroups) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
});

/** Starts the stand; everything it started is stopped (by pid) and removed if a step fails. */
export async function startCompatStand(timeoutMs = 30000): Promise<CompatStand> {
  const workDir = mkdtempSync(join(tmpdir(), 'aurora-proxy-kit-compat-'));
  // The servers run as postgres (when root) and must traverse it.
  chmodSync(workDir, 0o755);
  const procs: TrackedProcess[] = [];
  const stop = async (): Promise<void> => {
    for (const p of [...procs].reverse()) {
      await stopProcess(p);
      runningGroups.delete(p.pid);
    }
    rmSync(workDir, { recursive: true, force: true });
  };
  try {
    const layout = new WorkDirLayout(workDir);
    const user = serverOsUser();
    prepareWorkDir(layout, user);
    const settings = resolveSettings({ workDir, port: await freePort(), poolerProcesses: 1 });
    const secrets = newSecrets();
    const tls = await generateTls(layout.tls.dir, [HOST], user);
    const ctx: PostgresContext = { binDir: findPostgres15BinDir(), user, settings, tls, secrets };
    const node = nodeState(layout, 'writer', HOST, settings.port);
    await initWriter(ctx, node, timeoutMs);
    const pg = launchNode(ctx, node);
    procs.push(pg);
    runningGroups.add(pg.pid);
    await waitReady(ctx, node, pg, timeoutMs);
    await bootstrapWriter(ctx, node);
    const admin = adminTarget(ctx, node, secrets.database);
    // What the probes share: a sequence (currval) and a table COPY writes into, owned by the application.
    await query(admin, `CREATE SEQUENCE compat_seq; CREATE TABLE compat_copy (target text NOT NULL, n int NOT NULL); ALTER SEQUENCE compat_seq OWNER TO ${secrets.appUser}; ALTER TABLE compat_copy OWNER TO ${secrets.appUser}`);
    writeStandInSecrets(layout.pgbouncerDir, secrets, tls, user);
    const program = installPgBouncer(findPgBouncer(), layout);
    const app = (port: number): Target => ({ host: HOST, port, user: secrets.appUser, password: secrets.appPassword, database: secrets.database, caFile: tls.caFile });
    const poolers: Partial<Record<CompatTarget, Target>> = {};
    for (const mode of [PoolMode.TRANSACTION, PoolMode.SESSION]) {
      const spec: PgBouncerEndpointSpec = { ...pgBouncerEndpointSpec(settings, secrets, `compat-${mode}`, EndpointRole.READ_WRITE, HOST), listenPort: await freePort(), poolMode: mode };
      const proc = standInProcess(spec, 1, HOST, 0);
      const paths = layout.pgbouncer(fleetProcessName(proc));
      // The rehearsal's own files (owner and mode): the fleet's read/write listener of the pool mode.
      writeStandInFiles(layout.pgbouncerDir, standInFiles(spec, [proc], layout.pgbouncerDir, { serverUser: secrets.readOnlyServerUser, writer: HOST }), user);
      const pooler = launchPooler({ spec, paths, name: `pgbouncer-compat-${mode}`, program, cwd: workDir, user });
      procs.push(pooler);
      runningGroups.add(pooler.pid);
      await waitPoolerReady(pooler, paths.socketDir, spec.listenPort, secrets, timeoutMs);
      poolers[mode] = app(spec.listenPort);
    }
    const [{ server_version: postgresVersion }] = await query<{ server_version: string }>(admin, 'SHOW server_version');
    return {
      targets: { direct: app(settings.port), transaction: poolers.transaction!, session: poolers.session! },
      admin,
      pgbouncerVersion: pgbouncerVersionLine(program),
      postgresVersion: postgresVersion.split(' ')[0]!,
      pids: procs.map((p) => p.pid),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

function pgbouncerVersionLine(program: string): string {
  return execFileSync(program, ['--version'], { encoding: 'utf8', timeout: 5000 }).split('\n')[0]!.trim();
}
