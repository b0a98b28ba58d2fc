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
 * path is the one AWS runs. What the hosts share is made by the first start (pooler-host-setup.ts); the load
 * balancer stand-in in front of them is pooler-load-balancer.ts.
 */
import { mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { substitutePlaceholders } from '../model/pgbouncer-bootstrap';
import { FLEET_PATHS, FLEET_PORTS } from '../model/pgbouncer-fleet';
import { POOLER_HEALTH_PORT } from '../model/pgbouncer-host-serve';
import { RehearsalConfigError, RehearsalOperationError } from './errors';
import { renderTemplatefile } from './terraform-templatefile';
import type { AwsEmulator } from './hosts/aws-emulator';
import { bootHost, execInHost, waitForBoot, type BootedHost } from './hosts/booted-host';
import { connectHost } from './hosts/host-network';
import { findImdsMock, hostImageRoot } from './hosts/host-tools';
import { NETNS_ETC } from './network/setup';
import { MAX_POOLER_HOSTS, POOLER_HOST_FIRST_NUMBER, rehearsalAwsNames, rehearsalNetworkPlan } from './network/rehearsal-network';
import { fleetFile, fleetOf, madeRoles, type FleetFile } from './pooler-host-setup';
import type { BootingPoolerHost, PoolerHost, PoolerHostLogin, PoolerHostOptions } from './pooler-host-types';
import { containerLeader, isAlive, logTail } from './processes';
import type { RunningRehearsal } from './running';

/** The instance profile's role the hosts' credentials are for. */
export const REHEARSAL_INSTANCE_ROLE = 'apk-rehearsal-pooler-host';

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

/**
 * The user data as the deployment's tool renders it: Fn::Sub's `${Name}` substitution (the kit's bootstrap has
 * no other Fn::Sub syntax), or Terraform's templatefile, run by Terraform.
 */
function renderUserData(run: RunningRehearsal, fleet: FleetFile, values: Readonly<Record<string, string>>): string {
  return fleet.renderer === 'terraform-templatefile' ? renderTemplatefile(fleet.userData, values, run.layout.poolerFleet.dir) : substitutePlaceholders(fleet.userData, values);
}

/** Boots the fleet's next host (pooler-<index>) from the user data substituted with `values`; its processes are tracked. */
async function bootNextHost(run: RunningRehearsal, prepared: { fleet: FleetFile; aws: AwsEmulator }, values: Readonly<Record<string, string>>): Promise<BootingPoolerHost> {
  const s = run.rehearsed;
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
