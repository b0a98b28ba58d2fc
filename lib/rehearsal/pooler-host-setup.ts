/**
 * What the PgBouncer engine's pooler hosts on the rehearsal share, made by the fleet's first host start and read
 * back by the next ones (pooler-host.ts): the AWS emulator in the data VPC, the packages object, the secrets, the
 * roles the hosts log in as, and the values the user data is substituted with.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { EndpointRole } from '../../lambda/src/environment';
import { applyDatabaseRoles, type RoleBootstrapRequest } from '../../lambda/src/role-bootstrap';
import { derivedScramVerifier } from '../../lambda/src/scram-salt';
import { renderPoolerBootstrap, sessionListenersValue } from '../model/pgbouncer-bootstrap';
import { DEFAULT_FLEET_HOSTS, DEFAULT_SESSION_MAX_CONNECTIONS_PERCENT } from '../model/pgbouncer-fleet';
import { ensureRdsIamRole } from './consumer-roles';
import { RehearsalOperationError } from './errors';
import type { FleetUserDataRenderer } from './topology/types';
import { createStack, REHEARSAL_PACKAGES_BUCKET, seedAws, startAwsEmulator, type AwsEmulator } from './hosts/aws-emulator';
import { addressOf } from './network/plan';
import { REHEARSAL_CLUSTER, rehearsalAwsNames, rehearsalNetworkPlan } from './network/rehearsal-network';
import type { PoolerHostLogin, PoolerHostOptions } from './pooler-host-types';
import { isAlive } from './processes';
import type { RunningRehearsal } from './running';
import { clientConfig } from './sql';

const KIT_ROOT = join(__dirname, '..', '..');

/** What the fleet's hosts share: made by the first host's start, read by the next ones'. */
export interface FleetFile {
  readonly values: Record<string, string>;
  /** The user data before substitution: the deployment's, or the kit's bootstrap. */
  readonly userData: string;
  readonly renderer: FleetUserDataRenderer;
  readonly emulatorPid: number;
  readonly hosts: number;
}

export const fleetFile = (run: RunningRehearsal): string => run.layout.poolerFleet.file;

function packagesArchitecture(): string {
  return execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim();
}

/** The emulator's address in the data VPC (its names are in every hosts file of the plan). */
function emulatorAddress(run: RunningRehearsal): string {
  return addressOf(rehearsalNetworkPlan(run.rehearsed), 'aws-apis');
}

/**
 * The fleet's first start: the AWS emulator, the packages object, the roles, the secrets, and the values
 * the user data is substituted with.
 */
