/**
 * A Debian 13 host booted for real (lib/rehearsal/hosts/booted-host.ts): systemd as PID 1, cloud-init
 * running the user data it is given from a NoCloud seed, IMDSv2 at 169.254.169.254 from AWS's metadata
 * mock, a fresh root at every boot, and nothing left running after a clean stop or a lost host. Needs root
 * (namespaces, nspawn); the image's root is built once (tools/host-image/build-root.sh, cached).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootHost, containerLeader, execInHost, imdsConfig, stopHost, waitForBoot, type BootedHost, type BootedHostSpec } from '../../../lib/rehearsal/hosts/booted-host';
import { findImdsMock, hostImageRoot } from '../../../lib/rehearsal/hosts/host-tools';
import { isAlive } from '../../../lib/rehearsal/processes';

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const suite = isRoot ? describe : describe.skip;
if (!isRoot) console.warn('booted-host.test.ts skipped: booting a host needs root (network namespaces, systemd-nspawn)');

jest.setTimeout(600_000);

/** User data that asks IMDSv2 what an instance asks it, and writes the answers where the test reads them. */
const PROBE_USER_DATA = `#!/bin/bash
set -euo pipefail
python3 - <<'PY' >/var/lib/apk-probe.json
import json, urllib.request, urllib.error
def get(path, token=None, method="GET"):
    headers = {"X-aws-ec2-metadata-token-ttl-seconds": "60"} if method == "PUT" else {}
    if token: headers["X-aws-ec2-metadata-token"] = token
    req = urllib.request.Request("http://169.254.169.254/latest" + path, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=5) as r: return r.status, r.read().decode()
    except urllib.error.HTTPError as e: return e.code, ""
_, token = get("/api/token", method="PUT")
v1_status, _ = get("/meta-data/instance-id")
role = get("/meta-data/iam/security-credentials/", token)[1].split("\\n")[0]
print(json.dumps({
  "v1_status": v1_status,
  "instance_id": get("/meta-data/instance-id", token)[1],
  "region": get("/meta-data/placement/region", token)[1],
  "domain": get("/meta-data/services/domain", token)[1],
  "role": role,
  "credentials": json.loads(get("/meta-data/iam/security-credentials/" + role, token)[1]),
  "pid1": open("/proc/1/comm").read().strip(),
}))
PY
`;

suite('a booted Debian 13 host', () => {
  const namespace = `apkboot${process.pid % 100000}`;
  let work: string;
  let root: string;
  let imdsProgram: string;
  const hosts: BootedHost[] = [];

  const spec = (name: string, instanceId: string): BootedHostSpec => ({
    name,
    root,
    namespace,
    workDir: join(work, name),
    userData: PROBE_USER_DATA,
    instanceId,
    region: 'eu-west-1',
    availabilityZone: 'eu-west-1a',
    roleName: 'pooler-host-role',
    imdsProgram,
  });

  beforeAll(() => {
    root = hostImageRoot();
    imdsProgram = findImdsMock();
    work = mkdtempSync(join(tmpdir(), 'apk-booted-host-'));
    execFileSync('ip', ['netns', 'add', namespace]);
  });

  afterAll(async () => {
    for (const host of hosts) await stopHost(host, { lost: true }).catch(() => undefined);
    execFileSync('ip', ['netns', 'del', namespace]);
    rmSync(work, { recursive: true, force: true });
  });

  const namespacePids = (): string[] => execFileSync('ip', ['netns', 'pids', namespace], { encoding: 'utf8' }).split('\n').filter((l) => l.trim() !== '');

  it('GIVEN the image and a user data script WHEN the host boots THEN systemd runs it through cloud-init with IMDSv2 answering as EC2 does', async () => {
    const host = await bootHost(spec('pooler-a', 'i-0aaaaaaaaaaaaaaa1'));
    hosts.push(host);
    const boot = await waitForBoot(host);
    expect(boot.cloudInit).toEqual({ status: 'done', errors: [] });
    expect(['running', 'degraded']).toContain(boot.systemState);

    const probe = JSON.parse((await execInHost(host, ['cat', '/var/lib/apk-probe.json'])).stdout) as Record<string, unknown>;
    expect(probe).toMatchObject({ v1_status: 401, instance_id: 'i-0aaaaaaaaaaaaaaa1', region: 'eu-west-1', domain: 'amazonaws.com', role: 'pooler-host-role', pid1: 'systemd' });
    const credentials = probe.credentials as Record<string, string>;
    expect(credentials.Code).toBe('Success');
    expect(Date.parse(credentials.Expiration!)).toBeGreaterThan(Date.now());
    // The host's own name, from the seed's meta-data.
    expect((await execInHost(host, ['hostname'])).stdout.trim()).toBe('pooler-a');
  });

  it('GIVEN a running host WHEN it is stopped THEN its systemd shuts down and nothing of it runs in its namespace', async () => {
    const host = hosts.pop()!;
    await stopHost(host);
    expect(isAlive(host.container.pid)).toBe(false);
    expect(isAlive(host.imds.pid)).toBe(false);
    expect(namespacePids()).toEqual([]);
  });

  it('GIVEN a host that wrote a file WHEN it is lost and another boots from the same image THEN the new one starts from the image, and nothing of the lost one runs', async () => {
    const first = await bootHost(spec('pooler-b', 'i-0bbbbbbbbbbbbbbb2'));
    hosts.push(first);
    await waitForBoot(first);
    expect((await execInHost(first, ['test', '-f', '/var/lib/apk-probe.json'])).status).toBe(0);
    const leader = containerLeader(first.container.pid)!;
    await stopHost(hosts.pop()!, { lost: true });
    expect(isAlive(leader)).toBe(false);
    expect(namespacePids()).toEqual([]);
    expect(existsSync(join(root, 'var', 'lib', 'apk-probe.json'))).toBe(false);

    const second = await bootHost({ ...spec('pooler-c', 'i-0ccccccccccccccc3'), userData: '#!/bin/sh\ntrue\n' });
    hosts.push(second);
    const boot = await waitForBoot(second);
    expect(boot.cloudInit.status).toBe('done');
    expect((await execInHost(second, ['test', '-e', '/var/lib/apk-probe.json'])).status).not.toBe(0);
  });

  it('GIVEN a user data script that fails WHEN the host boots THEN cloud-init reports the error', async () => {
    const host = await bootHost({ ...spec('pooler-d', 'i-0ddddddddddddddd4'), userData: '#!/bin/sh\necho bootstrap failed >&2\nexit 3\n' });
    hosts.push(host);
    const boot = await waitForBoot(host);
    expect(boot.cloudInit.status).toBe('error');
    expect(boot.cloudInit.errors.join('\n')).toMatch(/scripts[-_]user/);
  });
});

describe('imdsConfig', () => {
  it('GIVEN a China Region instance WHEN its metadata is configured THEN the partition and domain are China\'s and the credentials are current', () => {
    const now = new Date('2026-11-26T12:00:00Z');
    const config = imdsConfig({ instanceId: 'i-0123', region: 'cn-north-1', availabilityZone: 'cn-north-1a', domain: 'amazonaws.com.cn', roleName: 'r' }, now) as { imdsv2: boolean; metadata: { values: Record<string, unknown>; paths: Record<string, string> } };
    expect(config.imdsv2).toBe(true);
    expect(config.metadata.values['services-partition']).toBe('aws-cn');
    expect(config.metadata.paths['iam-security-credentials']).toBe('/latest/meta-data/iam/security-credentials/r');
    expect((config.metadata.values['iam-security-credentials'] as { Expiration: string }).Expiration).toBe('2026-11-26T18:00:00Z');
  });
});
