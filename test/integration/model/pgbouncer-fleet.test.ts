/**
 * The PgBouncer engine's fleet plan and files (lib/model/pgbouncer-fleet*.ts): processes and pool
 * shares, the rules with their messages, the placeholders both flavours substitute, and a real
 * PgBouncer 1.25.2 that starts on the rendered files (in a namespace of its own, as root).
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from 'pg';
import { DEFAULT_POOL_SETTINGS, EndpointRole, RESERVED_CONNECTIONS, findInstanceClass, optimizedReadsSizing, poolSizing } from '../../../lib/model';
import { renderPgBouncerUserlist, SERVER_RESET_QUERY, SESSION_SERVER_RESET_QUERY } from '../../../lib/model/pgbouncer-ini';
import {
  DEFAULT_SESSION_MAX_CONNECTIONS_PERCENT,
  FLEET_ADMIN_USER,
  FLEET_PATHS,
  FLEET_PLACEHOLDERS,
  FLEET_PORTS,
  fleetKeepalive,
  fleetPath,
  READ_ONLY_ROLE_GUARD,
  type PoolerFleetSpec,
} from '../../../lib/model/pgbouncer-fleet';
import { validateFleet } from '../../../lib/model/pgbouncer-fleet-rules';
import { fleetProcessName, planFleetProcesses, renderFleetFiles } from '../../../lib/model/pgbouncer-fleet-files';
import { findPgBouncer, hostCommand, serverOsUser } from '../../../lib/rehearsal';
import { liveUnavailable } from '../rehearsal/isolation';

const xlarge = optimizedReadsSizing(findInstanceClass('db.r6gd.xlarge')!);
const reference: PoolerFleetSpec = { hosts: 2, vcpusPerHost: 2, readers: 2, maxConnections: xlarge.maxConnections, pool: DEFAULT_POOL_SETTINGS, tcpIdleTimeoutSeconds: 350 };
/** The reference fleet with an endpoint of each role in session pooling. */
const withSessions: PoolerFleetSpec = { ...reference, sessionRoles: [EndpointRole.READ_WRITE, EndpointRole.READ_ONLY] };

