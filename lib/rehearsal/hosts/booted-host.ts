/**
 * A Debian 13 host booted for real on the rehearsal: the image's root file system
 * (tools/host-image/build-root.sh) booted by systemd-nspawn with systemd as its PID 1, inside a network
 * namespace of its own, its user data run by the image's cloud-init from a NoCloud seed, as EC2 hands
 * an instance its user data. What an EC2 instance finds around it:
 *
 * - the instance metadata service at 169.254.169.254 in the host's namespace: AWS's own mock of it
 *   (amazon-ec2-metadata-mock, IMDSv2 only, as the kit's launch templates require), with the instance's
 *   id, Region, zone, partition domain and role credentials;
 * - its user data and instance id in the NoCloud seed (cloud-init reads them at boot as it reads EC2's);
 * - its network interface configured before it boots, as EC2's DHCP configures an instance's;
 * - a new instance each boot: the root is read-only under a volatile overlay (--volatile=overlay), so
 *   what one boot writes is gone at the next, as a replaced instance starts from its image.
 *
 * Stopping a host is SIGTERM to systemd-nspawn, which shuts the container's systemd down cleanly (its
 * units stop in order); a host "lost" is SIGKILL to it. Both leave nothing mounted: nspawn's mounts live in
 * its own mount namespace. Processes are tracked by pid; the caller makes and removes the namespace.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RehearsalOperationError } from '../errors';
import { ip, systemProgram } from '../network/iproute';
import { acceptsConnections } from './host-network';
import { cleanEnv, containerLeader, isAlive, killHost, logTail, spawnDaemon, stopProcess, type TrackedProcess } from '../processes';

export { containerLeader };

/** The instance metadata service's address in every VPC (EC2 User Guide, instancedata-data-retrieval). */
export const IMDS_ADDRESS = '169.254.169.254';

/** Debian's bundle of the trusted CAs (ca-certificates), which OpenSSL's default paths lead to. */
const SYSTEM_CA_BUNDLE = 'etc/ssl/certs/ca-certificates.crt';

export interface BootedHostSpec {
  /** The host's name (its hostname, and the prefix of its processes' names). */
  readonly name: string;
  /** The root file system to boot (read-only; build-root.sh's output). */
  readonly root: string;
  /** An existing network namespace for the host alone (it gets IMDS_ADDRESS on its lo). */
  readonly namespace: string;
  /** A directory of the host's own: its seed, metadata configuration and logs. */
  readonly workDir: string;
  /** The user data, exactly as EC2 would hand it over. */
  readonly userData: string;
  readonly instanceId: string;
  readonly region: string;
  readonly availabilityZone: string;
  /** The partition's DNS suffix (IMDS services/domain): amazonaws.com, amazonaws.com.cn. @default 'amazonaws.com' */
  readonly domain?: string;
  /** The instance profile's role, whose credentials IMDS hands out. */
  readonly roleName: string;
  /**
   * The file mounted as the host's /etc/hosts (the VPC's DNS: the AWS-shaped names it resolves); rewritten
   * in place, the host sees the change (a failover moving the cluster endpoint's name).
   */
  readonly hostsFile?: string;
  /** The ec2-metadata-mock program (`make host-tools`). */
  readonly imdsProgram: string;
  /**
   * A CA the host trusts beside the image's public ones (the AWS emulator's, standing in for Amazon's
   * public CAs): the image's bundle with it appended is mounted over the system bundle.
   */
  readonly extraTrustedCaFile?: string;
}

export interface BootedHost {
  readonly spec: BootedHostSpec;
  /** systemd-nspawn. */
  readonly container: TrackedProcess;
  readonly imds: TrackedProcess;
}

/** The IMDS mock's configuration: the instance's own values over the mock's defaults. */
export function imdsConfig(spec: Pick<BootedHostSpec, 'instanceId' | 'region' | 'availabilityZone' | 'domain' | 'roleName'>, now = new Date()): object {
  const expiration = new Date(now.getTime() + 6 * 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    imdsv2: true,
    metadata: {
      paths: { 'iam-security-credentials': `/latest/meta-data/iam/security-credentials/${spec.roleName}` },
      values: {
        'instance-id': spec.instanceId,
        'placement-region': spec.region,
        'placement-availability-zone': spec.availabilityZone,
        'services-domain': spec.domain ?? 'amazonaws.com',
        'services-partition': (spec.domain ?? 'amazonaws.com').endsWith('.cn') ? 'aws-cn' : 'aws',
        'iam-security-credentials-role': spec.roleName,
        'iam-security-credentials': {
          Code: 'Success',
          LastUpdated: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
          Type: 'AWS-HMAC',
          AccessKeyId: `ASIA${spec.instanceId.replace(/[^a-z0-9]/gi, '').toUpperCase().slice(-16).padStart(16, '0')}`,
          SecretAccessKey: 'rehearsal-instance-role-secret-key',
          Token: 'rehearsal-instance-role-session-token',
          Expiration: expiration,
        },
      },
    },
  };
}

