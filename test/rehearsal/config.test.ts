/**
 * The rehearsal's pure parts and its checks that run before anything starts: PgBouncer rendering from
 * the kit's pool settings, the rule table, and refusals (bad settings, busy address) that must leave
 * nothing running.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runRules } from '../../lib/model/rule-table';
import { DEFAULT_POOL_SETTINGS, poolSizing } from '../../lib/model/sizing';
import {
  AddressInUseError,
  addressPlan,
  LOOPBACK_BLOCKS,
  parseArgs,
  pgBouncerPoolSizes,
  primaryConninfo,
  Rehearsal,
  RehearsalConfigError,
  REHEARSAL_RULES,
  renderHaproxyConfig,
  renderPgpoolConfig,
  renderPgpoolHba,
  renderPgBouncerIni,
  renderPgBouncerUserlist,
  resolveSettings,
  settingsFrom,
  WorkDirLayout,
  type PgBouncerEndpointSpec,
} from '../../lib/rehearsal';

const spec: PgBouncerEndpointSpec = {
  name: 'read-only',
  listenAddress: '127.0.10.102',
  listenPort: 5432,
  database: 'kit',
  hosts: ['127.0.10.3', '127.0.10.4'],
  serverPort: 5432,
  maxConnections: 40,
  pool: { maxConnectionsPercent: 50, maxIdleConnectionsPercent: 25, connectionBorrowTimeoutSeconds: 30 },
  maxClientConnections: 1000,
  adminUser: 'kit_admin',
  files: { authFile: '/w/userlist.txt', pidFile: '/w/ro.pid', unixSocketDir: '/w/ro.sock', tlsCertFile: '/w/server.crt', tlsKeyFile: '/w/server.key', tlsCaFile: '/w/ca.crt' },
};

describe('PgBouncer configuration from the kit pool settings', () => {
  test('GIVEN the AWS pool settings WHEN rendering THEN pool sizes are poolSizing() of max_connections', () => {
    // WHEN
    const ini = renderPgBouncerIni(spec);

    // THEN
    const sizing = poolSizing(40, spec.pool);
    expect(pgBouncerPoolSizes(spec)).toEqual({ poolSize: sizing.maxServerConnections, minPoolSize: sizing.maxIdleServerConnections });
    expect(ini).toContain(`kit = host=127.0.10.3,127.0.10.4 port=5432 dbname=kit pool_size=20 min_pool_size=10 max_db_connections=20`);
    expect(ini).toMatch(/^default_pool_size = 20$/m);
    expect(ini).toMatch(/^reserve_pool_size = 0$/m);
    expect(ini).toMatch(/^query_wait_timeout = 30$/m);
  });

  test('GIVEN an endpoint WHEN rendering THEN clients must use TLS and scram, servers are verified', () => {
    const ini = renderPgBouncerIni(spec);
    expect(ini).toMatch(/^client_tls_sslmode = require$/m);
    expect(ini).toMatch(/^auth_type = scram-sha-256$/m);
    expect(ini).toMatch(/^server_tls_sslmode = verify-ca$/m);
    expect(ini).toMatch(/^pool_mode = transaction$/m);
    expect(ini).toMatch(/^listen_addr = 127\.0\.10\.102$/m);
  });

  test('GIVEN values with quotes or line breaks WHEN rendering THEN they are escaped or refused', () => {
    expect(renderPgBouncerUserlist([{ name: 'kit_app', password: 'a"b' }])).toBe('"kit_app" "a""b"\n');
    expect(() => renderPgBouncerUserlist([{ name: 'x', password: 'a\nb' }])).toThrow(/line breaks/);
    expect(() => renderPgBouncerIni({ ...spec, database: 'kit\n[pgbouncer]' })).toThrow(/line break/);
    expect(() => renderPgBouncerIni({ ...spec, hosts: [] })).toThrow(/no hosts/);
  });
});

describe('rehearsal rules', () => {
  const ok = { replicas: 2, addressBlock: '127.0.10', port: 5432, maxConnections: 100, pool: DEFAULT_POOL_SETTINGS, maxClientConnections: 1000 };

  test('GIVEN the defaults WHEN validating THEN there is no problem', () => {
    expect(runRules(REHEARSAL_RULES, ok)).toEqual([]);
  });

  test.each([
    [{ replicas: 0 }, /^replicas 0 is out of range: the read-only endpoint needs at least one replica/],
    [{ addressBlock: '10.0.0' }, /^addressBlock 10\.0\.0 is outside 127\.0\.0\.0\/8/],
    [{ addressBlock: '127.0.0' }, /shared with system services/],
    [{ addressBlock: '127.0' }, /not three octets/],
    [{ port: 80 }, /^port 80 is out of range/],
    [{ pool: { ...DEFAULT_POOL_SETTINGS, maxConnectionsPercent: 0 } }, /^pool: maxConnectionsPercent 0 is out of range/],
    [{ sizingMaxConnections: 1000, maxConnections: 100 }, /^pool size 1000 \(maxConnectionsPercent 100 of max_connections 1000\) exceeds the replicas' maxConnections 100: lower maxConnectionsPercent to 10 or less, or raise maxConnections to 1000$/],
  ])('GIVEN %p WHEN validating THEN the message names the setting, the value and the fix', (bad, message) => {
    const problems = runRules(REHEARSAL_RULES, { ...ok, ...bad });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
  });
});

describe('refusals before anything starts', () => {
  const addressBlock = LOOPBACK_BLOCKS.configSuite.block;
  let workDir: string;
  beforeEach(() => {
    workDir = mkdtempSync(join(tmpdir(), 'rehearsal-config-'));
    chmodSync(workDir, 0o755);
  });
  afterEach(() => rmSync(workDir, { recursive: true, force: true }));

  test('GIVEN zero replicas and an oversized pool WHEN up THEN RehearsalConfigError lists both and nothing is created', async () => {
    // WHEN
    const up = Rehearsal.up({ workDir: join(workDir, 'r'), replicas: 0, maxConnections: 10, sizingMaxConnections: 50, addressBlock });

    // THEN
    await expect(up).rejects.toThrow(RehearsalConfigError);
    await expect(up).rejects.toThrow(/replicas 0 is out of range[\s\S]*pool size 50 .* exceeds the replicas' maxConnections 10/);
    expect(existsSync(join(workDir, 'r'))).toBe(false);
  });

  test('GIVEN the read-only endpoint address is taken WHEN up THEN AddressInUseError names it and nothing starts', async () => {
    // GIVEN
    const plan = addressPlan(resolveSettings({ addressBlock }));
    const squatter: Server = createServer();
    await new Promise<void>((resolve) => squatter.listen({ host: plan.readOnly, port: 5432 }, resolve));
    try {
      // WHEN
      const up = Rehearsal.up({ workDir: join(workDir, 'r'), addressBlock });

      // THEN
      await expect(up).rejects.toThrow(AddressInUseError);
      await expect(up).rejects.toThrow(new RegExp(`read-only endpoint address ${plan.readOnly.replace(/\./g, '\\.')}:5432 is busy \\(EADDRINUSE\\)`));
      expect(existsSync(new WorkDirLayout(join(workDir, 'r')).stateFile)).toBe(false);
    } finally {
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
    }
  });
});

describe('CLI arguments and peer configs', () => {
  test('GIVEN CLI flags WHEN parsed THEN they become rehearsal settings', () => {
    const settings = settingsFrom(parseArgs(['up', '--replicas', '3', '--async', '--work-dir=/tmp/x', '--max-connections-percent', '50']));
    expect(settings).toEqual({ replicas: 3, synchronous: false, workDir: '/tmp/x', pool: { maxConnectionsPercent: 50, maxIdleConnectionsPercent: 50, connectionBorrowTimeoutSeconds: 120 } });
    expect(() => parseArgs(['up', '--bogus'])).toThrow(/unknown option --bogus/);
    expect(() => parseArgs(['launch'])).toThrow(/unknown command launch/);
  });

  test('GIVEN pgpool paths WHEN rendering pgpool-II THEN every socket stays in its directory, clients need TLS and backends are verified', () => {
    const paths = new WorkDirLayout('/w').pgpool;
    const secrets = { database: 'kit', adminUser: 'kit_admin', adminPassword: 'a', appUser: 'kit_app', appPassword: 'b', replicationUser: 'kit_replicator', replicationPassword: 'c' };
    const backend = { name: 'writer', address: '127.0.10.2', port: 5432 };
    const cfg = renderPgpoolConfig({ listenAddress: '127.0.10.104', listenPort: 5432, paths, writer: backend, replicas: [], secrets, tls: { caFile: '/w/tls/ca.crt', certFile: '/w/tls/server.crt', keyFile: '/w/tls/server.key' }, children: 4 });
    for (const key of ['socket_dir', 'pcp_socket_dir', 'wd_ipc_socket_dir']) expect(cfg).toMatch(new RegExp(`^${key} = '/w/peers/pgpool'$`, 'm'));
    expect(cfg).toMatch(/^memqcache_oiddir = '\/w\/peers\/pgpool\/oiddir'$/m);
    expect(cfg).not.toMatch(/\/var\/run|\/tmp/);
    expect(cfg).toMatch(/^enable_pool_hba = 'on'$/m);
    expect(cfg).toMatch(/^ssl_ca_cert = '\/w\/tls\/ca\.crt'$/m);
    expect(renderPgpoolHba().split('\n').filter((l) => l !== '' && !l.startsWith('#'))).toEqual(['hostssl all all 127.0.0.0/8 scram-sha-256']);
  });

  test('GIVEN a standby WHEN its primary_conninfo is rendered THEN it verifies the upstream in full against the rehearsal CA', () => {
    const secrets = { database: 'kit', adminUser: 'kit_admin', adminPassword: 'a', appUser: 'kit_app', appPassword: 'b', replicationUser: 'kit_replicator', replicationPassword: "p'w" };
    const tls = { caFile: '/w/tls/ca.crt', certFile: '/w/tls/server.crt', keyFile: '/w/tls/server.key' };
    const upstream = { address: '127.0.10.2', port: 5432 };
    expect(primaryConninfo({ secrets, tls }, { name: 'replica1' }, upstream)).toBe(
      "host=127.0.10.2 port=5432 sslmode=verify-full sslrootcert='/w/tls/ca.crt' user=kit_replicator password='p\\'w' application_name=replica1 connect_timeout=2",
    );
    // A certificate that names no address: verified against its name, dialled at the address.
    expect(primaryConninfo({ secrets, tls: { ...tls, serverName: 'db.example.internal' } }, { name: 'replica1' }, upstream)).toMatch(/^host='db\.example\.internal' hostaddr=127\.0\.10\.2 port=5432 sslmode=verify-full /);
  });

  test('GIVEN replicas WHEN rendering HAProxy THEN it balances TCP connections round-robin with health checks', () => {
    const cfg = renderHaproxyConfig({ listenAddress: '127.0.10.103', listenPort: 5432, maxClientConnections: 100, replicas: [{ name: 'replica1', address: '127.0.10.3', port: 5432 }] });
    expect(cfg).toMatch(/mode tcp/);
    expect(cfg).toMatch(/balance roundrobin/);
    expect(cfg).toMatch(/server replica1 127\.0\.10\.3:5432 check/);
  });
});
