/**
 * The PgBouncer engine's pooler hosts on the rehearsal, booted as its hosts boot on AWS: each a Debian 13
 * system container (hosts/booted-host.ts) in a namespace of its own joined to the data VPC's, its user
 * data the engine's bootstrap exactly as both flavours deploy it (Fn::Sub / templatefile substituted),
 * run by cloud-init with no step skipped: the packages object from S3, `dpkg --install`, the fleet's
 * files from Secrets Manager, the kit's units under the host's own systemd. What AWS provides comes from:
 *
 * - S3, Secrets Manager, CloudWatch: the AWS emulator (moto) in the data VPC, at the AWS names the hosts
 *   resolve, over HTTPS with the rehearsal CA's certificate, which the hosts trust in place of Amazon's;
 * - IMDSv2: AWS's metadata mock in each host's namespace at 169.254.169.254;
 * - the packages object: `build-pooler-packages --rehearsal` for this machine's architecture, everything
 *   built as the hosts' is, but the rehearsal CA as the RDS bundle and the kit's stand-in package in place
 *   of AWS's SSM Agent;
 * - the VPC's router: the data namespace forwards between its hosts and the management link, so the
 *   root namespace (tests, the bench) reaches a host as a client in the VPC would.
 *
 * The read/write pools reach the writer by the cluster endpoint's name, which the rehearsal moves at a
 * failover as Aurora's DNS does (the hosts' hosts files are rewritten in place), so the engine's failover
 * path is the one AWS runs.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { EndpointRole } from '../../lambda/src/environment';
import { applyDatabaseRoles, type RoleBootstrapRequest } from '../../lambda/src/role-bootstrap';
import { derivedScramVerifier } from '../../lambda/src/scram-salt';
import { renderPoolerBootstrap, sessionListenersValue, substitutePlaceholders } from '../model/pgbouncer-bootstrap';
import { DEFAULT_FLEET_HOSTS, DEFAULT_SESSION_MAX_CONNECTIONS_PERCENT, FLEET_PATHS, FLEET_PORTS, NLB_DEFAULT_TCP_IDLE_TIMEOUT_SECONDS } from '../model/pgbouncer-fleet';
import { onPath } from './binaries';
import { POOLER_HEALTH_PORT } from '../model/pgbouncer-host-serve';
import { ensureRdsIamRole } from './consumer-roles';
import { RehearsalConfigError, RehearsalOperationError } from './errors';
import { renderTemplatefile } from './terraform-templatefile';
import type { FleetUserDataRenderer } from './topology/types';
import { createStack, REHEARSAL_PACKAGES_BUCKET, seedAws, startAwsEmulator, type AwsEmulator } from './hosts/aws-emulator';
import { bootHost, execInHost, waitForBoot, type BootedHost } from './hosts/booted-host';
import { acceptsConnections, connectHost } from './hosts/host-network';
import { addLoadBalancerTarget, healthyTargets, loadBalancerListeners, startLoadBalancer, type LoadBalancer } from './hosts/load-balancer';
import { findImdsMock, hostImageRoot } from './hosts/host-tools';
import { addressOf } from './network/plan';
import { NETNS_ETC } from './network/setup';
import { MAX_POOLER_HOSTS, POOLER_HOST_FIRST_NUMBER, REHEARSAL_CLUSTER, rehearsalAwsNames, rehearsalNetworkPlan } from './network/rehearsal-network';
import { containerLeader, isAlive, logTail } from './processes';
import type { RunningRehearsal } from './running';
import { clientConfig } from './sql';

/** The instance profile's role the hosts' credentials are for. */
export const REHEARSAL_INSTANCE_ROLE = 'apk-rehearsal-pooler-host';
const KIT_ROOT = join(__dirname, '..', '..');

/** A login of the engine: a consumer's or the read-only listener's server role. */
export interface PoolerHostLogin {
  readonly username: string;
  readonly password: string;
}