/** cloud-init's NoCloud seed: meta-data (instance id, hostname) and the user data as given. */
function writeSeed(spec: BootedHostSpec): string {
  const seed = join(spec.workDir, 'seed');
  mkdirSync(seed, { recursive: true, mode: 0o700 });
  writeFileSync(join(seed, 'meta-data'), `instance-id: ${spec.instanceId}\nlocal-hostname: ${spec.name}\n`, { mode: 0o600 });
  writeFileSync(join(seed, 'user-data'), spec.userData, { mode: 0o600 });
  // The host's interface is configured before it boots (its /32 and route, host-network.ts), as EC2's DHCP
  // configures an instance's: cloud-init is told not to write a DHCP configuration nobody would answer.
  writeFileSync(join(seed, 'network-config'), 'network:\n  config: disabled\n', { mode: 0o600 });
  return seed;
}

function run(program: string, args: ReadonlyArray<string>, timeoutMs: number): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // SIGKILL on timeout: a command entered into a host that is shutting down can be left stopped, which SIGTERM does not end.
    execFile(program, [...args], { timeout: timeoutMs, killSignal: 'SIGKILL', encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const status = err === null ? 0 : typeof (err as NodeJS.ErrnoException & { code?: unknown }).code === 'number' ? ((err as unknown as { code: number }).code) : 1;
      resolve({ status, stdout, stderr: err !== null && stderr === '' ? err.message : stderr });
    });
  });
}

function program(name: string, pkg: string): string {
  const found = systemProgram(name);
  if (found === undefined) throw new RehearsalOperationError(`${name} is not installed: apt-get install -y ${pkg} (make system-deps does)`);
  return found;
}

/** Runs `argv` inside the host (all its namespaces, its root), as root; its status, stdout and stderr. */
export async function execInHost(host: BootedHost, argv: ReadonlyArray<string>, timeoutMs = 30_000): Promise<{ status: number; stdout: string; stderr: string }> {
  const leader = containerLeader(host.container.pid);
  if (leader === undefined) throw new RehearsalOperationError(`host ${host.spec.name}: its systemd is not running (nspawn pid ${host.container.pid}): ${logTail(host.container.logFile, 10)}`);
  return run(program('nsenter', 'util-linux'), ['--target', String(leader), '--all', '--root', '--wd=/', '/usr/bin/env', '-i', 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'LANG=C.UTF-8', ...argv], timeoutMs);
}

/**
 * Boots a host: IMDS in its namespace, then the container. Resolves once its systemd runs; the user
 * data runs after (waitForBoot). A failure stops whatever it had started.
 */
