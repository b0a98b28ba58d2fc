/**
 * The PgBouncer engine's host bootstrap (lib/model/pgbouncer-bootstrap.ts, host/bootstrap.sh): a template both
 * flavours substitute, shellcheck-clean once substituted, within EC2's user data limit (the layout the host
 * computes is compared with the model's in test/model/pgbouncer-host-files.test.ts); and, live,
 * the same text run by cloud-init on a booted Debian 13 host (Rehearsal.startPoolerHost) installs, configures
 * and starts the fleet, whose PgBouncer processes let a consumer in with its secret (SCRAM pass-through with
 * the verifier the role bootstrap sets) to the writer and a reader, and follow a writer failover.
 */
import { spawnSync } from 'node:child_process';
import { get } from 'node:http';
import { mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { DEFAULT_POOL_SETTINGS, EndpointRole } from '../../../lib/model';
import { BOOTSTRAP_PLACEHOLDERS, FLEET_PROCESS_LIST, renderPoolerBootstrap, substitutePlaceholders, USER_DATA_MAX_BYTES, worstCaseUserDataBytes } from '../../../lib/model/pgbouncer-bootstrap';
import { hostFile } from '../../../lib/model/pgbouncer-host-files';
import { AMAZON_TIME_SYNC, renderHostKitEnv } from '../../../lib/model/pgbouncer-host-kit';
import { POOLER_HEALTH_PATHS, POOLER_HEALTH_PORT } from '../../../lib/model/pgbouncer-host-serve';
import { FLEET_HOST_SERVE_WAIT_SECONDS, FLEET_HOST_SIGNAL_TIMEOUT_SECONDS } from '../../../lib/model/pgbouncer-rollout';
import { FLEET_PATHS, FLEET_PORTS, fleetPath, READ_ONLY_ROUTING, AURORA_ENDPOINT_DNS_TTL_SECONDS, type PoolerFleetSpec } from '../../../lib/model/pgbouncer-fleet';
import { fleetProcessName, planFleetProcesses } from '../../../lib/model/pgbouncer-fleet-files';
import { derivedScramVerifier } from '../../../lib/model/scram-salt';
import { execInHost, pgbouncerPid, poolerBootstrapFailureDrill, poolerFailoverDrill, poolerHostLostDrill, poolerProcessKillDrill, poolerReaderLostDrill, REHEARSAL_CLUSTER, rehearsalAwsNames, type PoolerHost } from '../../../lib/rehearsal';
import { fleetValues, referenceFiles } from '../../support/pooler-fleet-values';
import { liveUnavailable } from '../rehearsal/isolation';
import { startRehearsal, stopRehearsal } from '../rehearsal/live';

const fleet: PoolerFleetSpec = { hosts: 2, vcpusPerHost: 2, readers: 2, maxConnections: 40, pool: { ...DEFAULT_POOL_SETTINGS, maxConnectionsPercent: 50 }, tcpIdleTimeoutSeconds: 350 };

const placeholderName = (p: string): string => p.slice(2, -1);

// AWS fact ec2-user-data-16kb (lib/model/aws-facts.ts): the bootstrap at its longest stays under 16 KB.
describe('PgBouncer engine host bootstrap', () => {
  const template = renderPoolerBootstrap();

  test('GIVEN the template WHEN read THEN its only ${...} are the placeholders, and nothing Terraform reads as a directive or CloudFormation as a reference', () => {
    const names = [...new Set([...template.matchAll(/\$\{([^}]*)\}/g)].map((m) => m[1]))].sort();
    expect(names).toEqual(Object.values(BOOTSTRAP_PLACEHOLDERS).map(placeholderName).sort());
    expect(template).not.toMatch(/%\{/);
    expect(template).not.toMatch(/\$\{!/);
  });

  test('GIVEN the template substituted, and the bootstrap it carries WHEN checked by bash and shellcheck THEN both are clean', () => {
    const values = fleetValues(fleet, { cluster: 'kit.cluster-abc.us-east-1.rds.amazonaws.com', writer: 'w1.abc.us-east-1.rds.amazonaws.com', readers: ['r1.abc.us-east-1.rds.amazonaws.com', 'r2.abc.us-east-1.rds.amazonaws.com'], database: 'app', port: '5432', serverUser: 'pgbouncer_ro' });
    const dir = mkdtempSync(join(tmpdir(), 'bootstrap-'));
    try {
      const script = join(dir, 'user-data.sh');
      writeFileSync(script, substitutePlaceholders(template, values));
      const program = join(dir, 'bootstrap.sh');
      writeFileSync(program, hostFile('bootstrap.sh'));
      for (const file of [script, program]) {
        expect(spawnSync('bash', ['-n', file], { encoding: 'utf8' }).stderr).toBe('');
        const check = spawnSync('shellcheck', ['--shell=bash', '--severity=warning', file], { encoding: 'utf8' });
        expect(check.error?.message ?? '').toBe('');
        expect([file, check.stdout]).toEqual([file, '']);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test.each([
    ['a host of a stack whose bootstrap fails', 'Stack-1', 'false', 'logger:failed: 1\nsignal Stack-1 PoolerHosts1A2B eu-west-1 FAILURE\npoweroff\n'],
    ['a host whose bootstrap fails (Terraform: no stack)', '', 'false', 'logger:failed: 1\npoweroff\n'],
    ['a host whose signal cannot be sent', 'unreachable', 'false', 'logger:failed: 1\npoweroff\n'],
    ['a host whose bootstrap succeeds', 'Stack-1', 'true', ''],
  ])('GIVEN %s WHEN the bootstrap exits THEN a failed host signals FAILURE where there is a stack, then powers off (EC2\'s checks replace it)', (_label, stack, last, expected) => {
    // GIVEN the bootstrap's exit handler and signal, with systemctl, logger and the fetcher standing in
    const program = hostFile('bootstrap.sh');
    const handler = /^on_exit\(\) \{.*\}$/m.exec(program)![0];
    const signal = /^signal\(\) \{.*\}$/m.exec(program)![0];
    const fetch = 'fetch() { [ "$2" != unreachable ] || return 1; echo "$*"; }';
    const run = spawnSync('bash', ['-c', `set -euo pipefail; FETCH=fetch; SIGNAL_STACK='${stack}'; SIGNAL_RESOURCE=PoolerHosts1A2B; SIGNAL_REGION=eu-west-1; systemctl() { echo "$1"; }; logger() { echo "logger:$3"; }; ${fetch}; ${signal}; ${handler}\ntrap on_exit EXIT\n${last}`], { encoding: 'utf8' });
    // THEN
    expect(run.stdout).toBe(expected);
  });

  test('GIVEN the bootstrap WHEN read THEN the host signals SUCCESS only after its units started and both health paths answered, within the serve wait', () => {
    const program = hostFile('bootstrap.sh');
    const steps = program.split('\n').filter((l) => /^[a-z_]+$/.test(l));
    expect(steps.slice(-2)).toEqual(['start_processes', 'signal_serving']);
    const body = /^signal_serving\(\) \{\n([\s\S]*?)\n\}$/m.exec(program)![1]!.trim().split('\n').map((l) => l.trim()).filter((l) => !l.startsWith('#'));
    expect(body).toEqual(['"$FETCH" wait-serving "$SERVE_WAIT_SECONDS" $HEALTH_URLS', 'signal SUCCESS']);
    // The values it waits with are the model's (kit.env, which the bootstrap sources).
    const env = Object.fromEntries(renderHostKitEnv().trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1).replace(/^"|"$/g, '')]));
    expect(env).toMatchObject({ SERVE_WAIT_SECONDS: String(FLEET_HOST_SERVE_WAIT_SECONDS), HEALTH_URLS: `http://127.0.0.1:${POOLER_HEALTH_PORT}${POOLER_HEALTH_PATHS.readWrite} http://127.0.0.1:${POOLER_HEALTH_PORT}${POOLER_HEALTH_PATHS.readOnly}` });
    // The host's whole boot fits in what CloudFormation waits for a signal.
    expect(FLEET_HOST_SERVE_WAIT_SECONDS).toBeLessThan(FLEET_HOST_SIGNAL_TIMEOUT_SECONDS / 2);
  });

  test('GIVEN the bootstrap WHEN read THEN the clock follows Amazon Time Sync (chrony or timesyncd) before the first signed AWS call', () => {
    const program = hostFile('bootstrap.sh');
    const steps = program.split('\n').filter((l) => /^[a-z_]+$/.test(l));
    expect(steps.indexOf('sync_clock')).toBeGreaterThanOrEqual(0);
    expect(steps.indexOf('sync_clock')).toBeLessThan(steps.indexOf('install_packages'));
    expect(renderHostKitEnv()).toContain(`TIME_SYNC=${AMAZON_TIME_SYNC}\n`);
    expect(program).toContain('echo "server $TIME_SYNC prefer iburst" >/etc/chrony/sources.d/aws.sources');
    expect(program).toContain("printf '[Time]\\nNTP=%s\\n' \"$TIME_SYNC\" >/etc/systemd/timesyncd.conf.d/aws.conf");
  });

  test('GIVEN 15 readers and 15 consumer secrets, every value at its longest WHEN substituted THEN the user data fits EC2\'s 16 KB', () => {
    expect(worstCaseUserDataBytes(template)).toBeLessThanOrEqual(USER_DATA_MAX_BYTES);
  });
});

const live = liveUnavailable === undefined ? describe : describe.skip;

live('the bootstrap on a rehearsal host', () => {
  let started: Awaited<ReturnType<typeof startRehearsal>> | undefined;
  let host: PoolerHost | undefined;
  const consumer = { username: 'app_fleet', password: 'fleet-consumer-password-0123456789' };
  const server = { username: 'fleet_ro_server', password: 'fleet-server-password-0123456789' };
  // Both roles have an endpoint in session pooling: the host runs both session listeners beside the transaction ones.
  const sessionRoles = [EndpointRole.READ_WRITE, EndpointRole.READ_ONLY];
  // 60% of the rehearsal's budget of 30 per target: 4 connections per read/write session process, so a test's two clients never wait on each other.
  const sessionMaxConnectionsPercent = 60;
  /** The fleet the booted host is one host of, as the model plans it. */
  const bootedSpec = (): PoolerFleetSpec => {
    const s = started!.rehearsal.settings;
    return { hosts: 2, vcpusPerHost: 2, readers: 2, maxConnections: s.sizingMaxConnections, pool: s.pool, tcpIdleTimeoutSeconds: 350, maxClientConnections: s.maxClientConnections, sessionRoles, sessionMaxConnectionsPercent };
  };

  /** A consumer's connection to the booted host's listener (its address in the data VPC, reached through the VPC's router). */
  const connectToHost = async (port: number, login: { username: string; password: string }, attempts = 40): Promise<Client> => {
    const r = started!.rehearsal;
    for (let attempt = 0; ; attempt++) {
      const c = new Client({ host: host!.host, port, user: login.username, password: login.password, database: r.endpoints.writer.database, ssl: { ca: readFileSync(r.endpoints.writer.caFile, 'utf8') }, connectionTimeoutMillis: 3000, query_timeout: 5000 });
      c.on('error', () => undefined);
      try {
        await c.connect();
        return c;
      } catch (err) {
        await c.end().catch(() => undefined);
        if (attempt >= attempts) throw err;
        await new Promise((res) => setTimeout(res, 150));
      }
    }
  };

  beforeAll(async () => {
    started = await startRehearsal('bootstrapSuite', { network: 'namespaces', comparisonProxies: false, maxConnections: 40 });
  }, 120_000);

  // The booted host and its metadata service are the rehearsal's: down stops them by pid, and stopRehearsal checks.
  afterAll(async () => {
    await stopRehearsal(started);
  }, 60_000);

  test('GIVEN the template substituted with the rehearsal\'s values WHEN a booted Debian 13 host runs it THEN its systemd runs the processes the model lays out, with the fleet\'s files, the verifiers the role bootstrap sets, and private files only the PgBouncer user reads', async () => {
    const r = started!.rehearsal;
    host = await r.startPoolerHost({ consumers: [{ ...consumer, access: 'READ_WRITE' }], server, sessionRoles, sessionMaxConnectionsPercent });
    started!.pids.push(host.booted.container.pid, host.booted.imds.pid);

    // The files are exactly what the fleet model renders for a host (root /): one host of a fleet of two.
    const spec = bootedSpec();
    for (const [path, text] of referenceFiles(spec, host.values)) expect([path, readFileSync(fleetPath(host.root, path), 'utf8')]).toEqual([path, text]);
    // AWS-shaped names, resolved by the host's hosts file; the cluster endpoint's moves at failover.
    const names = rehearsalAwsNames(r.rehearsed);
    expect([host.values.ClusterEndpoint, host.values.ReaderEndpoints]).toEqual([names.clusterEndpoint(REHEARSAL_CLUSTER), `${names.instanceEndpoint('replica1')} ${names.instanceEndpoint('replica2')}`]);
    const authFile = fleetPath(host.root, FLEET_PATHS.authFile);
    expect(readFileSync(authFile, 'utf8')).toBe(`"${server.username}" "${server.password}"\n"${consumer.username}" "${derivedScramVerifier(consumer.username, consumer.password)}"\n`);
    const pgbouncerUser = readFileSync(fleetPath(host.root, 'etc/passwd'), 'utf8').split('\n').find((l) => l.startsWith('pgbouncer:'))!.split(':');
    for (const file of [authFile, fleetPath(host.root, FLEET_PATHS.tlsKeyFile)]) {
      const st = statSync(file);
      expect([file, st.mode & 0o777, `${st.uid}:${st.gid}`]).toEqual([file, 0o600, `${pgbouncerUser[2]}:${pgbouncerUser[3]}`]);
    }
    // Its processes are the host's systemd's, one unit each, in the host's own network namespace.
    const processes = planFleetProcesses(spec).map(fleetProcessName);
    expect(readFileSync(fleetPath(host.root, FLEET_PROCESS_LIST), 'utf8').trim().split(/\s+/)).toEqual(processes);
    const hostNs = `net:[${statSync(`/run/netns/${host.booted.spec.namespace}`).ino}]`;
    for (const name of processes) {
      const pid = pgbouncerPid(host, name)!;
      expect([name, readlinkSync(`/proc/${pid}/ns/net`), readFileSync(`/proc/${pid}/comm`, 'utf8').trim()]).toEqual([name, hostNs, 'pgbouncer']);
      expect((await execInHost(host.booted, ['systemctl', 'is-active', `apk-pgbouncer@${name}.service`])).stdout.trim()).toBe('active');
    }

    const connect = (port: number): Promise<Client> => connectToHost(port, consumer);
    const rw = await connect(FLEET_PORTS.readWrite);
    try {
      await rw.query('CREATE TABLE IF NOT EXISTS fleet_probe (id int PRIMARY KEY)');
      await rw.query('INSERT INTO fleet_probe VALUES (1) ON CONFLICT DO NOTHING');
      expect((await rw.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r')).rows[0]!.r).toBe(false);
    } finally {
      await rw.end();
    }
    const ro = await connect(FLEET_PORTS.readOnly);
    try {
      const row = (await ro.query<{ r: boolean; u: string }>('SELECT pg_is_in_recovery() AS r, current_user AS u')).rows[0]!;
      // A reader, logged in as the listener's server role.
      expect(row).toEqual({ r: true, u: server.username });
      await expect(ro.query('INSERT INTO fleet_probe VALUES (2)')).rejects.toThrow(/read-only transaction|permission denied/);
    } finally {
      await ro.end();
    }
  }, 300_000);
  test('GIVEN endpoints in session pooling WHEN a client LISTENs, takes an advisory lock and SETs through the session listeners THEN it is notified, holds the lock and keeps the setting across transactions, which the transaction listener cannot; the session listeners pass their health checks', async () => {
    // The health paths the session target groups check answer 200.
    const health = (path: string): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = get({ host: host!.host, port: host!.healthPort, path, timeout: 5000 }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
      });
    for (const path of ['/read-write-session', '/read-only-session']) {
      let status = 0;
      for (let i = 0; i < 30 && status !== 200; i++) {
        status = await health(path);
        if (status !== 200) await new Promise((res) => setTimeout(res, 500));
      }
      expect([path, status]).toEqual([path, 200]);
    }
    const notified = async (port: number): Promise<boolean> => {
      const [listener, notifier] = [await connectToHost(port, consumer), await connectToHost(port, consumer)];
      try {
        const got = new Promise<boolean>((resolve) => {
          listener.on('notification', (n) => n.channel === 'fleet_channel' && resolve(true));
          setTimeout(() => resolve(false), 1500);
        });
        await listener.query('LISTEN fleet_channel');
        // Another transaction of the listening client before the notification: its server connection must stay its own.
        await listener.query('SELECT 1');
        await notifier.query("NOTIFY fleet_channel, 'hello'");
        return await got;
      } finally {
        await Promise.all([listener.end(), notifier.end()]);
      }
    };
    const lockHeld = async (port: number): Promise<boolean> => {
      const [holder, other] = [await connectToHost(port, consumer), await connectToHost(port, consumer)];
      try {
        await holder.query('SELECT pg_advisory_lock(4242)');
        await holder.query('SELECT 1');
        const taken = (await other.query<{ t: boolean }>('SELECT pg_try_advisory_lock(4242) AS t')).rows[0]!.t;
        if (taken) await other.query('SELECT pg_advisory_unlock(4242)');
        return !taken;
      } finally {
        await Promise.all([holder.end(), other.end()]);
      }
    };
    const setKept = async (port: number): Promise<string> => {
      const c = await connectToHost(port, consumer);
      try {
        await c.query("SET work_mem = '7MB'");
        return (await c.query<{ work_mem: string }>('SHOW work_mem')).rows[0]!.work_mem;
      } finally {
        await c.end();
      }
    };
    // THEN session pooling keeps what transaction pooling loses, on the same host and servers.
    expect([await notified(FLEET_PORTS.readWriteSession), await lockHeld(FLEET_PORTS.readWriteSession), await setKept(FLEET_PORTS.readWriteSession)]).toEqual([true, true, '7MB']);
    expect([await notified(FLEET_PORTS.readWrite), await lockHeld(FLEET_PORTS.readWrite)]).toEqual([false, false]);
    expect(await setKept(FLEET_PORTS.readOnlySession)).toBe('7MB');
    // The read-only session listener is still the reader's, as the listener's server role.
    const ro = await connectToHost(FLEET_PORTS.readOnlySession, consumer);
    try {
      expect((await ro.query<{ r: boolean; u: string }>('SELECT pg_is_in_recovery() AS r, current_user AS u')).rows[0]).toEqual({ r: true, u: 'fleet_ro_server' });
    } finally {
      await ro.end();
    }
    // A client's protocol-level statement does not outlive its session: the next client of the same pool can prepare the name again.
    for (let i = 0; i < 3; i++) {
      const c = await connectToHost(FLEET_PORTS.readWriteSession, consumer);
      try {
        expect((await c.query({ name: 'fleet_named', text: 'SELECT $1::int AS n', values: [i] })).rows[0]).toEqual({ n: i });
        expect((await c.query<{ n: string }>('SELECT count(*) AS n FROM pg_prepared_statements')).rows[0]!.n).toBe('1');
      } finally {
        await c.end();
      }
    }
  }, 120_000);

  test.each(['readWriteSession', 'readOnlySession'] as const)('GIVEN clients of the host\'s %s listener that PREPARE and leave WHEN 100 fresh clients look THEN none sees or can EXECUTE the PREPARE', async (listener) => {
    // GIVEN as many clients as the listener's processes have server connections together, each PREPAREs and leaves
    const port = FLEET_PORTS[listener];
    const preparers = planFleetProcesses(bootedSpec()).filter((p) => p.listener === listener).reduce((n, p) => n + p.poolSize, 0);
    expect(preparers).toBeGreaterThan(0);
    // Each client leaves as soon as it is done: a session pool lends its connection to the next one only then.
    const preparedOn = new Set<number>();
    await Promise.all(
      Array.from({ length: preparers }, async () => {
        const c = await connectToHost(port, consumer);
        try {
          await c.query("PREPARE leak_probe AS SELECT 'leaked' AS v");
          preparedOn.add((await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
        } finally {
          await c.end();
        }
      }),
    );
    // WHEN fresh clients take the same server connections (the pool holds no more)
    let onPrepared = 0;
    const saw: string[] = [];
    const codes: Record<string, number> = {};
    for (let done = 0; done < 100; done += preparers) {
      await Promise.all(
        Array.from({ length: Math.min(preparers, 100 - done) }, async () => {
          const c = await connectToHost(port, consumer);
          try {
            const row = (await c.query<{ pid: number; names: string[] }>('SELECT pg_backend_pid() AS pid, array(SELECT name FROM pg_prepared_statements) AS names')).rows[0]!;
            if (preparedOn.has(row.pid)) onPrepared++;
            if (row.names.length > 0) saw.push(`${row.pid}: ${row.names.join(',')}`);
            const code = await c.query('EXECUTE leak_probe').then(() => 'executed', (err: { code?: string }) => err.code ?? 'error');
            codes[code] = (codes[code] ?? 0) + 1;
          } finally {
            await c.end();
          }
        }),
      );
    }
    // THEN
    process.stdout.write(`host ${listener}: PREPARE on ${preparedOn.size} server connections; of 100 fresh clients ${onPrepared} landed on one, ${saw.length} saw a prepared statement, EXECUTE gave ${JSON.stringify(codes)}\n`);
    // Enough of them landed on a prepared connection for a leak to show (the kernel spreads connections over the processes).
    expect(onPrepared).toBeGreaterThan(25);
    expect(saw).toEqual([]);
    expect(codes).toEqual({ '26000': 100 });
  }, 120_000);

  // Before the kill -9 drill: run after it, the reader's pools were twice found not serving 10 s after it was back (docs/PGBOUNCER-ENGINE.md).
  test('GIVEN clients reading through the read-only listener WHEN a reader stops, then starts again THEN the other reader keeps serving (no read stands still longer than the bound), no read reaches the writer, and the reader\'s pools serve again within server_login_retry and the allowance', async () => {
    const r = started!.rehearsal;
    // WHEN
    const f = await poolerReaderLostDrill(r, host!, consumer, { outageMs: 4000 });
    process.stdout.write(`PgBouncer engine reader-lost drill: ${f.reader} down ${f.outageMs} ms; reads meanwhile ${JSON.stringify(f.readsDuringOutage)}, none standing still longer than ${f.longestGapMs} ms (bound ${f.gapBoundMs} ms); ${f.errors} client errors ${JSON.stringify(f.errorKinds)}, the prober's ${f.proberErrorsDuringOutage} of ${f.proberAttemptsDuringOutage} connections failing while it was down; its pools served again ${f.servedAgainAfterMs} ms after it took logins (bound ${f.servedAgainBoundMs} ms), ${f.errorsAfterServedAgain} errors begun after; ${f.reads} reads in all, ${f.readsFromWriter} from the writer${f.poolLog === undefined ? '' : `; the read-only processes said:\n${f.poolLog}`}\n`);
    // THEN
    const others = r.endpoints.replicas.map((e) => e.name).filter((n) => n !== f.reader);
    expect(others.every((n) => (f.readsDuringOutage[n] ?? 0) > 0)).toBe(true);
    expect(f.longestGapMs).toBeLessThanOrEqual(f.gapBoundMs);
    expect(f.servedAgainAfterMs).toBeDefined();
    expect(f.servedAgainAfterMs!).toBeLessThanOrEqual(f.servedAgainBoundMs);
    expect(f.errorsAfterServedAgain).toBe(0);
    expect(f.readsFromWriter).toBe(0);
  }, 90_000);

  test('GIVEN clients querying through the read/write listener WHEN one of its PgBouncer processes is killed with SIGKILL THEN the host\'s systemd restarts it and it serves again within RestartSec= and the allowance, each client erring at most once and none after it serves', async () => {
    const r = started!.rehearsal;
    // WHEN
    const f = await poolerProcessKillDrill(r, host!, consumer);
    process.stdout.write(`PgBouncer engine kill -9 drill: ${f.process} restarted by systemd ${f.restartedAfterMs} ms after the kill, served a client again ${f.servingAgainAfterMs} ms after it (bound ${f.boundMs} ms); ${f.errors} client errors of ${f.clients} clients ${JSON.stringify(f.errorKinds)}, ${f.errorsAfterServing} begun after it served; ${f.servedMeanwhile} queries served by the other process meanwhile\n`);
    // THEN
    expect(f.restartedAfterMs).toBeDefined();
    expect(f.servingAgainAfterMs).toBeDefined();
    expect(f.servingAgainAfterMs!).toBeLessThanOrEqual(f.boundMs);
    expect(f.errors).toBeLessThanOrEqual(f.clients);
    expect(f.errorsAfterServing).toBe(0);
    expect(f.servedMeanwhile).toBeGreaterThan(0);
  }, 60_000);

  test('GIVEN two hosts behind the load balancer stand-in WHEN one is lost under load THEN the stand-in stops sending to it within its health checks\' window, and a replacement booted from the same user data joins and serves', async () => {
    const r = started!.rehearsal;
    const second = await r.startPoolerHost({ consumers: [{ ...consumer, access: 'READ_WRITE' }], server, sessionRoles, sessionMaxConnectionsPercent });
    started!.pids.push(second.booted.container.pid, second.booted.imds.pid);
    const lb = await r.startPoolerLoadBalancer([host!, second]);
    started!.pids.push(lb.process.pid);
    // WHEN
    const f = await poolerHostLostDrill(r, lb, second, consumer, async () => {
      const third = await r.startPoolerHost({ consumers: [{ ...consumer, access: 'READ_WRITE' }], server, sessionRoles, sessionMaxConnectionsPercent });
      started!.pids.push(third.booted.container.pid, third.booted.imds.pid);
      return third;
    });
    process.stdout.write(`PgBouncer engine host-lost drill: the stand-in took the lost host out ${f.outAfterMs} ms after it was lost (its window ${f.windowMs} ms); ${f.errors} client errors, ${f.errorsAfterOut} begun after it was out; ${f.servedAfterOut} queries in the 3 s after; the replacement served ${f.replacementServedAfterMs} ms after it was registered\n`);
    // THEN
    expect(f.outAfterMs).toBeDefined();
    expect(f.outAfterMs!).toBeLessThanOrEqual(f.windowMs + 5000);
    expect(f.errorsAfterOut).toBe(0);
    expect(f.servedAfterOut).toBeGreaterThan(0);
    expect(f.replacementServedAfterMs).toBeDefined();
  }, 420_000);

  test('GIVEN both listeners under load WHEN the writer fails over THEN writes resume on the promoted instance within seconds, no acknowledged write is lost, no read through the read-only listener reaches the writer, and the promoted reader\'s pools move to the former writer\'s instance endpoint', async () => {
    const r = started!.rehearsal;
    const spec = bootedSpec();
    // WHEN
    const f = await poolerFailoverDrill(r, host!, consumer, spec);
    process.stdout.write(`PgBouncer engine failover drill: promoted ${f.promoted}; writes stood still for ${f.writeDowntimeMs} ms at most; ${f.acknowledgedWrites} acknowledged, ${f.acknowledgedWritesLost} lost, ${f.writeErrors} client errors; read-only listener: ${f.reads} reads, ${f.readsFromWriter} served by the writer, ${f.readErrors} client errors; the promoted reader's pools re-pointed ${f.repointedAfterMs} ms after the promotion\n`);
    // THEN
    expect(f.acknowledgedWritesLost).toBe(0);
    expect(f.writeDowntimeMs).toBeLessThan(20_000);
    // AWS fact aurora-failover-target-restarts: the promoted reader restarts, so no read-only server connection
    // outlives its promotion, and each new one is checked at login (without the guard: every read until the re-point).
    expect(f.readsFromWriter).toBe(0);
    const promoted = rehearsalAwsNames(r.rehearsed).instanceEndpoint(f.promoted);
    const homes = host!.values.ReaderEndpoints!.split(' ');
    const onPromoted = planFleetProcesses(spec).filter((p) => (p.listener === 'readOnly' || p.listener === 'readOnlySession') && homes[Number(p.target.slice('reader'.length)) - 1] === promoted);
    expect(f.reads).toBeGreaterThan(0);
    expect(f.repointedAfterMs).toBeDefined();
    expect(f.repointedAfterMs!).toBeLessThanOrEqual((READ_ONLY_ROUTING.intervalSeconds + AURORA_ENDPOINT_DNS_TTL_SECONDS + 5) * 1000);
    expect(Object.entries(f.readOnlyPools).filter(([name]) => onPromoted.some((p) => fleetProcessName(p) === name)).map(([, h]) => h)).toEqual(onPromoted.map(() => host!.values.WriterInstanceEndpoint));
    const check = await connectToHost(FLEET_PORTS.readWrite, consumer);
    try {
      expect((await check.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r')).rows[0]!.r).toBe(false);
    } finally {
      await check.end();
    }
  }, 150_000);

  test('GIVEN a packages object whose checksums do not hold WHEN a new host of the fleet boots with it THEN it signals FAILURE to the stack (no SUCCESS), which stops the rollout, and powers off within the bound', async () => {
    const r = started!.rehearsal;
    // WHEN
    const f = await poolerBootstrapFailureDrill(r, host!, { consumers: [{ ...consumer, access: 'READ_WRITE' }], server, sessionRoles, sessionMaxConnectionsPercent });
    process.stdout.write(`PgBouncer engine failed-bootstrap drill: ${f.host} (${f.instanceId}) powered off ${f.poweredOffAfterMs} ms after its boot began (bound ${f.boundMs} ms); CloudFormation received ${f.failureSignals} FAILURE, ${f.successSignals} SUCCESS\n`);
    // THEN
    expect([f.poweredOffAfterMs !== undefined, f.console]).toEqual([true, expect.any(String)]);
    expect(f.poweredOffAfterMs!).toBeLessThanOrEqual(f.boundMs);
    expect(f.signals).toEqual([{ logicalResourceId: expect.any(String), status: 'FAILURE', reason: `Received FAILURE signal with UniqueId ${f.instanceId}` }]);
    expect([f.failureSignals, f.successSignals]).toEqual([1, 0]);
  }, 180_000);
});