export interface PoolerHostOptions {
  /** The consumers' logins: each gets a role whose password is its secret's derived verifier, as the role bootstrap makes it. */
  readonly consumers: ReadonlyArray<PoolerHostLogin & { readonly access: 'READ_ONLY' | 'READ_WRITE' }>;
  /** The read-only listener's server role (read-only privileges). */
  readonly server: PoolerHostLogin;
  /**
   * The roles the deployment's role bootstrap makes (`rehearse up --from`): only these are made; a login
   * without one fails, as it would on AWS.
   * @default a role for each login (the consumers' and the server's)
   */
  readonly roles?: ReadonlyArray<{ readonly name: string; readonly access: EndpointRole }>;
  /** PgBouncer processes per listener, as a host's vCPUs (default 2). */
  readonly vcpus?: number;
  /** The NLB idle timeout the host's keepalives derive from (default 350 s). */
  readonly tcpIdleTimeoutSeconds?: number;
  /**
   * A deployment's fleet (`rehearse up --from`): its user data as the launch template carries it and the values
   * the deployment fixes. The values AWS fills in at deploy time (endpoints, the bucket, secret ARNs, the stack
   * to signal) are the rehearsal's; so is MaxConnections, as the instances here are not of the deployment's class.
   * @default the kit's bootstrap with the rehearsal's values
   */
  readonly deployment?: {
    readonly userData: string;
    readonly values: Readonly<Record<string, string>>;
    readonly stackName?: string;
    /**
     * What renders the user data with its values: Fn::Sub's substitution, or Terraform's templatefile (run by Terraform).
     * @default 'cloudformation-sub'
     */
    readonly renderer?: FleetUserDataRenderer;
  };
  /** The Fleet dimension of its metrics (default 'rehearsal-pooler'). */
  readonly fleetName?: string;
  /**
   * The roles some endpoint of the deployment uses in session pooling: the host lays out their session
   * listeners, as a deployed host does from the same values (default none).
   */
  readonly sessionRoles?: ReadonlyArray<EndpointRole>;
  /** The session listeners' share of each target's budget (default DEFAULT_SESSION_MAX_CONNECTIONS_PERCENT). */
  readonly sessionMaxConnectionsPercent?: number;
  /**
   * The exporter's period, set on the host as an operator would (a drop-in for the agent's unit), default
   * the unit's own (POOLER_METRICS_PERIOD_SECONDS).
   */
  readonly metricsPeriodSeconds?: number;
}

export interface PoolerHost {
  /** Its name: pooler-<i>. */
  readonly name: string;
  /** The booted host: its container (systemd-nspawn) and its metadata service, both tracked by pid. */
  readonly booted: BootedHost;
  /** The host's / as seen from here (the container's root, through its PID 1): its files, its sockets. */
  readonly root: string;
  /** Its private address in the data VPC: where its listeners and health endpoint are reached. */
  readonly host: string;
  readonly ports: { readonly readWrite: number; readonly readOnly: number };
  readonly healthPort: number;
  /** The deploy-time values its user data was substituted with (what Fn::Sub / templatefile would take). */
  readonly values: Readonly<Record<string, string>>;
  /** The AWS emulator its AWS calls go to (its CloudWatch holds the exporter's metrics). */
  readonly aws: AwsEmulator;
}

/** What the fleet's hosts share: made by the first host's start, read by the next ones'. */
interface FleetFile {
  readonly values: Record<string, string>;
  /** The user data before substitution: the deployment's, or the kit's bootstrap. */
  readonly userData: string;
  readonly renderer: FleetUserDataRenderer;
  readonly emulatorPid: number;
  readonly hosts: number;
}

const fleetFile = (run: RunningRehearsal): string => run.layout.poolerFleet.file;

function packagesArchitecture(): string {
  return execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim();
}

/** The emulator's address in the data VPC (its names are in every hosts file of the plan). */
function emulatorAddress(run: RunningRehearsal): string {
  return addressOf(rehearsalNetworkPlan(run.state.settings), 'aws-apis');
}