async function prepareFleet(run: RunningRehearsal, options: PoolerHostOptions): Promise<{ fleet: FleetFile; aws: AwsEmulator }> {
  const s = run.state.settings;
  const plan = rehearsalNetworkPlan(run.rehearsed);
  const tls = run.state.tls;
  const work = run.layout.poolerFleet.dir;
  mkdirSync(work, { recursive: true, mode: 0o700 });
  // The VPC's router: the data namespace relays between its hosts and the management link.
  execFileSync('ip', ['netns', 'exec', plan.dataNamespace, '/bin/sh', '-c', 'echo 1 > /proc/sys/net/ipv4/ip_forward']);
  const aws = await startAwsEmulator({ namespace: plan.dataNamespace, address: emulatorAddress(run), region: rehearsalAwsNames(run.rehearsed).region, certFile: tls.certFile, keyFile: tls.keyFile, workDir: work });
  run.track(aws.process);

  const arch = packagesArchitecture();
  const deployed = options.deployment?.values ?? {};
  const tar = join(work, `debian-13-${arch}.tar`);
  try {
    execFileSync('npx', ['ts-node', '--transpile-only', join(KIT_ROOT, 'bin', 'build-pooler-packages.ts'), '--arch', arch, '--rehearsal', tar], {
      cwd: KIT_ROOT,
      env: { ...process.env, RDS_CA_BUNDLE: tls.caFile },
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 900_000,
    });
  } catch (err) {
    throw new RehearsalOperationError(`pooler hosts: the packages object could not be built: ${String((err as { stderr?: unknown }).stderr ?? (err as Error).message).trim().split('\n').slice(-5).join(' | ')}`);
  }
  const login = (l: PoolerHostLogin): string => JSON.stringify({ username: l.username, password: l.password });
  // Where the deployment's hosts look (its key names the hosts' architecture; the object here holds this machine's).
  const key = deployed.PackagesKey ?? `pooler/debian-13-${arch}.tar`;
  const secretName = (role: string): string => `rehearsal/pooler/${role}`;
  const arns = await seedAws(aws, tls.caFile, {
    buckets: [REHEARSAL_PACKAGES_BUCKET],
    objects: [{ bucket: REHEARSAL_PACKAGES_BUCKET, key, file: tar }],
    secrets: [
      { name: secretName('server'), value: login(options.server) },
      ...options.consumers.map((c, i) => ({ name: secretName(`consumer-${i + 1}`), value: login(c) })),
      { name: secretName('tls'), value: JSON.stringify({ certificate: readFileSync(tls.certFile, 'utf8'), privateKey: readFileSync(tls.keyFile, 'utf8'), ca: readFileSync(tls.caFile, 'utf8') }) },
    ],
  });
  const consumerArns = options.consumers.map((_, i) => arns[secretName(`consumer-${i + 1}`)]!);
  await makeRoles(run, options, new Map([[options.server.username, arns[secretName('server')]!], ...options.consumers.map((c, i): [string, string] => [c.username, consumerArns[i]!])]));

  const names = rehearsalAwsNames(run.rehearsed);
  const replicas = run.state.nodes.filter((n) => n.name !== run.state.writerName);
  // The stack the hosts signal: the deployment's (CloudFormation), held by the emulator as something to signal.
  const signalResource = deployed.SignalResource;
  const stackName = signalResource !== undefined && signalResource !== '' ? options.deployment?.stackName : undefined;
  if (stackName !== undefined) await createStack(aws, tls.caFile, stackName, { Resources: { [signalResource!]: { Type: 'AWS::CloudFormation::WaitConditionHandle' } } });
  const rehearsalValues: Record<string, string> = {
    ClusterEndpoint: names.clusterEndpoint(run.state.deployment?.clusterName ?? REHEARSAL_CLUSTER),
    ReaderEndpoints: replicas.map((n) => names.instanceEndpoint(n.name)).join(' '),
    WriterInstanceEndpoint: names.instanceEndpoint(run.state.writerName),
    DatabaseName: run.secrets.database,
    ServerPort: String(s.port),
    ServerUser: options.server.username,
    Hosts: String(DEFAULT_FLEET_HOSTS),
    Vcpus: String(options.vcpus ?? 2),
    MaxConnections: String(s.sizingMaxConnections),
    MaxConnectionsPercent: String(s.pool.maxConnectionsPercent),
    MaxIdleConnectionsPercent: String(s.pool.maxIdleConnectionsPercent),
    BorrowTimeoutSeconds: String(s.pool.connectionBorrowTimeoutSeconds),
    MaxClientConnections: String(s.maxClientConnections),
    TcpIdleTimeoutSeconds: String(options.tcpIdleTimeoutSeconds ?? 350),
    PackagesBucket: REHEARSAL_PACKAGES_BUCKET,
    PackagesKey: key,
    ServerSecretArn: arns[secretName('server')]!,
    ConsumerSecretArns: consumerArns.join(' '),
    TlsSecretArn: arns[secretName('tls')]!,
    FleetName: options.fleetName ?? 'rehearsal-pooler',
    // No stack unless the deployment's: the hosts send no signal, as under Terraform.
    SignalStack: stackName ?? '',
    SignalResource: '',
    SignalRegion: stackName !== undefined ? names.region : '',
    SessionListeners: sessionListenersValue(options.sessionRoles ?? []),
    SessionMaxConnectionsPercent: String(options.sessionMaxConnectionsPercent ?? DEFAULT_SESSION_MAX_CONNECTIONS_PERCENT),
  };
  // The deployment's own values win, but for what AWS fills at deploy time, the instance class's max_connections
  // and the bucket: the emulator serves the rehearsal's one, by its name in the data VPC's DNS (a Terraform
  // deployment names its bucket at plan, a CloudFormation one at deploy time).
  const fixed = Object.fromEntries(Object.entries(deployed).filter(([k]) => k !== 'MaxConnections' && k !== 'PackagesBucket' && !(k.startsWith('Signal') && deployed[k] === '')));
  const values = { ...rehearsalValues, ...fixed };
  const userData = options.deployment?.userData ?? renderPoolerBootstrap();
  return { fleet: { values, userData, renderer: options.deployment?.renderer ?? 'cloudformation-sub', emulatorPid: aws.process.pid, hosts: 0 }, aws };
}

