/**
 * The PgBouncer engine's user data, exactly as both flavours deploy it (renderPoolerBootstrap substituted
 * as Fn::Sub / templatefile do), run by cloud-init on a booted Debian 13 host with no step skipped: the
 * packages object from S3 (the rehearsal's: the kit's PgBouncer package for this architecture, Debian's
 * dependencies, the stand-in for the SSM Agent), `dpkg --install`, Debian's own pgbouncer.service
 * disabled, the fleet's files from Secrets Manager, the kit's units started by the host's systemd, and the
 * rollout's signal to CloudFormation: SUCCESS once both listeners serve through the health endpoint,
 * FAILURE (then power off) when the bootstrap fails. AWS's APIs come from the emulator by their AWS names
 * (its CloudFormation holds a stack whose resource the hosts signal). There is no database here: the
 * servers' names lead to a listener that accepts TCP connections, which is what the health endpoint checks
 * of a server no query has used. Needs root.
 */
import { spawn, execFileSync } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderPoolerBootstrap, substitutePlaceholders } from '../../../lib/model/pgbouncer-bootstrap';
import { POOLER_HEALTH_PATHS, POOLER_HEALTH_PORT } from '../../../lib/model/pgbouncer-host-serve';
import { createStack, readSignals, seedAws } from '../../../lib/rehearsal/hosts/aws-emulator';
import { execInHost, stopHost, waitForBoot, type BootedHost } from '../../../lib/rehearsal/hosts/booted-host';
import { isAlive, logTail } from '../../../lib/rehearsal/processes';
import { openTestVpc, TEST_VPC_REGION, type TestVpc } from './booted-vpc';

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const suite = isRoot ? describe : describe.skip;
if (!isRoot) console.warn('booted-pooler-bootstrap.test.ts skipped: booting a host needs root (network namespaces, systemd-nspawn)');

jest.setTimeout(900_000);

const BUCKET = 'apk-packages-rehearsal';
const KEY = 'pooler/debian-13-amd64.tar';
const BROKEN_KEY = 'pooler/debian-13-amd64-broken.tar';
const KIT_ROOT = join(__dirname, '..', '..', '..');
/** The stack the hosts signal, and the logical id of its Auto Scaling group. */
const STACK = 'apk-rehearsal-pooler';
const GROUP = 'PoolerHostsASG1A2B3C4D';
const CLUSTER_ENDPOINT = 'rehearsal.cluster-c0ffee123456.eu-west-1.rds.amazonaws.com';
const READER_ENDPOINT = 'replica1.c0ffee123456.eu-west-1.rds.amazonaws.com';
/**
 * Where the servers' names lead in the test VPC: a listener that accepts and closes connections, on the writer's
 * address (the cluster endpoint and the writer instance's name) and a reader's, as on AWS two instances: the hosts'
 * read-only routing re-points a reader's pools while its address is the cluster endpoint's.
 */
const SERVER_ADDRESS = '198.19.251.20';
const READER_ADDRESS = '198.19.251.21';
const WRITER_INSTANCE_ENDPOINT = 'writer.c0ffee123456.eu-west-1.rds.amazonaws.com';

