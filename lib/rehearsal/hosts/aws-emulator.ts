/**
 * The AWS APIs the booted hosts call (S3 through the gateway endpoint, Secrets Manager and CloudWatch
 * through interface endpoints), served by moto's server (`make host-tools`), an emulator others
 * maintain, over HTTPS at the names the hosts use: `<service>.<region>.<domain>` and, for S3's
 * virtual-hosted requests, `<bucket>.s3.<region>.<domain>`. In a VPC with private DNS on its
 * endpoints those names resolve to the endpoints' addresses; here they resolve (hosts files) to the one
 * address the emulator listens on in the VPC's namespace. Its certificate is the rehearsal CA's, which
 * the hosts trust in place of Amazon's public CAs: that trust is a stand-in `up` lists.
 *
 * Used for API calls only: moto's CloudFormation is no judge of templates.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { MissingBinaryError, RehearsalOperationError } from '../errors';
import { acceptsConnections } from './host-network';
import { cleanEnv, isAlive, logTail, spawnDaemon, stopProcess, type TrackedProcess } from '../processes';

const KIT_ROOT = join(__dirname, '..', '..', '..');
export const AWS_EMULATOR_DIR = join(KIT_ROOT, '.cache', 'aws-emulator');
const CLIENT_SCRIPT = join(KIT_ROOT, 'tools', 'host-image', 'aws-client.py');
/** moto's server with CloudFormation's SignalResource, which moto lacks (tools/host-image/aws-emulator.py). */
const SERVER_SCRIPT = join(KIT_ROOT, 'tools', 'host-image', 'aws-emulator.py');

/** The rehearsal's packages bucket: the object its pooler hosts install is in it. */
export const REHEARSAL_PACKAGES_BUCKET = 'apk-rehearsal-packages';
/** The partition the rehearsal's AWS names are in (AwsNames models the aws partition only). */
export const REHEARSAL_DNS_SUFFIX = 'amazonaws.com';

/** The services the hosts call, by the label their endpoint name starts with. */
export const EMULATED_SERVICES = ['s3', 'secretsmanager', 'monitoring', 'cloudformation'] as const;

/** The names the hosts resolve to the emulator: each service's Regional name, and each bucket's virtual host. */
export function awsApiNames(region: string, domain: string, buckets: ReadonlyArray<string>): string[] {
  return [...EMULATED_SERVICES.map((s) => `${s}.${region}.${domain}`), ...buckets.map((b) => `${b}.s3.${region}.${domain}`)];
}

export interface AwsEmulatorSpec {
  /** The VPC namespace it listens in. */
  readonly namespace: string;
  readonly address: string;
  readonly region: string;
  readonly certFile: string;
  readonly keyFile: string;
  readonly workDir: string;
}

export interface AwsEmulator {
  readonly spec: AwsEmulatorSpec;
  readonly process: TrackedProcess;
  /** The URL a client in the VPC's namespace reaches it by (verified against the rehearsal CA). */
  readonly endpoint: string;
}

function emulatorProgram(name: 'python3'): string {
  const program = join(AWS_EMULATOR_DIR, 'bin', name);
  if (!existsSync(program)) throw new MissingBinaryError(`moto's server (${program})`, 'install it with `make host-tools`');
  return program;
}

function run(program: string, args: ReadonlyArray<string>, input: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(program, [...args], { timeout: timeoutMs, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err === null) resolve(stdout);
      else reject(new RehearsalOperationError(`${args.slice(0, 6).join(' ')}: ${(stderr || err.message).trim().split('\n').slice(-5).join(' | ')}`));
    });
    child.stdin?.end(input);
  });
}