export async function bootHost(spec: BootedHostSpec): Promise<BootedHost> {
  if (!existsSync(join(spec.root, 'usr', 'lib', 'systemd', 'systemd'))) throw new RehearsalOperationError(`host ${spec.name}: ${spec.root} is not a root file system with systemd: build it with tools/host-image/build-root.sh`);
  const nspawn = program('systemd-nspawn', 'systemd-container');
  mkdirSync(spec.workDir, { recursive: true, mode: 0o700 });
  const seed = writeSeed(spec);
  const configFile = join(spec.workDir, 'imds.json');
  writeFileSync(configFile, JSON.stringify(imdsConfig(spec), null, 2), { mode: 0o600 });
  await ip(['-n', spec.namespace, 'link', 'set', 'lo', 'up']);
  await ip(['-n', spec.namespace, 'addr', 'replace', `${IMDS_ADDRESS}/32`, 'dev', 'lo']);

  const imds = spawnDaemon({
    name: `${spec.name}-imds`,
    kind: 'imds',
    program: spec.imdsProgram,
    args: ['--config-file', configFile, '--hostname', IMDS_ADDRESS, '--port', '80', '--imdsv2'],
    logFile: join(spec.workDir, 'imds.log'),
    cwd: spec.workDir,
    namespace: spec.namespace,
    // The mock saves nothing, but looks for a default config in $HOME: give it the host's directory.
    env: cleanEnv({ HOME: spec.workDir }),
  });
  const binds = [`--bind-ro=${seed}:/var/lib/cloud/seed/nocloud`];
  if (spec.hostsFile !== undefined) binds.push(`--bind-ro=${spec.hostsFile}:/etc/hosts`);
  if (spec.extraTrustedCaFile !== undefined) {
    const bundle = join(spec.workDir, 'ca-certificates.crt');
    writeFileSync(bundle, readFileSync(join(spec.root, SYSTEM_CA_BUNDLE)) + readFileSync(spec.extraTrustedCaFile, 'utf8'), { mode: 0o644 });
    binds.push(`--bind-ro=${bundle}:/${SYSTEM_CA_BUNDLE}`);
  }
  let container: TrackedProcess | undefined;
  try {
    await waitForImds(spec, imds);
    container = spawnDaemon({
      name: `${spec.name}-host`,
      kind: 'host',
      program: nspawn,
      args: [
        '--quiet',
        `--directory=${spec.root}`,
        '--volatile=overlay',
        '--boot',
        // This machine's PID 1 is not systemd: no machined to register with, no unit of its own to make.
        '--register=no',
        '--keep-unit',
        `--machine=${spec.name}`,
        `--hostname=${spec.name}`,
        `--network-namespace-path=/run/netns/${spec.namespace}`,
        '--console=passive',
        ...binds,
      ],
      logFile: join(spec.workDir, 'console.log'),
      cwd: spec.workDir,
    });
    const started = container;
    const deadline = Date.now() + 30_000;
    while (containerLeader(started.pid) === undefined) {
      if (!isAlive(started.pid)) throw new RehearsalOperationError(`host ${spec.name}: systemd-nspawn exited at boot: ${logTail(started.logFile, 20)}`);
      if (Date.now() > deadline) throw new RehearsalOperationError(`host ${spec.name}: no systemd in the container after 30 s: ${logTail(started.logFile, 20)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return { spec, container: started, imds };
  } catch (err) {
    if (container !== undefined) await killHost(container).catch(() => undefined);
    await stopProcess(imds).catch(() => undefined);
    throw err;
  }
}

async function waitForImds(spec: BootedHostSpec, imds: TrackedProcess): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (await acceptsConnections(spec.namespace, IMDS_ADDRESS, 80)) return;
    if (!isAlive(imds.pid)) throw new RehearsalOperationError(`host ${spec.name}: the metadata service exited: ${logTail(imds.logFile, 10)}`);
    if (Date.now() > deadline) throw new RehearsalOperationError(`host ${spec.name}: the metadata service does not answer on ${IMDS_ADDRESS}:80: ${logTail(imds.logFile, 10)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface BootResult {
  /** `systemctl is-system-running` once boot settled: running, or degraded with failed units. */
  readonly systemState: string;
  readonly failedUnits: ReadonlyArray<string>;
  /** cloud-init's result: `status: done` or `status: error` with its errors. */
  readonly cloudInit: { readonly status: string; readonly errors: ReadonlyArray<string> };
}

/** Waits until the host's boot has settled (systemd) and cloud-init has finished with its user data. */
export async function waitForBoot(host: BootedHost, timeoutMs = 180_000): Promise<BootResult> {
  const deadline = Date.now() + timeoutMs;
  const left = (): number => Math.max(1000, deadline - Date.now());
  // Until the container's systemd accepts a bus connection, is-system-running fails: retry.
  let state = '';
  while (Date.now() < deadline) {
    if (!isAlive(host.container.pid)) throw new RehearsalOperationError(`host ${host.spec.name} stopped while booting: ${logTail(host.container.logFile, 20)}`);
    const r = await execInHost(host, ['systemctl', 'is-system-running', '--wait'], left());
    state = r.stdout.trim();
    if (state === 'running' || state === 'degraded' || state === 'stopping' || state === 'offline') break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const failed = (await execInHost(host, ['systemctl', 'list-units', '--state=failed', '--plain', '--no-legend', '--no-pager'], left())).stdout
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter((u) => u !== '');
  const ci = await execInHost(host, ['cloud-init', 'status', '--wait', '--format=json'], left());
  let cloudInit: BootResult['cloudInit'] = { status: `unreadable: ${ci.stderr.trim() || ci.stdout.trim()}`, errors: [] };
  try {
    const parsed = JSON.parse(ci.stdout) as { status?: string; extended_status?: string; errors?: string[] };
    cloudInit = { status: parsed.status ?? 'unknown', errors: parsed.errors ?? [] };
  } catch {
    // Reported as unreadable above.
  }
  return { systemState: state, failedUnits: failed, cloudInit };
}

/**
 * Stops a host as EC2 stops an instance: its systemd shuts down (SIGTERM to nspawn), then its metadata
 * service. `lost` kills it at once instead, as a host that fails does. Resolves once all of it is gone.
 */
export async function stopHost(host: BootedHost, options: { readonly lost?: boolean } = {}): Promise<void> {
  if (options.lost === true) await killHost(host.container);
  else await stopProcess(host.container);
  await stopProcess(host.imds);
}