/**
 * The fleet's first start: the AWS emulator, the packages object, the roles, the secrets, and the values
 * the user data is substituted with.
 */
async function prepareFleet(run: RunningRehearsal, options: PoolerHostOptions): Promise<{ fleet: FleetFile; aws: AwsEmulator }> {
  const s = run.state.settings;
  const plan = rehearsalNetworkPlan(s);
  const tls = run.state.tls;
  const work = run.layout.poolerFleet.dir;
  mkdirSync(work, { recursive: true, mode: 0o700 });
  // The VPC's router: the data namespace relays between its hosts and the management link.
  execFileSync('ip', ['netns', 'exec', plan.dataNamespace, '/bin/sh', '-c', 'echo 1 > /proc/sys/net/ipv4/ip_forward']);
  const aws = await startAwsEmulator({ namespace: plan.dataNamespace, address: emulatorAddress(run), region: rehearsalAwsNames(s).region, certFile: tls.certFile, keyFile: tls.keyFile, workDir: work });
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

  const names = rehearsalAwsNames(s);
  const replicas = run.state.nodes.filter((n) => n.name !== run.state.writerName);
  // The stack the hosts signal: the deployment's (CloudFormation), held by the emulator as something to signal.
  const signalResource = deployed.SignalResource;
  const stackName = signalResource !== undefined && signalResource !== '' ? options.deployment?.stackName : undefined;
  if (stackName !== undefined) await createStack(aws, tls.caFile, stackName, { Resources: { [signalResource!]: { Type: 'AWS::CloudFormation::WaitConditionHandle' } } });
  const rehearsalValues: Record<string, string> = {
    ClusterEndpoint: names.clusterEndpoint(s.deployment?.clusterName ?? REHEARSAL_CLUSTER),
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

/**
 * Boots the next pooler host of the fleet (pooler-1, pooler-2, ...; each with its share of the budgets,
 * DEFAULT_FLEET_HOSTS in all) and resolves once a login through its read/write listener succeeds. The
 * first call prepares what the fleet shares.
 */
export async function startPoolerHost(run: RunningRehearsal, options: PoolerHostOptions, timeoutMs = 420_000): Promise<PoolerHost> {
  const prepared = await fleetOf(run, options);
  const { name, booted, host: address } = await bootNextHost(run, prepared, prepared.fleet.values);
  const boot = await waitForBoot(booted, timeoutMs);
  if (boot.cloudInit.status !== 'done') {
    const log = (await execInHost(booted, ['tail', '-n', '30', '/var/log/cloud-init-output.log'])).stdout;
    throw new RehearsalOperationError(`pooler host ${name}: its user data failed (cloud-init ${boot.cloudInit.status}: ${boot.cloudInit.errors.join('; ')}): ${log}`);
  }
  if (options.metricsPeriodSeconds !== undefined) await setMetricsPeriod(booted, options.metricsPeriodSeconds);
  const leader = containerLeader(booted.container.pid);
  if (leader === undefined) throw new RehearsalOperationError(`pooler host ${name}: its systemd is gone: ${logTail(booted.container.logFile)}`);
  const host: PoolerHost = { name, booted, root: `/proc/${leader}/root`, host: address, ports: { readWrite: FLEET_PORTS.readWrite, readOnly: FLEET_PORTS.readOnly }, healthPort: POOLER_HEALTH_PORT, values: prepared.fleet.values, aws: prepared.aws };
  // A login whose role is made (a consumer's, as on AWS a client's first login would be).
  const made = new Set(madeRoles(options).map((r) => r.name));
  await waitListening(run, options.consumers.find((c) => made.has(c.username)) ?? options.server, host, Math.max(10_000, timeoutMs / 4));
  return host;
}

/** A pooler host booted and not waited for: its user data runs (or fails) on its own. */
export interface BootingPoolerHost {
  readonly name: string;
  readonly booted: BootedHost;
  /** Its private address in the data VPC. */
  readonly host: string;
  /** The values its user data was substituted with. */
  readonly values: Readonly<Record<string, string>>;
  readonly aws: AwsEmulator;
}

/**
 * Boots the fleet's next host with some of its user data's values replaced (`values`: a packages key, the
 * stack and resource to signal) and returns at once, without waiting for it to serve: for a host that is
 * meant to fail, as a drill makes one. The first call prepares what the fleet shares, as startPoolerHost does.
 */
export async function bootPoolerHost(run: RunningRehearsal, options: PoolerHostOptions, values: Readonly<Record<string, string>>): Promise<BootingPoolerHost> {
  const prepared = await fleetOf(run, options);
  const unknown = Object.keys(values).filter((k) => !(k in prepared.fleet.values));
  if (unknown.length > 0) throw new RehearsalConfigError(unknown.map((k) => `pooler host values: ${k} is not a value of the user data: use one of ${Object.keys(prepared.fleet.values).join(', ')}`));
  return bootNextHost(run, prepared, { ...prepared.fleet.values, ...values });
}

/** What the fleet's hosts share: read back when a host started before, made otherwise. */
async function fleetOf(run: RunningRehearsal, options: PoolerHostOptions): Promise<{ fleet: FleetFile; aws: AwsEmulator }> {
  const s = run.state.settings;
  if (s.network !== 'namespaces') throw new RehearsalConfigError([`network ${s.network}: the pooler hosts are booted in namespaces of their own, joined to the data VPC's: use network namespaces (as root)`]);
  if (!existsSync(fleetFile(run))) return prepareFleet(run, options);
  const fleet = JSON.parse(readFileSync(fleetFile(run), 'utf8')) as FleetFile;
  const process = run.state.processes.find((p) => p.pid === fleet.emulatorPid && p.kind === 'aws-emulator');
  if (process === undefined || !isAlive(process.pid)) throw new RehearsalOperationError(`pooler hosts: the AWS emulator (pid ${fleet.emulatorPid}) is not running: restart the rehearsal`);
  const address = emulatorAddress(run);
  return { fleet, aws: { spec: { namespace: rehearsalNetworkPlan(s).dataNamespace, address, region: rehearsalAwsNames(s).region, certFile: run.state.tls.certFile, keyFile: run.state.tls.keyFile, workDir: run.layout.poolerFleet.dir }, process, endpoint: `https://${address}` } };
}

/**
 * The user data as the deployment's tool renders it: Fn::Sub's `${Name}` substitution (the kit's bootstrap has
 * no other Fn::Sub syntax), or Terraform's templatefile, run by Terraform.
 */
function renderUserData(run: RunningRehearsal, fleet: FleetFile, values: Readonly<Record<string, string>>): string {
  return fleet.renderer === 'terraform-templatefile' ? renderTemplatefile(fleet.userData, values, run.layout.poolerFleet.dir) : substitutePlaceholders(fleet.userData, values);
}

/** Boots the fleet's next host (pooler-<index>) from the user data substituted with `values`; its processes are tracked. */
async function bootNextHost(run: RunningRehearsal, prepared: { fleet: FleetFile; aws: AwsEmulator }, values: Readonly<Record<string, string>>): Promise<BootingPoolerHost> {
  const s = run.state.settings;
  const index = prepared.fleet.hosts + 1;
  if (index > MAX_POOLER_HOSTS) throw new RehearsalConfigError([`pooler hosts: ${index} hosts asked for, the data VPC's plan has room for ${MAX_POOLER_HOSTS}`]);
  writeFileSync(fleetFile(run), JSON.stringify({ ...prepared.fleet, hosts: index }, null, 2));

  const plan = rehearsalNetworkPlan(s, run.state.writerName);
  const name = `pooler-${index}`;
  const address = `${plan.cidr.split('.').slice(0, 3).join('.')}.${POOLER_HOST_FIRST_NUMBER + index - 1}`;
  const namespace = `${plan.prefix}-host${index}`;
  // Through the data namespace's management address: the root namespace (tests, the bench) reaches the host through it.
  await connectHost({ namespace, vpcNamespace: plan.dataNamespace, vpcLink: `host${index}`, address, vpcCidr: plan.cidr, gateway: plan.management.dataAddress });
  // The host's DNS: the plan's hosts file, kept where a failover rewrites it (network/setup.ts).
  const hostsFile = join(NETNS_ETC, namespace, 'hosts');
  mkdirSync(join(NETNS_ETC, namespace), { recursive: true, mode: 0o755 });
  writeFileSync(hostsFile, plan.hostsFile, { mode: 0o644 });
  const names = rehearsalAwsNames(s);
  const booted = await bootHost({
    name,
    root: hostImageRoot(),
    namespace,
    workDir: join(run.layout.poolerFleet.hostsDir, name),
    userData: renderUserData(run, prepared.fleet, values),
    instanceId: `i-${createInstanceId(plan.prefix, index)}`,
    region: names.region,
    availabilityZone: `${names.region}${'abc'[(index - 1) % 3]}`,
    roleName: REHEARSAL_INSTANCE_ROLE,
    imdsProgram: findImdsMock(),
    hostsFile,
    extraTrustedCaFile: run.state.tls.caFile,
  });
  run.track(booted.imds);
  run.track(booted.container);
  return { name, booted, host: address, values, aws: prepared.aws };
}

/** A hex instance id, stable for the rehearsal and the host's index (17 characters, as EC2's). */
function createInstanceId(prefix: string, index: number): string {
  return Buffer.from(`${prefix}-${index}`).toString('hex').padStart(17, '0').slice(-17);
}

/** The exporter's period, as an operator sets it: a drop-in for the agent's unit, then a restart. */
async function setMetricsPeriod(host: BootedHost, seconds: number): Promise<void> {
  const dropIn = `[Service]\nEnvironment=APK_METRICS_PERIOD=${seconds}\n`;
  const r = await execInHost(host, ['/bin/sh', '-c', `mkdir -p /etc/systemd/system/apk-host.service.d && printf '%s' '${dropIn}' >/etc/systemd/system/apk-host.service.d/period.conf && systemctl daemon-reload && systemctl restart apk-host.service`]);
  if (r.status !== 0) throw new RehearsalOperationError(`pooler host ${host.spec.name}: setting the exporter's period failed: ${r.stderr}`);
}

/** The pid (in this machine's PID namespace) of a PgBouncer process of the host; undefined while it is down. */
export function pgbouncerPid(host: Pick<PoolerHost, 'root'>, name: string): number | undefined {
  let inContainer: number;
  try {
    inContainer = Number(readFileSync(join(host.root, FLEET_PATHS.runDir, name, 'pgbouncer.pid'), 'utf8').trim());
  } catch {
    return undefined;
  }
  const leader = Number(host.root.split('/')[2]);
  return hostPid(leader, inContainer);
}

/** The pid here of the process that is `nsPid` in the PID namespace of `leader`. */
function hostPid(leader: number, nsPid: number): number | undefined {
  let ns: string;
  try {
    ns = readlinkSync(`/proc/${leader}/ns/pid`);
  } catch {
    return undefined;
  }
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const line = readFileSync(`/proc/${entry}/status`, 'utf8').split('\n').find((l) => l.startsWith('NSpid:'));
      const ids = line?.split(/\s+/).slice(1).map(Number) ?? [];
      if (ids.length > 1 && ids[ids.length - 1] === nsPid && readlinkSync(`/proc/${entry}/ns/pid`) === ns && isAlive(Number(entry))) return Number(entry);
    } catch {
      // Gone in between.
    }
  }
  return undefined;
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
function madeRoles(options: PoolerHostOptions): ReadonlyArray<{ readonly name: string; readonly access: EndpointRole }> {
  return options.roles ?? poolerLogins(options).map((l) => ({ name: l.username, access: l.access === 'READ_WRITE' ? EndpointRole.READ_WRITE : EndpointRole.READ_ONLY }));
}

/** Until a login through the host's read/write listener succeeds; a host that stops fails the start with its console. */
async function waitListening(run: RunningRehearsal, login: PoolerHostLogin, host: PoolerHost, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (!isAlive(host.booted.container.pid)) throw new RehearsalOperationError(`pooler host ${host.name} stopped: ${logTail(host.booted.container.logFile)}`);
    const client = new Client({ host: host.host, port: FLEET_PORTS.readWrite, user: login.username, password: login.password, database: run.secrets.database, ssl: { ca: readFileSync(run.state.tls.caFile, 'utf8') }, connectionTimeoutMillis: 2000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return;
    } catch (err) {
      last = (err as Error).message;
      await new Promise((r) => setTimeout(r, 150));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  const units = (await execInHost(host.booted, ['systemctl', 'status', '--no-pager', '--lines=5', 'apk-pgbouncer@*', 'apk-host.service'])).stdout;
  throw new RehearsalOperationError(`pooler host ${host.name}: no login through ${host.host}:${FLEET_PORTS.readWrite} within ${timeoutMs} ms (${last}); ${units}`);
}

/**
 * The fleet's load balancer stand-in (hosts/load-balancer.ts) in front of `hosts`, at its address in the data
 * VPC; a host started later joins with addPoolerLoadBalancerTarget, as the Auto Scaling group registers it.
 */
export async function startPoolerLoadBalancer(run: RunningRehearsal, hosts: ReadonlyArray<PoolerHost>, options: { readonly tcpIdleTimeoutSeconds?: number; readonly endpointAddresses?: ReadonlyArray<string> } = {}): Promise<PoolerLoadBalancer> {
  const plan = rehearsalNetworkPlan(run.state.settings);
  const address = addressOf(plan, 'pooler-load-balancer');
  const program = onPath('haproxy');
  if (program === undefined) throw new RehearsalConfigError(['the pooler load balancer stand-in needs HAProxy: `apt-get install haproxy` (or `make system-deps`)']);
  const lb = startLoadBalancer(
    { namespace: plan.dataNamespace, address, targets: hosts.map((h) => ({ name: h.name, address: h.host })), ...(options.endpointAddresses !== undefined ? { endpointAddresses: options.endpointAddresses } : {}), tcpIdleTimeoutSeconds: options.tcpIdleTimeoutSeconds ?? NLB_DEFAULT_TCP_IDLE_TIMEOUT_SECONDS, dir: run.layout.poolerFleet.loadBalancerDir },
    program,
    run.user,
  );
  run.track(lb.process);
  const ports = Object.fromEntries(loadBalancerListeners().map((l) => [l.role, l.port])) as Record<EndpointRole, number>;
  const result: PoolerLoadBalancer = { ...lb, address, ports };
  // Listening, and its runtime API answering.
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (!isAlive(lb.process.pid)) throw new RehearsalOperationError(`the pooler load balancer stand-in stopped: ${logTail(lb.process.logFile)}`);
    try {
      await healthyTargets(lb);
      if (await acceptsConnections(plan.dataNamespace, address, ports[EndpointRole.READ_WRITE])) return result;
    } catch {
      // Not yet.
    }
    if (Date.now() > deadline) throw new RehearsalOperationError(`the pooler load balancer stand-in did not listen on ${address} within 10 s: ${logTail(lb.process.logFile)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The load balancer stand-in, where consumers reach it: its address in the data VPC and a port per role. */
export interface PoolerLoadBalancer extends LoadBalancer {
  readonly address: string;
  readonly ports: Readonly<Record<EndpointRole, number>>;
}

export function addPoolerLoadBalancerTarget(lb: PoolerLoadBalancer, host: PoolerHost): Promise<void> {
  return addLoadBalancerTarget(lb, { name: host.name, address: host.host });
}