suite('the PgBouncer engine bootstrap on a booted host', () => {
  let vpc: TestVpc | undefined;
  let server: number | undefined;
  let values: Record<string, string>;
  let host: BootedHost;

  beforeAll(async () => {
    vpc = await openTestVpc('booted-pooler', 251, BUCKET, [{ file: 'listener', commonName: 'pooler', names: ['*.vpce-svc-0123456789abcdef0.eu-west-1.vpce.amazonaws.com'] }]);
    const tls = vpc.tls;
    // The servers: their names resolve, in the VPC's DNS, to an address where connections are accepted.
    const namespace = vpc.emulator.spec.namespace;
    for (const address of [SERVER_ADDRESS, READER_ADDRESS]) execFileSync('ip', ['-n', namespace, 'addr', 'add', `${address}/32`, 'dev', 'lo']);
    const listener = spawn('ip', ['netns', 'exec', namespace, 'python3', '-c', `import socket\ns = socket.create_server(("", 5432))\nwhile True:\n    s.accept()[0].close()`], { stdio: 'ignore', detached: true });
    listener.unref();
    server = listener.pid;
    appendFileSync(join(vpc.work, 'hosts'), `${SERVER_ADDRESS}\t${CLUSTER_ENDPOINT} ${WRITER_INSTANCE_ENDPOINT}\n${READER_ADDRESS}\t${READER_ENDPOINT}\n`);
    // The rehearsal's packages object: its CA as the RDS bundle, the stand-in for the SSM Agent.
    const tar = join(vpc.work, 'packages.tar');
    execFileSync('npx', ['ts-node', '--transpile-only', join(KIT_ROOT, 'bin', 'build-pooler-packages.ts'), '--arch', execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim(), '--rehearsal', tar], {
      cwd: KIT_ROOT,
      env: { ...process.env, RDS_CA_BUNDLE: tls.caFile },
      stdio: ['ignore', 'ignore', 'inherit'],
      timeout: 900_000,
    });
    // A packages object whose SHA256SUMS does not hold: the install step refuses it.
    const broken = join(vpc.work, 'broken');
    execFileSync('mkdir', ['-p', broken]);
    writeFileSync(join(broken, 'apk-host'), 'not the agent\n');
    writeFileSync(join(broken, 'SHA256SUMS'), `${'0'.repeat(64)}  apk-host\n`);
    execFileSync('tar', ['-cf', join(vpc.work, 'broken.tar'), '-C', broken, 'SHA256SUMS', 'apk-host']);
    const login = (username: string): string => JSON.stringify({ username, password: `${username}-password-0123456789` });
    const arns = await seedAws(vpc.emulator, tls.caFile, {
      buckets: [BUCKET],
      objects: [{ bucket: BUCKET, key: KEY, file: tar }, { bucket: BUCKET, key: BROKEN_KEY, file: join(vpc.work, 'broken.tar') }],
      secrets: [
        { name: 'pooler-server', value: login('pooler_readonly') },
        { name: 'consumer-reader', value: login('reader') },
        { name: 'pooler-tls', value: JSON.stringify({ certificate: readFileSync(tls.certificates.listener!.certFile, 'utf8'), privateKey: readFileSync(tls.certificates.listener!.keyFile, 'utf8'), ca: readFileSync(tls.caFile, 'utf8') }) },
      ],
    });
    // moto's CloudFormation holds the stack only as something to signal (it is no judge of templates): the
    // group's logical id, as a resource moto makes without dependencies.
    await createStack(vpc.emulator, tls.caFile, STACK, { Resources: { [GROUP]: { Type: 'AWS::CloudFormation::WaitConditionHandle' } } });
    values = {
      ClusterEndpoint: CLUSTER_ENDPOINT,
      ReaderEndpoints: READER_ENDPOINT,
      WriterInstanceEndpoint: WRITER_INSTANCE_ENDPOINT,
      DatabaseName: 'app',
      ServerPort: '5432',
      ServerUser: 'pooler_readonly',
      Hosts: '2',
      Vcpus: '2',
      MaxConnections: '200',
      MaxConnectionsPercent: '100',
      // No idle floor: nothing here speaks PostgreSQL, so the pools open no server connection of their own.
      MaxIdleConnectionsPercent: '0',
      BorrowTimeoutSeconds: '120',
      MaxClientConnections: '1000',
      TcpIdleTimeoutSeconds: '350',
      PackagesBucket: BUCKET,
      PackagesKey: KEY,
      ServerSecretArn: arns['pooler-server']!,
      ConsumerSecretArns: arns['consumer-reader']!,
      TlsSecretArn: arns['pooler-tls']!,
      FleetName: 'rehearsal-fleet',
      SignalStack: STACK,
      SignalResource: GROUP,
      SignalRegion: TEST_VPC_REGION,
      // No endpoint in session pooling.
      SessionListeners: '',
      SessionMaxConnectionsPercent: '25',
    };
    host = await vpc.boot(substitutePlaceholders(renderPoolerBootstrap(), values), 'i-0fffffffffffffff6');
  });

  afterAll(async () => {
    if (server !== undefined && isAlive(server)) process.kill(server, 'SIGKILL');
    await vpc?.close();
  });

  it('GIVEN the deployed user data WHEN cloud-init runs it THEN every step runs, the host serves with its systemd units and signals SUCCESS once both listeners do', async () => {
    // The boot, the install and up to the serve wait (FLEET_HOST_SERVE_WAIT_SECONDS) before cloud-init is done.
    const boot = await waitForBoot(host, 420_000);
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

    // Both health paths answer 200 (the servers accept connections), and CloudFormation got one SUCCESS from this instance.
    for (const path of [POOLER_HEALTH_PATHS.readWrite, POOLER_HEALTH_PATHS.readOnly]) {
      const health = await execInHost(host, ['python3', '-c', `import urllib.request\nprint(urllib.request.urlopen("http://127.0.0.1:${POOLER_HEALTH_PORT}${path}", timeout=5).status)`]);
      expect([path, health.stdout.trim()]).toEqual([path, '200']);
    }
    expect(await readSignals(vpc!.emulator, vpc!.tls.caFile, STACK)).toEqual([{ logicalResourceId: GROUP, status: 'SUCCESS', reason: 'Received SUCCESS signal with UniqueId i-0fffffffffffffff6' }]);
  });

  it('GIVEN a packages object whose checksums do not hold WHEN a new host boots with it THEN it signals FAILURE and powers off', async () => {
    // GIVEN the first host gone (one host namespace in this VPC)
    await stopHost(host);
    // WHEN
    const started = Date.now();
    const broken = await vpc!.boot(substitutePlaceholders(renderPoolerBootstrap(), { ...values, PackagesKey: BROKEN_KEY }), 'i-0bad0bad0bad0bad0');
    // THEN the container's systemd powers off, which ends systemd-nspawn
    while (isAlive(broken.container.pid) && Date.now() - started < 300_000) await new Promise((r) => setTimeout(r, 1000));
    expect([isAlive(broken.container.pid), logTail(broken.container.logFile, 5)]).toEqual([false, expect.any(String)]);
    console.log(`a host with a broken packages object powered off ${((Date.now() - started) / 1000).toFixed(1)} s after its boot began`);
    expect(await readSignals(vpc!.emulator, vpc!.tls.caFile, STACK)).toEqual([
      { logicalResourceId: GROUP, status: 'SUCCESS', reason: 'Received SUCCESS signal with UniqueId i-0fffffffffffffff6' },
      { logicalResourceId: GROUP, status: 'FAILURE', reason: 'Received FAILURE signal with UniqueId i-0bad0bad0bad0bad0' },
    ]);
  });
});
