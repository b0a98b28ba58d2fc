/**
 * The PgBouncer engine's user data, exactly as both flavours deploy it (renderPoolerBootstrap substituted
 * as Fn::Sub / templatefile do), run by cloud-init on a booted Debian 13 host with no step skipped: the
 * packages object from S3 (the rehearsal's: the kit's PgBouncer package for this architecture, Debian's
 * dependencies, the stand-in for the SSM Agent), `dpkg --install`, Debian's own pgbouncer.service
 * disabled, the fleet's files from Secrets Manager, and the kit's units started by the host's systemd.
 * AWS's APIs come from the emulator by their AWS names; there is no database here, so the health
 * endpoint must say the servers are unreachable. Needs root.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderPoolerBootstrap, substitutePlaceholders } from '../../../lib/model/pgbouncer-bootstrap';
import { POOLER_HEALTH_PORT } from '../../../lib/model/pgbouncer-host-serve';
import { seedAws } from '../../../lib/rehearsal/hosts/aws-emulator';
import { execInHost, waitForBoot, type BootedHost } from '../../../lib/rehearsal/hosts/booted-host';
import { openTestVpc, type TestVpc } from './booted-vpc';

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const suite = isRoot ? describe : describe.skip;
if (!isRoot) console.warn('booted-pooler-bootstrap.test.ts skipped: booting a host needs root (network namespaces, systemd-nspawn)');

jest.setTimeout(900_000);

const BUCKET = 'apk-packages-rehearsal';
const KEY = 'pooler/debian-13-amd64.tar';
const KIT_ROOT = join(__dirname, '..', '..', '..');

suite('the PgBouncer engine bootstrap on a booted host', () => {
  let vpc: TestVpc | undefined;
  let host: BootedHost;

  beforeAll(async () => {
    vpc = await openTestVpc('booted-pooler', 251, BUCKET, [{ file: 'listener', commonName: 'pooler', names: ['*.vpce-svc-0123456789abcdef0.eu-west-1.vpce.amazonaws.com'] }]);
    const tls = vpc.tls;
    // The rehearsal's packages object: its CA as the RDS bundle, the stand-in for the SSM Agent.
    const tar = join(vpc.work, 'packages.tar');
    execFileSync('npx', ['ts-node', '--transpile-only', join(KIT_ROOT, 'bin', 'build-pooler-packages.ts'), '--arch', execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim(), '--rehearsal', tar], {
      cwd: KIT_ROOT,
      env: { ...process.env, RDS_CA_BUNDLE: tls.caFile },
      stdio: ['ignore', 'ignore', 'inherit'],
      timeout: 900_000,
    });
    const login = (username: string): string => JSON.stringify({ username, password: `${username}-password-0123456789` });
    const arns = await seedAws(vpc.emulator, tls.caFile, {
      buckets: [BUCKET],
      objects: [{ bucket: BUCKET, key: KEY, file: tar }],
      secrets: [
        { name: 'pooler-server', value: login('pooler_readonly') },
        { name: 'consumer-reader', value: login('reader') },
        { name: 'pooler-tls', value: JSON.stringify({ certificate: readFileSync(tls.certificates.listener!.certFile, 'utf8'), privateKey: readFileSync(tls.certificates.listener!.keyFile, 'utf8'), ca: readFileSync(tls.caFile, 'utf8') }) },
      ],
    });
    const userData = substitutePlaceholders(renderPoolerBootstrap(), {
      ClusterEndpoint: 'rehearsal.cluster-c0ffee123456.eu-west-1.rds.amazonaws.com',
      ReaderEndpoints: 'replica1.c0ffee123456.eu-west-1.rds.amazonaws.com',
      DatabaseName: 'app',
      ServerPort: '5432',
      ServerUser: 'pooler_readonly',
      Hosts: '2',
      Vcpus: '2',
      MaxConnections: '200',
      MaxConnectionsPercent: '100',
      MaxIdleConnectionsPercent: '10',
      BorrowTimeoutSeconds: '120',
      MaxClientConnections: '1000',
      TcpIdleTimeoutSeconds: '350',
      PackagesBucket: BUCKET,
      PackagesKey: KEY,
      ServerSecretArn: arns['pooler-server']!,
      ConsumerSecretArns: arns['consumer-reader']!,
      TlsSecretArn: arns['pooler-tls']!,
      FleetName: 'rehearsal-fleet',
    });
    host = await vpc.boot(userData, 'i-0fffffffffffffff6');
  });

  afterAll(async () => {
    await vpc?.close();
  });

  it('GIVEN the deployed user data WHEN cloud-init runs it THEN every step runs and the host serves with its systemd units', async () => {
    const boot = await waitForBoot(host);
    const log = (await execInHost(host, ['tail', '-n', '40', '/var/log/cloud-init-output.log'])).stdout;
    expect({ ...boot.cloudInit, log }).toEqual({ status: 'done', errors: [], log });
    expect(boot.failedUnits).toEqual([]);

    // The kit's package, Debian's unit off, the stand-in agent declared as such.
    const pgbouncer = (await execInHost(host, ['dpkg-query', '-W', '-f', '${Version}', 'pgbouncer'])).stdout;
    expect(pgbouncer).toMatch(/\+apk\d+$/);
    expect((await execInHost(host, ['systemctl', 'is-enabled', 'pgbouncer.service'])).stdout.trim()).toBe('disabled');
    expect((await execInHost(host, ['dpkg-query', '-W', '-f', '${Description}', 'apk-rehearsal-ssm-agent-standin'])).stdout).toMatch(/stand-in/);

    // Every process the layout names runs under the host's systemd, and the agent serves.
    const processes = (await execInHost(host, ['cat', '/etc/pgbouncer/processes'])).stdout.trim().split(/\s+/);
    expect(processes).toEqual(['rw-1', 'rw-2', 'ro-1', 'ro-2']);
    for (const name of processes) expect((await execInHost(host, ['systemctl', 'is-active', `apk-pgbouncer@${name}.service`])).stdout.trim()).toBe('active');
    expect((await execInHost(host, ['systemctl', 'is-active', 'apk-host.service', 'apk-refresh-auth.timer'])).stdout.trim().split('\n')).toEqual(['active', 'active']);

    // No database here: the health endpoint answers, and says the servers cannot be reached.
    const health = await execInHost(host, ['python3', '-c', `import urllib.request, urllib.error\ntry:\n  urllib.request.urlopen("http://127.0.0.1:${POOLER_HEALTH_PORT}/read-write", timeout=5)\n  print(200)\nexcept urllib.error.HTTPError as e:\n  print(e.code, e.read().decode())`]);
    expect(health.stdout).toMatch(/^503 .*rehearsal\.cluster-c0ffee123456/s);
  });
});
