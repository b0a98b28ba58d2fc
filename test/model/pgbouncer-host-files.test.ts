/**
 * The host software as files (host/): the fleet's layout computed on the host (apk_host.py configure) is the
 * model's, file for file, on eight fleets; the units, the bootstrap and the agent name what the model names; the
 * user data carries the bootstrap's files, and what it carries still parses and compiles.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_POOL_SETTINGS, EndpointRole } from '../../lib/model';
import { BOOTSTRAP_PLACEHOLDERS, bootstrapFiles, FLEET_PROCESS_LIST, placeholderVariable, renderPoolerBootstrap, ustar, withoutCommentLines } from '../../lib/model/pgbouncer-bootstrap';
import { FLEET_PATHS, type PoolerFleetSpec } from '../../lib/model/pgbouncer-fleet';
import { fleetProcessName, planFleetProcesses } from '../../lib/model/pgbouncer-fleet-files';
import { HOST_AGENT_FILE, HOST_AGENT_PACKAGE_FILE, HOST_AGENT_PATH, HOST_FETCH_FILE, HOST_FETCH_PATH, HOST_LIB_DIR, hostAgentSha256 } from '../../lib/model/pgbouncer-host-agent';
import { hostFile, hostFilesDir } from '../../lib/model/pgbouncer-host-files';
import { renderHostKitJson, renderHostTemplates } from '../../lib/model/pgbouncer-host-kit';
import { FLEET_NAME_FILE } from '../../lib/model/pgbouncer-host-serve';
import { AUTH_REFRESH_MINUTES, FLEET_OS_USER, FLEET_RESTART_SECONDS, FLEET_START_LIMIT, PGBOUNCER_START_LIMIT_ACTION, PROCESS_UNIT_NAME, REFRESH_SERVICE_NAME, REFRESH_TIMER_NAME, SERVE_UNIT_NAME, hostUnit } from '../../lib/model/pgbouncer-host-units';
import { fleetValues, referenceFiles } from '../support/pooler-fleet-values';

const fleet: PoolerFleetSpec = { hosts: 2, vcpusPerHost: 2, readers: 2, maxConnections: 40, pool: { ...DEFAULT_POOL_SETTINGS, maxConnectionsPercent: 50 }, tcpIdleTimeoutSeconds: 350 };

/**
 * `apk-host configure` on the fleet's values (the user data's exported variables) below `root`: the agent's
 * output paths moved there, its files' contents as on a host; the route files owned by this test's user.
 */