/** Starts the emulator on `<address>:443` in the namespace; resolves once it answers over TLS. */
export async function startAwsEmulator(spec: AwsEmulatorSpec): Promise<AwsEmulator> {
  mkdirSync(spec.workDir, { recursive: true, mode: 0o700 });
  const server = spawnDaemon({
    name: 'aws-emulator',
    kind: 'aws-emulator',
    program: emulatorProgram('python3'),
    args: [SERVER_SCRIPT, '--host', spec.address, '--port', '443', '--ssl-cert', spec.certFile, '--ssl-key', spec.keyFile],
    logFile: join(spec.workDir, 'aws-emulator.log'),
    cwd: spec.workDir,
    namespace: spec.namespace,
    env: cleanEnv({ HOME: spec.workDir, MOTO_ALLOW_NONEXISTENT_REGION: 'true' }),
  });
  const emulator = { spec, process: server, endpoint: `https://${spec.address}` };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (await acceptsConnections(spec.namespace, spec.address, 443)) return emulator;
    if (!isAlive(server.pid) || Date.now() > deadline) {
      await stopProcess(server).catch(() => undefined);
      throw new RehearsalOperationError(`the AWS emulator did not start on ${spec.address}:443 in ${spec.namespace}: ${logTail(server.logFile, 15)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

export interface AwsSeed {
  readonly buckets?: ReadonlyArray<string>;
  readonly objects?: ReadonlyArray<{ readonly bucket: string; readonly key: string; readonly file: string }>;
  readonly secrets?: ReadonlyArray<{ readonly name: string; readonly value: string }>;
}

/**
 * Makes in the emulator what the deployment makes (buckets, objects, secrets), with AWS's SDK from the
 * VPC's namespace (its certificate names its address too); returns each secret's ARN.
 */
export async function seedAws(emulator: AwsEmulator, caFile: string, seed: AwsSeed): Promise<Record<string, string>> {
  const spec = { endpoint: emulator.endpoint, ca: caFile, region: emulator.spec.region, buckets: seed.buckets ?? [], objects: seed.objects ?? [], secrets: seed.secrets ?? [] };
  const out = await run('ip', ['netns', 'exec', emulator.spec.namespace, emulatorProgram('python3'), CLIENT_SCRIPT, 'seed'], JSON.stringify(spec), 120_000);
  return (JSON.parse(out) as { secrets: Record<string, string> }).secrets;
}

/** A datapoint the hosts published: each second's Sum of one metric and dimension set. */
export interface EmulatedDatapoint {
  readonly metric: string;
  readonly dimensions: Readonly<Record<string, string>>;
  /** Seconds since the epoch. */
  readonly timestamp: number;
  readonly value: number;
  readonly unit: string;
}

/** Every datapoint of `namespace` in the emulator's CloudWatch (the last hour), read with AWS's SDK. */
export async function readMetrics(emulator: AwsEmulator, caFile: string, namespace: string): Promise<EmulatedDatapoint[]> {
  const spec = { endpoint: emulator.endpoint, ca: caFile, region: emulator.spec.region, namespace };
  const out = await run('ip', ['netns', 'exec', emulator.spec.namespace, emulatorProgram('python3'), CLIENT_SCRIPT, 'metrics'], JSON.stringify(spec), 60_000);
  return JSON.parse(out) as EmulatedDatapoint[];
}

/** A signal CloudFormation received: the resource's event that records it. */
export interface EmulatedSignal {
  readonly logicalResourceId: string;
  readonly status: string;
  readonly reason: string;
}

/** Makes a stack in the emulator's CloudFormation from `template` (JSON); returns its id. */
export async function createStack(emulator: AwsEmulator, caFile: string, stackName: string, template: object): Promise<string> {
  const spec = { endpoint: emulator.endpoint, ca: caFile, region: emulator.spec.region, stack: stackName, template: JSON.stringify(template) };
  const out = await run('ip', ['netns', 'exec', emulator.spec.namespace, emulatorProgram('python3'), CLIENT_SCRIPT, 'stack'], JSON.stringify(spec), 60_000);
  return (JSON.parse(out) as { stackId: string }).stackId;
}

/** The signals the stack's resources received, oldest first (DescribeStackEvents, read with AWS's SDK). */
export async function readSignals(emulator: AwsEmulator, caFile: string, stackName: string): Promise<EmulatedSignal[]> {
  const spec = { endpoint: emulator.endpoint, ca: caFile, region: emulator.spec.region, stack: stackName };
  const out = await run('ip', ['netns', 'exec', emulator.spec.namespace, emulatorProgram('python3'), CLIENT_SCRIPT, 'signals'], JSON.stringify(spec), 60_000);
  return JSON.parse(out) as EmulatedSignal[];
}

export async function stopAwsEmulator(emulator: AwsEmulator): Promise<void> {
  await stopProcess(emulator.process);
}
