/**
 * A booted host in a VPC calls AWS as the PgBouncer engine's hosts do: the kit's host agent, signed with
 * the instance role's IMDSv2 credentials, reads an S3 object and a secret from the AWS emulator (moto)
 * by their AWS names over HTTPS, through the VPC's namespace. Needs root.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HOST_AGENT_PATH, HOST_AGENT_SOURCE } from '../../lib/model/pgbouncer-host-agent';
import { awsApiNames, seedAws, startAwsEmulator, stopAwsEmulator, type AwsEmulator } from '../../lib/rehearsal/hosts/aws-emulator';
import { bootHost, execInHost, stopHost, waitForBoot, type BootedHost } from '../../lib/rehearsal/hosts/booted-host';
import { connectHost, disconnectHost, type HostLink } from '../../lib/rehearsal/hosts/host-network';
import { findImdsMock, hostImageRoot } from '../../lib/rehearsal/hosts/host-tools';
import { issueCertificates } from '../../lib/rehearsal/tls';

/** The VPC's DNS for the host: a hosts file of its own. */
function hostsFile(dir: string, content: string): string {
  const file = join(dir, 'hosts');
  writeFileSync(file, content);
  return file;
}

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const suite = isRoot ? describe : describe.skip;
if (!isRoot) console.warn('booted-host-aws.test.ts skipped: booting a host needs root (network namespaces, systemd-nspawn)');

jest.setTimeout(600_000);

const REGION = 'eu-west-1';
const BUCKET = 'apk-packages-rehearsal';
// A VPC of the test's own namespaces, not linked to the root namespace.
const EMULATOR_ADDRESS = '198.19.250.10';
const HOST_ADDRESS = '198.19.250.61';

suite('a booted host calling AWS', () => {
  const vpc = `apkvpc${process.pid % 100000}`;
  const link: HostLink = { namespace: `apkhost${process.pid % 100000}`, vpcNamespace: vpc, vpcLink: 'host-1', address: HOST_ADDRESS, vpcCidr: '198.19.250.0/25' };
  let work: string;
  let emulator: AwsEmulator | undefined;
  let host: BootedHost | undefined;
  let tlsArn: string;
  let caFile: string;

  beforeAll(async () => {
    const root = hostImageRoot();
    work = mkdtempSync(join(tmpdir(), 'apk-booted-aws-'));
    execFileSync('ip', ['netns', 'add', vpc]);
    execFileSync('ip', ['-n', vpc, 'link', 'set', 'lo', 'up']);
    execFileSync('ip', ['-n', vpc, 'addr', 'add', `${EMULATOR_ADDRESS}/32`, 'dev', 'lo']);
    await connectHost(link);
    const names = awsApiNames(REGION, 'amazonaws.com', [BUCKET]);
    const tls = await issueCertificates(join(work, 'tls'), [{ file: 'aws-apis', commonName: names[0]!, names: [...names, EMULATOR_ADDRESS] }], undefined);
    caFile = tls.caFile;
    emulator = await startAwsEmulator({ namespace: vpc, address: EMULATOR_ADDRESS, region: REGION, ...tls.certificates['aws-apis']!, workDir: join(work, 'aws') });
    const object = join(work, 'object.txt');
    writeFileSync(object, 'packages of the rehearsal\n');
    const arns = await seedAws(emulator, caFile, {
      buckets: [BUCKET],
      objects: [{ bucket: BUCKET, key: 'debian-13/packages.tar', file: object }],
      secrets: [{ name: 'listener-tls', value: JSON.stringify({ certificate: 'CERT\n', privateKey: 'KEY\n', ca: 'CA\n' }) }],
    });
    tlsArn = arns['listener-tls']!;
    const userData = [
      '#!/bin/bash',
      'set -euo pipefail',
      `install -d /usr/local/sbin && cat >${HOST_AGENT_PATH} <<'APK_EOF'`,
      HOST_AGENT_SOURCE,
      'APK_EOF',
      `chmod 0755 ${HOST_AGENT_PATH}`,
      `${HOST_AGENT_PATH} s3-get ${BUCKET} debian-13/packages.tar /var/tmp/packages.tar`,
      `mkdir -p /var/tmp/tls && APK_FILE_OWNER=0:0 ${HOST_AGENT_PATH} tls ${tlsArn} /var/tmp/tls`,
      '',
    ].join('\n');
    host = await bootHost({
      name: 'pooler-1',
      root,
      namespace: link.namespace,
      workDir: join(work, 'pooler-1'),
      userData,
      instanceId: 'i-0eeeeeeeeeeeeeee5',
      region: REGION,
      availabilityZone: `${REGION}a`,
      roleName: 'pooler-host-role',
      imdsProgram: findImdsMock(),
      hostsFile: hostsFile(work, `127.0.0.1\tlocalhost\n${EMULATOR_ADDRESS}\t${names.join(' ')}\n`),
      extraTrustedCaFile: caFile,
    });
  });

  afterAll(async () => {
    if (host !== undefined) await stopHost(host, { lost: true }).catch(() => undefined);
    if (emulator !== undefined) await stopAwsEmulator(emulator).catch(() => undefined);
    await disconnectHost(link).catch(() => undefined);
    execFileSync('ip', ['netns', 'del', vpc]);
    rmSync(work, { recursive: true, force: true });
  });

  it('GIVEN an object and a secret in the emulator WHEN the host agent runs in the user data THEN it reads both by their AWS names over TLS', async () => {
    const boot = await waitForBoot(host!);
    const log = (await execInHost(host!, ['tail', '-n', '20', '/var/log/cloud-init-output.log'])).stdout;
    expect({ ...boot.cloudInit, log }).toEqual({ status: 'done', errors: [], log });
    expect((await execInHost(host!, ['cat', '/var/tmp/packages.tar'])).stdout).toBe('packages of the rehearsal\n');
    expect((await execInHost(host!, ['cat', '/var/tmp/tls/ca.crt'])).stdout).toBe('CA\n');
  });
});
