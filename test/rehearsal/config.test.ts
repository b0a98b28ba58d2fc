/**
 * The rehearsal's pure parts and its checks that run before anything starts: PgBouncer rendering from
 * the kit's pool settings, the rule table, and refusals (bad settings, busy address) that must leave
 * nothing running.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runRules } from '../../lib/model/rule-table';
import { DEFAULT_POOL_SETTINGS, poolSizing } from '../../lib/model/sizing';
import { FLEET_PATHS, READ_ONLY_ROLE_GUARD } from '../../lib/model/pgbouncer-fleet';
import { renderPgBouncerUserlist, SERVER_RESET_QUERY, shareOf } from '../../lib/model/pgbouncer-ini';
import { EndpointRole } from '../../lib/model/vocabulary';
import {
  parseArgs,
  pgBouncerPoolSizes,
  primaryConninfo,
  Rehearsal,
  RehearsalConfigError,
  REHEARSAL_RULES,
  renderHaproxyConfig,
  renderPgpoolConfig,
  renderPgpoolHba,
  specFrom,
  standInFiles,
  standInProcess,
  WorkDirLayout,
  type PgBouncerEndpointSpec,
} from '../../lib/rehearsal';
import { resolveSettings } from '../../lib/rehearsal/settings';
import { SUITE_BLOCKS } from '../support/loopback-blocks';
import { scratchDirPerTest } from '../helpers/scratch-dir';

const spec: PgBouncerEndpointSpec = {
  name: 'read-only',
  role: EndpointRole.READ_ONLY,
  listenAddress: '127.0.10.102',
  extraListenAddresses: ['198.19.0.7'],
  listenPort: 5432,
  database: 'kit',
  serverPort: 5433,
  maxConnections: 40,
  pool: { maxConnectionsPercent: 50, maxIdleConnectionsPercent: 25, connectionBorrowTimeoutSeconds: 30 },
  maxClientConnections: 1000,
  processesPerTarget: 3,
  adminUser: 'kit_admin',
};
const values = { serverUser: 'rehearsal_readonly', writer: '127.0.10.1' };
/** The files of the endpoint's processes 1..3 (one replica), below /w. */
const files = (s: PgBouncerEndpointSpec = spec): Map<string, string> =>
  standInFiles(s, [0, 1, 2].map((slot) => standInProcess(s, slot + 1, '127.0.10.3', slot)), '/w', values);

