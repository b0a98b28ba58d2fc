/**
 * A booted host in a VPC calls AWS as the PgBouncer engine's hosts do: the kit's host agent, signed with
 * the instance role's IMDSv2 credentials, reads an S3 object and a secret from the AWS emulator (moto)
 * by their AWS names over HTTPS, through the VPC's namespace. Needs root.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HOST_AGENT_FILE, HOST_AGENT_PATH, HOST_FETCH_FILE, HOST_LIB_DIR, hostAgentSource, hostFetchSource } from '../../../lib/model/pgbouncer-host-agent';
import { seedAws } from '../../../lib/rehearsal/hosts/aws-emulator';
import { execInHost, waitForBoot, type BootedHost } from '../../../lib/rehearsal/hosts/booted-host';
import { openTestVpc, type TestVpc } from './booted-vpc';

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const suite = isRoot ? describe : describe.skip;
if (!isRoot) console.warn('booted-host-aws.test.ts skipped: booting a host needs root (network namespaces, systemd-nspawn)');

jest.setTimeout(600_000);

const BUCKET = 'apk-packages-rehearsal';

suite('a booted host calling AWS', () => {
  let vpc: TestVpc | undefined;
  let host: BootedHost;

  beforeAll(async () => {
    vpc = await openTestVpc('booted-aws', 250, BUCKET);
    const object = join(vpc.work, 'object.txt');
    writeFileSync(object, 'packages of the rehearsal\n');
    const arns = await seedAws(vpc.emulator, vpc.tls.caFile, {
      buckets: [BUCKET],
      objects: [{ bucket: BUCKET, key: 'debian-13/packages.tar', file: object }],
      secrets: [{ name: 'listener-tls', value: JSON.stringify({ certificate: 'CERT\n', privateKey: 'KEY\n', ca: 'CA\n' }) }],
    });
    // The agent and the AWS calls it imports, installed as the bootstrap installs them; the user its private files belong to.
    const userData = [
      '#!/bin/bash',
      'set -euo pipefail',
      `install -d ${HOST_LIB_DIR} /usr/local/sbin`,
      ...[[HOST_AGENT_FILE, hostAgentSource()], [HOST_FETCH_FILE, hostFetchSource()]].flatMap(([file, source]) => [`cat >${HOST_LIB_DIR}/${file} <<'APK_EOF'`, source!.trimEnd(), 'APK_EOF', `chmod 0755 ${HOST_LIB_DIR}/${file}`]),
      `ln -sf ${HOST_LIB_DIR}/${HOST_AGENT_FILE} ${HOST_AGENT_PATH}`,
      'useradd --system --no-create-home --shell /usr/sbin/nologin pgbouncer',
      `${HOST_AGENT_PATH} s3-get ${BUCKET} debian-13/packages.tar /var/tmp/packages.tar`,
      `mkdir -p /var/tmp/tls && ${HOST_AGENT_PATH} tls ${arns['listener-tls']!} /var/tmp/tls`,
      '',
    ].join('\n');
    host = await vpc.boot(userData, 'i-0eeeeeeeeeeeeeee5');
  });

  afterAll(async () => {
    await vpc?.close();
  });

  it('GIVEN an object and a secret in the emulator WHEN the host agent runs in the user data THEN it reads both by their AWS names over TLS', async () => {
    const boot = await waitForBoot(host);
    const log = (await execInHost(host, ['tail', '-n', '20', '/var/log/cloud-init-output.log'])).stdout;
    expect({ ...boot.cloudInit, log }).toEqual({ status: 'done', errors: [], log });
    expect((await execInHost(host, ['cat', '/var/tmp/packages.tar'])).stdout).toBe('packages of the rehearsal\n');
    expect((await execInHost(host, ['cat', '/var/tmp/tls/ca.crt'])).stdout).toBe('CA\n');
  });
});
