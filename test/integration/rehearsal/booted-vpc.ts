/**
 * A VPC of a suite's own for booted hosts, outside any rehearsal: a namespace holding the AWS emulator
 * (moto over HTTPS at the AWS names, with a certificate of a CA made here), and one host's namespace
 * joined to it. Nothing links it to the root namespace; `close()` stops and removes all of it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { awsApiNames, startAwsEmulator, stopAwsEmulator, type AwsEmulator } from '../../../lib/rehearsal/hosts/aws-emulator';
import { bootHost, stopHost, type BootedHost, type BootedHostSpec } from '../../../lib/rehearsal/hosts/booted-host';
import { connectHost, disconnectHost, type HostLink } from '../../../lib/rehearsal/hosts/host-network';
import { findImdsMock, hostImageRoot } from '../../../lib/rehearsal/hosts/host-tools';
import { issueCertificates, type CertificateRequest, type CertificateSet } from '../../../lib/rehearsal/tls';

export const TEST_VPC_REGION = 'eu-west-1';

export interface TestVpc {
  readonly work: string;
  readonly tls: CertificateSet;
  readonly emulator: AwsEmulator;
  /** The AWS names the host resolves to the emulator. */
  readonly awsNames: ReadonlyArray<string>;
  /** Boots the VPC's host with `userData` (the emulator's CA trusted, its names resolved). */
  boot(userData: string, instanceId: string): Promise<BootedHost>;
  close(): Promise<void>;
}

/** The VPC on `198.19.<octet>.0/25`: the emulator at .10, the host at .61; `bucket` among the emulator's names. */
export async function openTestVpc(suite: string, octet: number, bucket: string, certificates: ReadonlyArray<CertificateRequest> = []): Promise<TestVpc> {
  const prefix = `198.19.${octet}`;
  const emulatorAddress = `${prefix}.10`;
  const vpc = `apkvpc${octet}x${process.pid % 100000}`;
  const link: HostLink = { namespace: `apkhost${octet}x${process.pid % 100000}`, vpcNamespace: vpc, vpcLink: 'host-1', address: `${prefix}.61`, vpcCidr: `${prefix}.0/25` };
  const work = mkdtempSync(join(tmpdir(), `apk-${suite}-`));
  const hosts: BootedHost[] = [];
  let emulator: AwsEmulator | undefined;
  const close = async (): Promise<void> => {
    for (const host of hosts) await stopHost(host, { lost: true }).catch(() => undefined);
    if (emulator !== undefined) await stopAwsEmulator(emulator).catch(() => undefined);
    await disconnectHost(link).catch(() => undefined);
    execFileSync('ip', ['netns', 'del', vpc]);
    rmSync(work, { recursive: true, force: true });
  };
  execFileSync('ip', ['netns', 'add', vpc]);
  try {
    execFileSync('ip', ['-n', vpc, 'link', 'set', 'lo', 'up']);
    execFileSync('ip', ['-n', vpc, 'addr', 'add', `${emulatorAddress}/32`, 'dev', 'lo']);
    await connectHost(link);
    const awsNames = awsApiNames(TEST_VPC_REGION, 'amazonaws.com', [bucket]);
    const tls = await issueCertificates(join(work, 'tls'), [{ file: 'aws-apis', commonName: awsNames[0]!, names: [...awsNames, emulatorAddress] }, ...certificates], undefined);
    emulator = await startAwsEmulator({ namespace: vpc, address: emulatorAddress, region: TEST_VPC_REGION, ...tls.certificates['aws-apis']!, workDir: join(work, 'aws') });
    const hostsFile = join(work, 'hosts');
    writeFileSync(hostsFile, `127.0.0.1\tlocalhost\n${emulatorAddress}\t${awsNames.join(' ')}\n`);
    const started = emulator;
    const boot = async (userData: string, instanceId: string): Promise<BootedHost> => {
      const spec: BootedHostSpec = {
        name: 'pooler-1',
        root: hostImageRoot(),
        namespace: link.namespace,
        workDir: join(work, `host-${hosts.length + 1}`),
        userData,
        instanceId,
        region: TEST_VPC_REGION,
        availabilityZone: `${TEST_VPC_REGION}a`,
        roleName: 'pooler-host-role',
        imdsProgram: findImdsMock(),
        hostsFile,
        extraTrustedCaFile: tls.caFile,
      };
      const host = await bootHost(spec);
      hosts.push(host);
      return host;
    };
    return { work, tls, emulator: started, awsNames, boot, close };
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}