describe('the RDS Proxy stand-in\'s PgBouncer files: the fleet model\'s, sized as RDS Proxy', () => {
  test('GIVEN a budget split over processes WHEN rendering each THEN the pool sizes add up to poolSizing() of max_connections, never more', () => {
    // GIVEN poolSizing(40, 50% / 25%) = 20 server connections, 10 idle, over 3 processes
    const sizing = poolSizing(40, spec.pool);
    expect(pgBouncerPoolSizes(spec)).toEqual({ poolSize: sizing.maxServerConnections, minPoolSize: sizing.maxIdleServerConnections });

    // WHEN
    const f = files();
    const routes = [1, 2, 3].map((i) => f.get(`${FLEET_PATHS.routesDir}/ro-${i}.ini`)!);

    // THEN shares 7 + 7 + 6 = 20 and 4 + 3 + 3 = 10, where the fleet's even split would round down to 6 each
    expect(routes.map((ini) => Number(/^kit = .* pool_size=(\d+) /m.exec(ini)?.[1]))).toEqual([7, 7, 6]);
    expect(routes.map((ini) => Number(/ min_pool_size=(\d+) /.exec(ini)?.[1]))).toEqual([4, 3, 3]);
    // The read-only server role, its password in the auth file, and the fleet's read-only guard on every connection.
    expect(routes[0]).toContain(`kit = host=127.0.10.3 port=5433 dbname=kit user=rehearsal_readonly connect_query='${READ_ONLY_ROLE_GUARD}' pool_size=7 min_pool_size=4 max_db_connections=7`);
    expect(f.get('etc/pgbouncer/ro-1.ini')).toMatch(/^default_pool_size = 7$/m);
    expect(f.get(FLEET_PATHS.commonIni)).toMatch(/^reserve_pool_size = 0$/m);
    expect(f.get(FLEET_PATHS.commonIni)).toMatch(/^query_wait_timeout = 30$/m);
  });

  test.each([
    [20, 3],
    [7, 7],
    [300, 8],
    [1, 1],
    [5, 2],
  ])('GIVEN a budget of %p over %p processes WHEN split THEN the shares differ by at most one and sum to the budget', (total, parts) => {
    const shares = Array.from({ length: parts }, (_, slot) => shareOf(total, parts, slot));
    expect(shares.reduce((a, b) => a + b, 0)).toBe(total);
    expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
  });

  test('GIVEN a process WHEN rendering THEN it listens on the endpoint itself (no load balancer), shares the port, forwards cancels to its peers and resets sessions', () => {
    const f = files();
    const ini = f.get('etc/pgbouncer/ro-2.ini')!;
    // Its own settings come after the shared ones, so the endpoint's addresses win over common.ini's 0.0.0.0.
    expect(ini.indexOf('listen_addr = 127.0.10.102,198.19.0.7')).toBeGreaterThan(ini.indexOf('%include /w/etc/pgbouncer/common.ini'));
    expect(ini).toMatch(/^listen_port = 5432$/m);
    expect(ini).toMatch(/^peer_id = 2$/m);
    expect(ini).toMatch(/^unix_socket_dir = \/w\/run\/pgbouncer\/ro-2$/m);
    expect(ini).toMatch(/^pidfile = \/w\/run\/pgbouncer\/ro-2\/pgbouncer\.pid$/m);
    expect(ini).toContain('%include /w/var/lib/apk-pgbouncer/routes/ro-2.ini');
    expect(f.get('etc/pgbouncer/ro-peers.ini')).toBe('[peers]\n1 = host=/w/run/pgbouncer/ro-1 port=5432\n2 = host=/w/run/pgbouncer/ro-2 port=5432\n3 = host=/w/run/pgbouncer/ro-3 port=5432\n');
    const common = f.get(FLEET_PATHS.commonIni)!;
    expect(common).toMatch(/^so_reuseport = 1$/m);
    expect(common).toMatch(/^max_prepared_statements = 200$/m);
    expect(common).toContain(`server_reset_query = ${SERVER_RESET_QUERY}\n`);
    expect(common).toMatch(/^server_reset_query_always = 1$/m);
    // The console is the rehearsal's admin's; an idle client goes after RDS Proxy's IdleClientTimeout.
    expect(common).toMatch(/^admin_users = kit_admin$/m);
    expect(common).toMatch(/^client_idle_timeout = 1800$/m);
    // Every deploy-time value is filled in.
    for (const [path, text] of f) expect([path, text.includes('${')]).toEqual([path, false]);
  });

  test('GIVEN an endpoint WHEN rendering THEN clients must use TLS and scram, servers are verified by name against the rehearsal CA as the RDS bundle', () => {
    const f = files({ ...spec, role: EndpointRole.READ_WRITE });
    const common = f.get(FLEET_PATHS.commonIni)!;
    expect(common).toMatch(/^ignore_startup_parameters = extra_float_digits$/m);
    expect(common).toMatch(/^client_tls_sslmode = require$/m);
    expect(common).toMatch(/^auth_type = scram-sha-256$/m);
    expect(common).toMatch(/^auth_file = \/w\/etc\/pgbouncer\/userlist\.txt$/m);
    expect(common).toMatch(/^server_tls_sslmode = verify-full$/m);
    expect(common).toMatch(/^server_tls_ca_file = \/w\/etc\/pgbouncer\/tls\/rds-ca-bundle\.pem$/m);
    expect(common).toMatch(/^pool_mode = transaction$/m);
    // The read/write endpoint: the client's own login, its pool inline (no route file).
    expect(f.get('etc/pgbouncer/rw-1.ini')).toContain('kit = host=127.0.10.3 port=5433 dbname=kit pool_size=7 ');
    expect([...f.keys()].filter((k) => k.startsWith(FLEET_PATHS.routesDir))).toEqual([]);
  });

  test('GIVEN values with quotes or line breaks, or a process without a place WHEN rendering THEN they are escaped or refused', () => {
    expect(renderPgBouncerUserlist([{ name: 'kit_app', password: 'a"b' }])).toBe('"kit_app" "a""b"\n');
    expect(() => renderPgBouncerUserlist([{ name: 'x', password: 'a\nb' }])).toThrow(/line breaks/);
    expect(() => files({ ...spec, database: 'kit\n[pgbouncer]' })).toThrow(/DatabaseName contains a line break/);
    expect(() => standInProcess(spec, 0, '127.0.10.3', 0)).toThrow(/peer_id 0 is outside 1\.\.16383/);
    // A budget of 2 (50% of 12 would be 6, but 10 of the 12 are reserved) over 3 processes would leave one with pool_size 0, which PgBouncer reads as unlimited.
    expect(() => standInProcess({ ...spec, maxConnections: 12 }, 3, '127.0.10.3', 2)).toThrow(/slot 2 of 3 processes gets no server connection of a budget of 2/);
  });
});

