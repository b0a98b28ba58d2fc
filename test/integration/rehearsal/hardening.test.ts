/**
 * What a live rehearsal keeps to itself and checks (loopback block hardeningSuite): replicas stream over
 * TLS verify-full against the rehearsal CA; pgpool-II takes TLS clients only and keeps every socket in
 * the work dir (nothing in the shared /var/run/postgresql); and `down` is idempotent on a real rehearsal,
 * through the CLI's code path and the API.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { Client } from 'pg';
import { groupMembers, query, runRehearseCommand, WorkDirLayout, type Rehearsal } from '../../../lib/rehearsal';
import { startRehearsal, stopRehearsal } from './live';

const SHARED_SOCKET_DIR = '/var/run/postgresql';
const listShared = (): string[] => (existsSync(SHARED_SOCKET_DIR) ? readdirSync(SHARED_SOCKET_DIR) : []);

let started: Awaited<ReturnType<typeof startRehearsal>> | undefined;
let rehearsal: Rehearsal;
let sharedBefore: string[];

beforeAll(async () => {
  sharedBefore = listShared();
  started = await startRehearsal('hardeningSuite');
  rehearsal = started.rehearsal;
}, 90000);

afterAll(async () => {
  // Already down (the last test); a third down stops nothing and stopRehearsal still checks every pid.
  await stopRehearsal(started);
}, 60000);

/** Paths of the Unix sockets the processes of a group hold open (from /proc/<pid>/fd and /proc/net/unix). */
function unixSocketPaths(pgid: number): string[] {
  const inodes = new Set<string>();
  for (const pid of groupMembers(pgid)) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m !== null) inodes.add(m[1]!);
      }
    } catch {
      // exited meanwhile
    }
  }
  // Num RefCount Protocol Flags Type St Inode Path
  const lines = readFileSync('/proc/net/unix', 'utf8').split('\n').slice(1);
  return [...new Set(lines.map((l) => l.trim().split(/\s+/)).filter((f) => f.length >= 8 && inodes.has(f[6]!)).map((f) => f[7]!))];
}

describe('replication', () => {
  test('GIVEN running replicas WHEN their WAL receivers are inspected THEN each streams over TLS with sslmode=verify-full and the rehearsal CA', async () => {
    for (const replica of rehearsal.endpoints.replicas) {
      // WHEN
      const [receiver] = await query<{ status: string; conninfo: string; sender_host: string }>(rehearsal.adminEndpoint(replica.name), 'SELECT status, conninfo, sender_host FROM pg_stat_wal_receiver');

      // THEN
      expect(receiver?.status).toBe('streaming');
      expect(receiver?.sender_host).toBe(rehearsal.endpoints.writer.host);
      expect(receiver?.conninfo).toMatch(/(^| )sslmode=verify-full( |$)/);
      expect(receiver?.conninfo).toContain(`sslrootcert=${rehearsal.endpoints.writer.caFile}`);
    }
    const senders = await query<{ application_name: string; ssl: boolean }>(
      rehearsal.adminEndpoint('writer'),
      'SELECT r.application_name, s.ssl FROM pg_stat_replication r JOIN pg_stat_ssl s USING (pid) ORDER BY 1',
    );
    expect(senders).toEqual(rehearsal.endpoints.replicas.map((r) => ({ application_name: r.name, ssl: true })));
  });
});

describe('pgpool-II', () => {
  test('GIVEN the pgpool endpoint WHEN a client connects without TLS THEN it is refused; with TLS verify-full it is served, over TLS to the server too', async () => {
    // GIVEN
    const e = rehearsal.endpoints.pgpool!;
    const plain = new Client({ host: e.host, port: e.port, user: e.user, password: e.password, database: e.database, ssl: false, connectionTimeoutMillis: 5000 });
    plain.on('error', () => undefined);

    // WHEN
    const connected = plain.connect().then(
      () => 'connected',
      (err: Error) => err.message,
    );

    // THEN
    await expect(connected).resolves.toMatch(/client authentication failed|pool_hba/);
    await plain.end().catch(() => undefined);
    await expect(query<{ ssl: boolean }>(e, 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()')).resolves.toEqual([{ ssl: true }]);
  });

  test('GIVEN pgpool-II running WHEN its Unix sockets are listed THEN all are in its own directory, none in /var/run/postgresql, and the socket takes no login', async () => {
    // GIVEN
    const layout = new WorkDirLayout(started!.workDir);
    const pgpoolPid = rehearsal.pidOf('pgpool')!;

    // WHEN
    const sockets = unixSocketPaths(pgpoolPid).filter((p) => p !== '');

    // THEN
    expect(sockets.sort()).toEqual([`${layout.pgpool.dir}/.s.PGSQL.${rehearsal.settings.port}`, `${layout.pgpool.dir}/.s.PGSQL.${rehearsal.settings.port + 1}`]);
    expect(listShared()).toEqual(sharedBefore);
    const e = rehearsal.endpoints.pgpool!;
    const viaSocket = new Client({ host: layout.pgpool.dir, port: rehearsal.settings.port, user: e.user, password: e.password, database: e.database, connectionTimeoutMillis: 5000 });
    viaSocket.on('error', () => undefined);
    await expect(viaSocket.connect()).rejects.toThrow(/client authentication failed|pool_hba/);
    await viaSocket.end().catch(() => undefined);
  });
});

describe('down, twice', () => {
  test('GIVEN a running rehearsal WHEN `rehearse down` runs twice and the API once more THEN the first stops everything by pid and the others stop nothing', async () => {
    // GIVEN
    const workDir = started!.workDir;

    // WHEN
    const first = await runRehearseCommand(['down', '--work-dir', workDir]);
    const second = await runRehearseCommand(['down', '--work-dir', workDir]);
    const third = await rehearsal.down();

    // THEN
    // In start order: one process table, the PgBouncer processes where `up` started them.
    expect(first).toEqual({ output: 'stopped writer, replica1, replica2, pgbouncer-rw-1, pgbouncer-rw-2, pgbouncer-ro-1, pgbouncer-ro-2, pgbouncer-ro-3, pgbouncer-ro-4, haproxy, pgpool, health-supervisor; nothing left running', failed: false });
    expect(started!.pids.filter((pid) => groupMembers(pid).length > 0)).toEqual([]);
    expect(second).toEqual({ output: `nothing to stop in ${workDir}: no rehearsal there`, failed: false });
    expect(third).toEqual({ workDir, stopped: [], hadState: false });
    expect(listShared()).toEqual(sharedBefore);
  }, 60000);
});