describe('PgBouncer engine fleet plan', () => {
  test('GIVEN two 2-vCPU hosts and two readers WHEN planned THEN each host runs two read/write processes and one per reader, and the fleet stays within every budget', () => {
    const processes = planFleetProcesses(reference);
    expect(processes.map((p) => [p.listener, p.peerId, p.target])).toEqual([
      ['readWrite', 1, 'writer'],
      ['readWrite', 2, 'writer'],
      ['readOnly', 1, 'reader1'],
      ['readOnly', 2, 'reader2'],
    ]);
    const budget = poolSizing(reference.maxConnections, reference.pool).maxServerConnections;
    for (const target of ['writer', 'reader1', 'reader2']) {
      const fleetTotal = reference.hosts * processes.filter((p) => p.target === target).reduce((sum, p) => sum + p.poolSize, 0);
      expect([target, fleetTotal <= budget, fleetTotal >= budget - reference.hosts * 2]).toEqual([target, true, true]);
    }
    expect(processes.find((p) => p.target === 'reader2')!.serverHost).toBe(FLEET_PLACEHOLDERS.readerEndpoint(2));
  });

  test('GIVEN the defaults on db.r6gd.xlarge WHEN planned THEN the fleet leaves the documented reserve and keeps 5% warm, not half', () => {
    // GIVEN Aurora's 3479 (not the 3604 of nominal memory), less the reserve of 10
    expect(reference.maxConnections).toBe(3479);
    const processes = planFleetProcesses(reference);
    for (const target of ['writer', 'reader1', 'reader2']) {
      const mine = processes.filter((p) => p.target === target);
      const open = reference.hosts * mine.reduce((sum, p) => sum + p.poolSize, 0);
      const warm = reference.hosts * mine.reduce((sum, p) => sum + p.minPoolSize, 0);
      // THEN writer: 2 hosts x 2 processes x floor(3469 / 4) = 3468, min_pool_size floor(173 / 4) = 43 each; each reader: 2 x 1 x 1734
      expect([target, open, reference.maxConnections - open >= RESERVED_CONNECTIONS, warm]).toEqual([target, 3468, true, 172]);
    }
  });

  test('GIVEN more readers than vCPUs WHEN planned THEN every reader still has a process of its own', () => {
    const processes = planFleetProcesses({ ...reference, readers: 3 });
    expect(processes.filter((p) => p.listener === 'readOnly').map((p) => p.target)).toEqual(['reader1', 'reader2', 'reader3']);
  });

  test('GIVEN no endpoint in session pooling WHEN planned THEN no session listener exists', () => {
    expect(new Set(planFleetProcesses(reference).map((p) => p.listener))).toEqual(new Set(['readWrite', 'readOnly']));
    expect([...renderFleetFiles(reference).keys()].filter((f) => /\/s[wr]-/.test(f))).toEqual([]);
  });

  test('GIVEN session pooling on both roles WHEN planned THEN each role has a session listener of its own whose share and the transaction pools\' together stay within each target\'s budget', () => {
    const processes = planFleetProcesses(withSessions);
    expect(processes.map((p) => [fleetProcessName(p), p.target])).toEqual([
      ['rw-1', 'writer'], ['rw-2', 'writer'], ['ro-1', 'reader1'], ['ro-2', 'reader2'],
      ['sw-1', 'writer'], ['sw-2', 'writer'], ['sr-1', 'reader1'], ['sr-2', 'reader2'],
    ]);
    const budget = poolSizing(reference.maxConnections, reference.pool).maxServerConnections;
    const session = Math.floor((budget * DEFAULT_SESSION_MAX_CONNECTIONS_PERCENT) / 100);
    for (const target of ['writer', 'reader1', 'reader2']) {
      const open = (listeners: string[]) => reference.hosts * processes.filter((p) => p.target === target && listeners.includes(p.listener)).reduce((sum, p) => sum + p.poolSize, 0);
      const sessionOpen = open(['readWriteSession', 'readOnlySession']);
      const transactionOpen = open(['readWrite', 'readOnly']);
      // THEN 3469 per target: the session pools take up to 867 (25%), the transaction pools up to the other 2602.
      expect([target, sessionOpen <= session, sessionOpen > session - 4, transactionOpen <= budget - session, sessionOpen + transactionOpen <= budget]).toEqual([target, true, true, true, true]);
    }
    // A session connection serves one client while it stays: no idle floor.
    expect(processes.filter((p) => p.listener.endsWith('Session')).map((p) => p.minPoolSize)).toEqual([0, 0, 0, 0]);
  });

  test('GIVEN session pooling on the read-only role only WHEN planned THEN the writer keeps its whole budget', () => {
    const processes = planFleetProcesses({ ...reference, sessionRoles: [EndpointRole.READ_ONLY], sessionMaxConnectionsPercent: 40 });
    expect(processes.filter((p) => p.listener === 'readWrite').map((p) => p.poolSize)).toEqual(planFleetProcesses(reference).filter((p) => p.listener === 'readWrite').map((p) => p.poolSize));
    expect(processes.filter((p) => p.listener === 'readOnlySession').map((p) => p.poolSize)).toEqual([693, 693]);
    expect(processes.filter((p) => p.listener === 'readOnly').map((p) => p.poolSize)).toEqual([1041, 1041]);
  });

  test.each([60, 120, 350, 6000])('GIVEN an NLB idle timeout of %i s WHEN keepalives are derived THEN a dead client is found before the NLB forgets its flow', (idle) => {
    const k = fleetKeepalive(idle);
    expect(k.idle).toBeLessThan(idle);
    expect(k.idle + k.interval * k.count).toBeLessThanOrEqual(Math.max(idle, 150));
  });

  test.each<[string, Partial<PoolerFleetSpec>, RegExp]>([
    ['one host', { hosts: 1 }, /^hosts 1 is out of range: run at least two hosts, in two Availability Zones/],
    ['an idle timeout the NLB refuses', { tcpIdleTimeoutSeconds: 30 }, /^tcpIdleTimeoutSeconds 30 is out of range: the NLB accepts a TCP idle timeout of 60 to 6000 seconds/],
    ['no reader', { readers: 0 }, /^readers 0 is out of range/],
    ['fractional vCPUs', { vcpusPerHost: 1.5 }, /^vcpusPerHost 1\.5 is out of range/],
    ['a budget too small for the fleet', { maxConnections: 20, pool: { ...DEFAULT_POOL_SETTINGS, maxConnectionsPercent: 10 }, hosts: 4, vcpusPerHost: 2 }, /^hosts 4 x 2 processes per target need 8 server connections of a budget of 2 \(maxConnectionsPercent 10 of max_connections 20, never into the 10 connections reserved for rdsadmin, AWS's automation, the master user and the role bootstrap\): use fewer hosts/],
    // 100% of 20 would be 20, but 10 are reserved: 12 processes cannot each have one of the 10 left.
    ['a budget the reserve leaves too small', { maxConnections: 20, hosts: 3, vcpusPerHost: 4, readers: 1 }, /^hosts 3 x 4 processes per target need 12 server connections of a budget of 10 \(maxConnectionsPercent 100 of max_connections 20, never into the 10 connections/],
    ['a session share of 0', { sessionRoles: [EndpointRole.READ_WRITE], sessionMaxConnectionsPercent: 0 }, /^sessionMaxConnectionsPercent 0 is out of range: the session pools take 1 to 99 percent of each target's budget, the transaction pools keep the rest/],
    ['all of the budget for sessions', { sessionMaxConnectionsPercent: 100 }, /^sessionMaxConnectionsPercent 100 is out of range/],
    ['a session share too small for the fleet', { maxConnections: 110, sessionRoles: [EndpointRole.READ_ONLY], sessionMaxConnectionsPercent: 3 }, /^sessionMaxConnectionsPercent 3 splits each target's budget of 100 into 3 server connections for session pooling and 97 for transaction pooling, and hosts 2 x 2 processes per target need 4 in each: use fewer hosts or a smaller instance type, raise maxConnectionsPercent, or choose a sessionMaxConnectionsPercent that leaves both shares that many$/],
  ])('GIVEN %s WHEN validated THEN the message names the property, the value and the fix', (_label, bad, message) => {
    expect(() => validateFleet({ ...reference, ...bad })).toThrow(message);
  });

  test('GIVEN the rendered files WHEN read THEN their only ${...} are the placeholders both flavours substitute, and nothing Terraform would read as a directive', () => {
    const text = [...renderFleetFiles(reference).values()].join('\n');
    expect([...new Set(text.match(/\$\{[^}]*\}/g))].sort()).toEqual(['${ClusterEndpoint}', '${DatabaseName}', '${ReaderEndpoint1}', '${ReaderEndpoint2}', '${ServerPort}', '${ServerUser}', '${WriterInstanceEndpoint}']);
    expect(text).not.toMatch(/%\{/);
  });

  test('GIVEN session listeners WHEN their files are read THEN they pool in session mode on ports of their own, reset with DEALLOCATE ALL, and the read-only one keeps the guard and a route file', () => {
    const files = renderFleetFiles(withSessions, '');
    const sw1 = files.get(`${FLEET_PATHS.dir}/sw-1.ini`)!.split('\n');
    const sr2 = files.get(`${FLEET_PATHS.dir}/sr-2.ini`)!.split('\n');
    expect(files.get(`${FLEET_PATHS.dir}/sw-peers.ini`)).toBe('[peers]\n1 = host=/run/pgbouncer/sw-1 port=6434\n2 = host=/run/pgbouncer/sw-2 port=6434\n');
    expect(sw1).toEqual(expect.arrayContaining(['listen_port = 6434', 'pool_mode = session', `server_reset_query = ${SESSION_SERVER_RESET_QUERY}`, '%include /etc/pgbouncer/sw-peers.ini']));
    expect(SESSION_SERVER_RESET_QUERY).toMatch(/; DEALLOCATE ALL$/);
    expect(sr2).toEqual(expect.arrayContaining(['listen_port = 6435', 'pool_mode = session', `server_reset_query = ${SESSION_SERVER_RESET_QUERY}; ${READ_ONLY_ROLE_GUARD}`, `server_check_query = ${READ_ONLY_ROLE_GUARD}`, '%include /var/lib/apk-pgbouncer/routes/sr-2.ini']));
    // The session settings come after the shared ones they override (later lines win).
    expect(sr2.indexOf('pool_mode = session')).toBeGreaterThan(sr2.indexOf('%include /etc/pgbouncer/common.ini'));
    expect(files.get(`${FLEET_PATHS.routesDir}/sr-2.ini`)).toMatch(/^; sr-2 \(reader2\) home=\$\{ReaderEndpoint2\} /);
  });

  test('GIVEN a process file WHEN read THEN it has its own port, id, socket and peers, and includes the shared settings', () => {
    const files = renderFleetFiles(reference, '');
    const ro2 = files.get(`${FLEET_PATHS.dir}/ro-2.ini`)!;
    expect(files.get(`${FLEET_PATHS.dir}/ro-peers.ini`)).toBe('[peers]\n1 = host=/run/pgbouncer/ro-1 port=6433\n2 = host=/run/pgbouncer/ro-2 port=6433\n');
    expect(ro2).toMatch(/^%include \/etc\/pgbouncer\/ro-peers\.ini$/m);
    expect(ro2).toMatch(/^listen_port = 6433$/m);
    expect(ro2).toMatch(/^peer_id = 2$/m);
    expect(ro2).toMatch(/^%include \/etc\/pgbouncer\/common\.ini$/m);
    const common = files.get(FLEET_PATHS.commonIni)!;
    // The session reset and the startup parameters are the rehearsal's (lib/model/pgbouncer-ini.ts): only extra_float_digits is dropped.
    for (const line of ['dns_max_ttl = 5', 'server_tls_sslmode = verify-full', 'server_tls_ca_file = /etc/pgbouncer/tls/rds-ca-bundle.pem', 'client_tls_sslmode = require', 'pool_mode = transaction', 'tcp_keepidle = 120', 'client_idle_timeout = 350', `server_reset_query = ${SERVER_RESET_QUERY}`, 'server_reset_query_always = 1', 'ignore_startup_parameters = extra_float_digits']) {
      expect(common.split('\n')).toContain(line);
    }
  });
});

const live = liveUnavailable === undefined ? describe : describe.skip;

live('PgBouncer 1.25.2 on the rendered files', () => {
  // The files listen on 0.0.0.0, as on a host: a namespace of the test's own keeps that off the machine's interfaces.
  const namespace = 'apk-fleet-files';
  let root: string;
  const started: number[] = [];

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'fleet-'));
    chmodSync(root, 0o755);
    execFileSync('ip', ['netns', 'add', namespace]);
    execFileSync('ip', ['-n', namespace, 'link', 'set', 'lo', 'up']);
  });

  afterAll(async () => {
    for (const pid of started) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    await new Promise((r) => setTimeout(r, 300));
    execFileSync('ip', ['netns', 'delete', namespace]);
    rmSync(root, { recursive: true, force: true });
  });

  test('GIVEN the reference fleet\'s files for one host, with both session listeners, WHEN its eight processes start THEN PgBouncer takes every setting, the session processes pool in session mode, and each listener\'s processes are peers', async () => {
    const user = serverOsUser();
    const substitute = (text: string): string =>
      text.replaceAll(FLEET_PLACEHOLDERS.clusterEndpoint, 'writer.example.internal').replaceAll(FLEET_PLACEHOLDERS.readerEndpoint(1), 'reader1.example.internal').replaceAll(FLEET_PLACEHOLDERS.readerEndpoint(2), 'reader2.example.internal').replaceAll(FLEET_PLACEHOLDERS.databaseName, 'kit').replaceAll(FLEET_PLACEHOLDERS.serverPort, '5432').replaceAll(FLEET_PLACEHOLDERS.serverUser, 'fleet_ro_server');
    const write = (relative: string, text: string, mode = 0o644): void => {
      const path = fleetPath(root, relative);
      mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
      writeFileSync(path, text, { mode });
      if (user !== undefined) chownSync(path, user.uid, user.gid);
    };
    for (const [path, text] of renderFleetFiles(withSessions, root)) write(path, substitute(text));
    const tls = mkdtempSync(join(tmpdir(), 'fleet-tls-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=pooler.example.internal', '-keyout', join(tls, 'server.key'), '-out', join(tls, 'server.crt')], { stdio: 'ignore' });
    for (const path of [FLEET_PATHS.tlsCertFile, FLEET_PATHS.tlsCaFile, FLEET_PATHS.rdsCaBundle]) write(path, readFileSync(join(tls, 'server.crt'), 'utf8'));
    write(FLEET_PATHS.tlsKeyFile, readFileSync(join(tls, 'server.key'), 'utf8'), 0o600);
    rmSync(tls, { recursive: true, force: true });
    write(FLEET_PATHS.authFile, renderPgBouncerUserlist([{ name: FLEET_ADMIN_USER, password: 'fleet-admin-secret' }]), 0o600);
    const processes = planFleetProcesses(withSessions);
    let logs = '';
    for (const p of processes) {
      const dir = fleetPath(root, `${FLEET_PATHS.runDir}/${fleetProcessName(p)}`);
      mkdirSync(dirname(dir), { recursive: true, mode: 0o755 });
      mkdirSync(dir, { mode: 0o700 });
      if (user !== undefined) chownSync(dir, user.uid, user.gid);
      const cmd = hostCommand({ program: findPgBouncer(), args: [fleetPath(root, `${FLEET_PATHS.dir}/${fleetProcessName(p)}.ini`)], namespace, ...(user === undefined ? {} : { user }) });
      const child = spawn(cmd.program, [...cmd.args], { stdio: ['ignore', 'ignore', 'pipe'], ...(cmd.spawnAs ?? {}) });
      child.stderr.on('data', (d: Buffer) => (logs += d.toString()));
      started.push(child.pid!);
    }
    const admin = async (name: string, port: number, sql: string): Promise<Array<Record<string, string>>> => {
      for (let attempt = 0; ; attempt++) {
        const c = new Client({ host: fleetPath(root, `${FLEET_PATHS.runDir}/${name}`), port, user: FLEET_ADMIN_USER, password: 'fleet-admin-secret', database: 'pgbouncer' });
        c.on('error', () => undefined);
        try {
          await c.connect();
          return (await c.query(sql)).rows as Array<Record<string, string>>;
        } catch (err) {
          if (attempt > 50) throw new Error(`${(err as Error).message}; PgBouncer said: ${logs}`);
          await new Promise((r) => setTimeout(r, 100));
        } finally {
          await c.end().catch(() => undefined);
        }
      }
    };
    const config = Object.fromEntries((await admin('rw-1', FLEET_PORTS.readWrite, 'SHOW CONFIG')).map((r) => [r.key, r.value]));
    expect(config).toMatchObject({ peer_id: '1', listen_port: '6432', so_reuseport: '1', dns_max_ttl: '5', pool_mode: 'transaction', tcp_keepidle: '120', server_tls_sslmode: 'verify-full', max_prepared_statements: '200' });
    const peers = (await admin('ro-2', FLEET_PORTS.readOnly, 'SHOW PEERS')).map((r) => String(r.peer_id)).sort();
    expect(peers).toEqual(['1', '2']);
    const databases = await admin('ro-1', FLEET_PORTS.readOnly, 'SHOW DATABASES');
    expect(databases.find((d) => d.name === 'kit')).toMatchObject({ host: 'reader1.example.internal' });
    expect(String(databases.find((d) => d.name === 'kit')!.port)).toBe('5432');
    const sw = Object.fromEntries((await admin('sw-2', FLEET_PORTS.readWriteSession, 'SHOW CONFIG')).map((r) => [r.key, r.value]));
    expect(sw).toMatchObject({ peer_id: '2', listen_port: '6434', pool_mode: 'session', server_reset_query: SESSION_SERVER_RESET_QUERY });
    const sr = Object.fromEntries((await admin('sr-1', FLEET_PORTS.readOnlySession, 'SHOW CONFIG')).map((r) => [r.key, r.value]));
    expect(sr).toMatchObject({ listen_port: '6435', pool_mode: 'session', server_reset_query: `${SESSION_SERVER_RESET_QUERY}; ${READ_ONLY_ROLE_GUARD}`, server_check_query: READ_ONLY_ROLE_GUARD });
    expect((await admin('sr-2', FLEET_PORTS.readOnlySession, 'SHOW PEERS')).map((r) => String(r.peer_id)).sort()).toEqual(['1', '2']);
    const srPools = await admin('sr-2', FLEET_PORTS.readOnlySession, 'SHOW DATABASES');
    expect(srPools.find((d) => d.name === 'kit')).toMatchObject({ host: 'reader2.example.internal' });
  }, 60_000);
});