describe('rehearsal rules', () => {
  const ok = { replicas: 2, addressBlock: '127.0.10', port: 5432, maxConnections: 100, pool: DEFAULT_POOL_SETTINGS, maxClientConnections: 1000, poolerProcesses: 2, poolerVcpus: 4 };

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
    [{ poolerProcesses: 0 }, /^poolerProcesses 0 is out of range: set how many PgBouncer processes/],
    [{ poolerVcpus: 0.5 }, /^poolerVcpus 0\.5 is out of range: set the vCPUs of the pooler host .* \(an integer from 1 to 64\)$/],
    [{ poolerProcesses: 6, maxConnections: 20, pool: { ...DEFAULT_POOL_SETTINGS, maxConnectionsPercent: 25 } }, /^poolerProcesses 6 exceeds the pool size 5 each target's processes split between them \(PgBouncer reads a pool_size of 0 as unlimited\): lower poolerProcesses to 5 or raise maxConnectionsPercent$/],
    // 100% of 1000 is 1000, but the pools stop at 1000 less the reserve of 10; the local instances keep the same reserve.
    [{ sizingMaxConnections: 1000, maxConnections: 100 }, /^pool size 990 \(maxConnectionsPercent 100 of max_connections 1000\) exceeds the replicas' maxConnections 100 less the 10 connections reserved: lower maxConnectionsPercent to 9 or less, or raise maxConnections to 1000$/],
    [{ maxConnections: 10 }, /^pool size 0 \(maxConnectionsPercent 100 of max_connections 10, less the 10 connections reserved\) leaves no server connection: raise maxConnectionsPercent, or maxConnections above 10$/],
  ])('GIVEN %p WHEN validating THEN the message names the setting, the value and the fix', (bad, message) => {
    const problems = runRules(REHEARSAL_RULES, { ...ok, ...bad });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
  });
});