function configure(root: string, values: Readonly<Record<string, string>>): { status: number | null; stderr: string } {
  const templates = join(root, 'templates');
  mkdirSync(templates, { recursive: true });
  for (const [name, text] of renderHostTemplates()) writeFileSync(join(templates, name), text);
  const etc = join(root, FLEET_PATHS.dir);
  mkdirSync(etc, { recursive: true });
  writeFileSync(join(etc, 'kit.json'), renderHostKitJson());
  const below = (relative: string): string => join(root, relative);
  const script = [
    'import os, sys',
    `sys.path.insert(0, ${JSON.stringify(hostFilesDir())})`,
    'import apk_host as a',
    `a.ETC, a.OS_USER = ${JSON.stringify(etc)}, ${JSON.stringify(userInfo().username)}`,
    `a.kit()["paths"].update(commonIni=${JSON.stringify(below(FLEET_PATHS.commonIni))}, processes=${JSON.stringify(below(FLEET_PROCESS_LIST))}, fleetName=${JSON.stringify(below(FLEET_NAME_FILE))}, routesDir=${JSON.stringify(below(FLEET_PATHS.routesDir))})`,
    `a.configure(${JSON.stringify(templates)})`,
  ].join('\n');
  const env = Object.fromEntries(Object.values(BOOTSTRAP_PLACEHOLDERS).map((p) => [placeholderVariable(p), values[p.slice(2, -1)]!]));
  return spawnSync('python3', ['-c', script], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', PYTHONDONTWRITEBYTECODE: '1', ...env }, timeout: 30_000 });
}

describe('the fleet\'s layout, computed on the host', () => {
  test.each<[string, PoolerFleetSpec, number]>([
    ['the reference fleet', fleet, 2],
    ['three hosts of 4 vCPUs', { ...fleet, hosts: 3, vcpusPerHost: 4, maxConnections: 1000 }, 2],
    ['more readers than vCPUs', { ...fleet, readers: 3, maxConnections: 900, pool: { ...DEFAULT_POOL_SETTINGS, maxConnectionsPercent: 80, maxIdleConnectionsPercent: 90 } }, 3],
    ['a short NLB idle timeout and more clients', { ...fleet, tcpIdleTimeoutSeconds: 60, maxClientConnections: 5000, vcpusPerHost: 8, maxConnections: 2000 }, 2],
    // 100% of 30 would be 30: the host stops at 30 less the reserve of 10, as poolSizing does.
    ['a max_connections the reserve decides', { ...fleet, maxConnections: 30, pool: { ...DEFAULT_POOL_SETTINGS, maxConnectionsPercent: 100, maxIdleConnectionsPercent: 100 } }, 2],
    ['session pooling on both roles', { ...fleet, maxConnections: 1000, sessionRoles: [EndpointRole.READ_WRITE, EndpointRole.READ_ONLY], sessionMaxConnectionsPercent: 30 }, 2],
    ['session pooling on the read-only role only, 3 readers, an idle floor above the session share', { ...fleet, vcpusPerHost: 4, maxConnections: 600, sessionRoles: [EndpointRole.READ_ONLY], pool: { ...DEFAULT_POOL_SETTINGS, maxIdleConnectionsPercent: 90 } }, 3],
    ['session pooling on the read/write role only', { ...fleet, maxConnections: 500, sessionRoles: [EndpointRole.READ_WRITE], sessionMaxConnectionsPercent: 2 }, 1],
  ])('GIVEN %s WHEN the host lays it out THEN every file is the model\'s, and the process list names each process', (_label, spec, readerCount) => {
    const root = mkdtempSync(join(tmpdir(), 'pooler-host-'));
    try {
      // GIVEN
      const readers = Array.from({ length: readerCount }, (_, i) => `reader-${i + 1}.abc.us-east-1.rds.amazonaws.com`);
      const values = fleetValues({ ...spec, readers: readerCount }, { cluster: 'kit.cluster-abc.us-east-1.rds.amazonaws.com', writer: 'w1.abc.us-east-1.rds.amazonaws.com', readers, database: 'app', port: '5432', serverUser: 'pgbouncer_ro' });
      // WHEN
      const run = configure(root, values);
      // THEN
      expect([run.status, run.stderr]).toEqual([0, '']);
      const reference = referenceFiles({ ...spec, readers: readerCount }, values);
      expect(reference.size).toBeGreaterThan(4);
      for (const [path, text] of reference) expect([path, readFileSync(join(root, path), 'utf8')]).toEqual([path, text]);
      const names = planFleetProcesses({ ...spec, readers: readerCount }).map(fleetProcessName);
      expect(readFileSync(join(root, FLEET_PROCESS_LIST), 'utf8').trim().split(/\s+/)).toEqual(names);
      expect(readFileSync(join(root, FLEET_NAME_FILE), 'utf8')).toBe(`${values.FleetName}\n`);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('the host files name what the model names', () => {
  /** `Key=value` settings of a unit file, by key (the last of each). */
  const settings = (unit: string): Record<string, string> => Object.fromEntries(unit.split('\n').filter((l) => /^\w+=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));

  test('GIVEN the PgBouncer process unit WHEN read THEN it runs each process\'s file as the fleet\'s user, restarts as the model says and powers off at its start limit', () => {
    expect(settings(hostUnit(PROCESS_UNIT_NAME))).toMatchObject({
      User: FLEET_OS_USER,
      ExecStart: `/usr/sbin/pgbouncer /${FLEET_PATHS.dir}/%i.ini`,
      RuntimeDirectory: 'pgbouncer/%i',
      StartLimitIntervalSec: String(FLEET_START_LIMIT.intervalSeconds),
      StartLimitBurst: String(FLEET_START_LIMIT.burst),
      StartLimitAction: PGBOUNCER_START_LIMIT_ACTION,
      RestartSec: String(FLEET_RESTART_SECONDS),
    });
    // The runtime directory is each process's socket directory.
    expect(`/run/${settings(hostUnit(PROCESS_UNIT_NAME)).RuntimeDirectory}`).toBe(`/${FLEET_PATHS.runDir}/%i`);
  });

  test('GIVEN the agent\'s unit and the refresh timer WHEN read THEN serve runs the agent as the fleet\'s user without a start limit, and the secrets are re-read every AUTH_REFRESH_MINUTES', () => {
    expect(settings(hostUnit(SERVE_UNIT_NAME))).toMatchObject({ User: FLEET_OS_USER, ExecStart: `${HOST_AGENT_PATH} serve`, StartLimitIntervalSec: '0', RestartSec: String(FLEET_RESTART_SECONDS) });
    expect(settings(hostUnit(REFRESH_TIMER_NAME))).toMatchObject({ OnBootSec: `${AUTH_REFRESH_MINUTES}min`, OnUnitActiveSec: `${AUTH_REFRESH_MINUTES}min` });
    expect(settings(hostUnit(REFRESH_SERVICE_NAME)).ExecStart).toBe('/usr/local/sbin/apk-refresh-auth');
    expect(hostFile('apk-refresh-auth')).toContain(`${HOST_AGENT_PATH} auth-file /${FLEET_PATHS.authFile} `);
  });

  test('GIVEN the bootstrap and the agent WHEN read THEN their paths and user are the model\'s', () => {
    const script = hostFile('bootstrap.sh');
    for (const line of [`LIB=${HOST_LIB_DIR}`, `FETCH=${HOST_FETCH_PATH}`, `AGENT=${HOST_AGENT_PATH}`, `ETC=/${FLEET_PATHS.dir}`]) expect(script.split('\n')).toContain(line);
    expect(script).toContain(`"$HERE/${HOST_AGENT_PACKAGE_FILE}.sha256"`);
    expect(script).toContain(`install -D -m 0755 "$dir/${HOST_AGENT_PACKAGE_FILE}" "$LIB/${HOST_AGENT_FILE}"`);
    expect(script).toContain(`useradd --system --no-create-home --shell /usr/sbin/nologin ${FLEET_OS_USER}`);
    const agent = hostFile(HOST_AGENT_FILE);
    expect(agent).toContain(`\nETC = "/${FLEET_PATHS.dir}"\n`);
    expect(agent).toContain(`\nOS_USER = "${FLEET_OS_USER}"\n`);
    expect(agent).toContain(`\nfrom ${HOST_FETCH_FILE.replace(/\.py$/, '')} import `);
  });

  test('GIVEN the kit\'s host files WHEN searched THEN none reads a hook of the kit\'s tests from its environment', () => {
    for (const name of ['bootstrap.sh', HOST_AGENT_FILE, HOST_FETCH_FILE, 'apk-refresh-auth']) expect([name, hostFile(name)]).not.toEqual([name, expect.stringMatching(/APK_ROOT|APK_SKIP|APK_AWS_STANDIN|APK_FILE_OWNER/)]);
  });
});

describe('the bootstrap\'s files in the user data', () => {
  test('GIVEN the user data WHEN its tar is unpacked THEN it holds the bootstrap\'s files byte for byte, the agent pinned by the SHA-256 of host/apk_host.py', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bootstrap-files-'));
    try {
      const userData = join(dir, 'user-data');
      writeFileSync(userData, renderPoolerBootstrap());
      const out = join(dir, 'out');
      mkdirSync(out);
      const unpack = spawnSync('bash', ['-c', `sed -n "/^base64/,/^APK_EOF/p" "$1" | sed '1d;$d' | base64 --decode | tar -xz -C "$2"`, 'unpack', userData, out], { encoding: 'utf8' });
      expect(unpack.stderr).toBe('');
      for (const f of bootstrapFiles()) expect([f.name, readFileSync(join(out, f.name), 'utf8')]).toEqual([f.name, f.content]);
      expect(readFileSync(join(out, `${HOST_AGENT_PACKAGE_FILE}.sha256`), 'utf8')).toBe(`${hostAgentSha256()}  ${HOST_AGENT_PACKAGE_FILE}\n`);
      // The tar's bytes depend on the files alone.
      expect(ustar(bootstrapFiles()).equals(ustar([...bootstrapFiles()].reverse()))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('GIVEN the carried shell and Python WHEN checked THEN bash parses the bootstrap and Python compiles the fetcher, without their comment lines as with them', () => {
    const carried = new Map(bootstrapFiles().map((f) => [f.name, f.content]));
    expect(carried.get('bootstrap.sh')).toBe(withoutCommentLines(hostFile('bootstrap.sh')));
    expect(carried.get('bootstrap.sh')).not.toMatch(/^\s*#(?!!)/m);
    expect(spawnSync('bash', ['-n'], { input: carried.get('bootstrap.sh'), encoding: 'utf8' })).toMatchObject({ status: 0, stderr: '' });
    expect(spawnSync('python3', ['-c', 'import sys; compile(sys.stdin.read(), "apk_aws.py", "exec")'], { input: carried.get(HOST_FETCH_FILE), encoding: 'utf8' })).toMatchObject({ status: 0, stderr: '' });
  });
});