/** What the fleet's hosts share: read back when a host started before, made otherwise. */
export async function fleetOf(run: RunningRehearsal, options: PoolerHostOptions): Promise<{ fleet: FleetFile; aws: AwsEmulator }> {
  const s = run.rehearsed;
  run.network.namespacesFor(`network ${run.network.name}: the pooler hosts are booted in namespaces of their own, joined to the data VPC's: use network namespaces (as root)`);
  if (!existsSync(fleetFile(run))) return prepareFleet(run, options);
  const fleet = JSON.parse(readFileSync(fleetFile(run), 'utf8')) as FleetFile;
  const process = run.allProcesses().find((p) => p.pid === fleet.emulatorPid && p.kind === 'aws-emulator');
  if (process === undefined || !isAlive(process.pid)) throw new RehearsalOperationError(`pooler hosts: the AWS emulator (pid ${fleet.emulatorPid}) is not running: restart the rehearsal`);
  const address = emulatorAddress(run);
  return { fleet, aws: { spec: { namespace: rehearsalNetworkPlan(s).dataNamespace, address, region: rehearsalAwsNames(s).region, certFile: run.state.tls.certFile, keyFile: run.state.tls.keyFile, workDir: run.layout.poolerFleet.dir }, process, endpoint: `https://${address}` } };
}

/**
 * The roles, made by the deployed role bootstrap's own code (applyDatabaseRoles) as it makes them for
 * this engine: each login with a password secret, so its password is the secret's derived verifier
 * (the one in the host's auth file); the read-only listener's server role as a READ_ONLY role. With
 * `roles` (a deployment's), those roles only.
 */
async function makeRoles(run: RunningRehearsal, options: PoolerHostOptions, secretArns: ReadonlyMap<string, string>): Promise<void> {
  const writer = run.state.nodes.find((n) => n.name === run.state.writerName)!;
  const logins = new Map(poolerLogins(options).map((l) => [l.username, l]));
  const roles = madeRoles(options);
  if (roles.length === 0) return;
  const request: RoleBootstrapRequest = {
    database: run.secrets.database,
    // A role the hosts log in as has its password secret; any other the bootstrap makes logs in with IAM.
    roles: roles.map((r) => ({ name: r.name, access: r.access, ...(logins.has(r.name) ? { passwordSecretArn: secretArns.get(r.name)! } : {}) })),
  };
  const verifiers = new Map(roles.filter((r) => logins.has(r.name)).map((r) => [r.name, derivedScramVerifier(r.name, logins.get(r.name)!.password)]));
  const client = new Client(clientConfig({ ...run.adminEndpoint(writer), database: run.secrets.database }, 10_000));
  client.on('error', () => undefined);
  await client.connect();
  try {
    await ensureRdsIamRole(client);
    await applyDatabaseRoles(client, request, verifiers);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The logins the hosts know: the consumers' and the read-only listener's server role. */
function poolerLogins(options: PoolerHostOptions): Array<PoolerHostLogin & { readonly access: 'READ_ONLY' | 'READ_WRITE' }> {
  return [...options.consumers, { ...options.server, access: 'READ_ONLY' as const }];
}

/** The roles made: the deployment's role bootstrap's, else one per login. */
export function madeRoles(options: PoolerHostOptions): ReadonlyArray<{ readonly name: string; readonly access: EndpointRole }> {
  return options.roles ?? poolerLogins(options).map((l) => ({ name: l.username, access: l.access === 'READ_WRITE' ? EndpointRole.READ_WRITE : EndpointRole.READ_ONLY }));
}