describe('refusals before anything starts', () => {
  const addressBlock = SUITE_BLOCKS.configSuite.block;
  const workDir = scratchDirPerTest('rehearsal-config-');

  test('GIVEN zero replicas and an oversized pool WHEN up THEN RehearsalConfigError lists both and nothing is created', async () => {
    // WHEN
    const up = Rehearsal.up({ workDir: join(workDir(), 'r'), replicas: 0, maxConnections: 10, sizingMaxConnections: 50, addressBlock });

    // THEN
    await expect(up).rejects.toThrow(RehearsalConfigError);
    await expect(up).rejects.toThrow(/replicas 0 is out of range[\s\S]*pool size 40 .* exceeds the replicas' maxConnections 10 less the 10 connections reserved/);
    expect(existsSync(join(workDir(), 'r'))).toBe(false);
  });
});

describe('CLI arguments and the comparison proxies\' configs', () => {
  test('GIVEN CLI flags WHEN parsed THEN they become rehearsal settings', () => {
    const spec = specFrom(parseArgs(['up', '--replicas', '3', '--async', '--work-dir=/tmp/x', '--max-connections-percent', '50', '--pooler-processes', '3', '--pooler-vcpus', '2']));
    expect(spec.deployment).toBeUndefined();
    expect(spec.settings).toEqual({ replicas: 3, synchronous: false, workDir: '/tmp/x', poolerProcesses: 3, poolerVcpus: 2, pool: { maxConnectionsPercent: 50, maxIdleConnectionsPercent: 5, connectionBorrowTimeoutSeconds: 120 } });
    expect(() => parseArgs(['up', '--bogus'])).toThrow(/unknown option --bogus/);
    expect(() => parseArgs(['launch'])).toThrow(/unknown command launch/);
  });

  test('GIVEN --no-comparison-proxies, or the deprecated --no-peers or peers setting WHEN resolved THEN the comparison proxies are off; by default on', () => {
    // GIVEN / WHEN
    const off = [parseArgs(['up', '--no-comparison-proxies']), parseArgs(['up', '--no-peers'])].map((p) => specFrom(p).settings);
    // THEN
    expect(off).toEqual([{ comparisonProxies: false }, { comparisonProxies: false }]);
    expect(resolveSettings({ peers: false }).comparisonProxies).toBe(false);
    expect(resolveSettings({ peers: true, comparisonProxies: false }).comparisonProxies).toBe(false);
    expect(resolveSettings({}).comparisonProxies).toBe(true);
  });

  test('GIVEN pgpool paths WHEN rendering pgpool-II THEN every socket stays in its directory, clients need TLS and backends are verified', () => {
    const paths = new WorkDirLayout('/w').pgpool;
    const secrets = { database: 'kit', adminUser: 'kit_admin', adminPassword: 'a', appUser: 'kit_app', appPassword: 'b', replicationUser: 'kit_replicator', replicationPassword: 'c', readOnlyServerUser: 'rehearsal_readonly', readOnlyServerPassword: 'd' };
    const backend = { name: 'writer', address: '127.0.10.2', port: 5432 };
    const cfg = renderPgpoolConfig({ listenAddress: '127.0.10.104', listenPort: 5432, paths, writer: backend, replicas: [], secrets, tls: { caFile: '/w/tls/ca.crt', certFile: '/w/tls/server.crt', keyFile: '/w/tls/server.key' }, children: 4 });
    for (const key of ['socket_dir', 'pcp_socket_dir', 'wd_ipc_socket_dir']) expect(cfg).toMatch(new RegExp(`^${key} = '/w/comparison/pgpool'$`, 'm'));
    expect(cfg).toMatch(/^memqcache_oiddir = '\/w\/comparison\/pgpool\/oiddir'$/m);
    expect(cfg).not.toMatch(/\/var\/run|\/tmp/);
    expect(cfg).toMatch(/^enable_pool_hba = 'on'$/m);
    expect(cfg).toMatch(/^ssl_ca_cert = '\/w\/tls\/ca\.crt'$/m);
    expect(renderPgpoolHba().split('\n').filter((l) => l !== '' && !l.startsWith('#'))).toEqual(['hostssl all all 127.0.0.0/8 scram-sha-256', 'hostssl all all 198.18.0.0/15 scram-sha-256']);
  });

  test('GIVEN a standby WHEN its primary_conninfo is rendered THEN it verifies the upstream in full against the rehearsal CA', () => {
    const secrets = { database: 'kit', adminUser: 'kit_admin', adminPassword: 'a', appUser: 'kit_app', appPassword: 'b', replicationUser: 'kit_replicator', replicationPassword: "p'w", readOnlyServerUser: 'rehearsal_readonly', readOnlyServerPassword: 'd' };
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
