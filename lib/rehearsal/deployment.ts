/**
 * The deployment a rehearsal rehearses, reduced from a DeployedTopology (cdk.out or a plan's JSON) to
 * what the rehearsal runs: which proxy endpoints exist, in which VPC each sits, which consumers reach
 * which endpoint with which environment, and the instance classes that size the CPU budgets. It is
 * plain data, stored with the settings in the state file, so `down`, `status` and the health checker in
 * other processes rebuild the same network and names from it.
 */
import { DEFAULT_AWS_REGION } from './aws-names';
import { DEFAULT_CORES_PER_VCPU } from './cgroups';
import { RehearsalConfigError } from './errors';
import { MAX_CONSUMER_VPCS, MAX_ENDPOINTS_PER_VPC } from './network/plan';
import type { RehearsalSpec } from './settings-types';
import type { RehearsedConsumer, RehearsedDeployment, RehearsedEndpoint, RehearsedFleet } from './rehearsed-deployment';
import { loadTopology, settingsFromTopology, type DeployedTopology, type EnvValue, type NotReproducible, type TerraformWorkingDir } from './topology';
import type { FleetTopology, TopologyRole } from './topology/types';
import { EndpointRole } from '../../lambda/src/environment';
import { sessionPinning } from './topology/not-reproducible';

/** The key of the data VPC: the proxy's own VPC, where the instances and the default endpoint live. */
export const DATA_VPC = 'data';

export type { RehearsedConsumer, RehearsedDeployment, RehearsedEndpoint, RehearsedFleet } from './rehearsed-deployment';

/** An RDS-style name: lower case, letters, digits and single hyphens, starting with a letter. */
export function rdsName(raw: string): string {
  const name = raw
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[^a-z]+/, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return name === '' ? 'unnamed' : name;
}

/** A namespace suffix for a VPC: its name's last part, without a trailing "vpc", 1 to 10 letters and digits. */
function vpcKey(raw: string, taken: ReadonlySet<string>): string {
  const last = raw.split('/').pop() ?? raw;
  let base = last.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (base.length > 3 && base.endsWith('vpc')) base = base.slice(0, -3);
  base = base.replace(/^[^a-z]+/, '');
  if (base === '' || base === DATA_VPC) base = 'consumer';
  base = base.slice(0, 10);
  let key = base;
  for (let i = 2; taken.has(key); i++) key = `${base.slice(0, 10 - String(i).length)}${i}`;
  return key;
}

function literal(value: EnvValue | undefined): string | undefined {
  return value?.kind === 'literal' ? value.value : undefined;
}

/**
 * The deployment as the rehearsal runs it. Refuses what it cannot place: a consumer whose endpoint the
 * input leaves unresolved, more consumer VPCs or endpoints per VPC than the address plan holds.
 */
export function deploymentFromTopology(t: DeployedTopology, from: string): RehearsedDeployment {
  const problems: string[] = [];
  const dataVpc = t.proxy.vpc ?? t.cluster.vpc;
  const keys = new Map<string, string>();
  const taken = new Set<string>([DATA_VPC]);
  const keyOf = (vpc: string | undefined): string => {
    if (vpc === undefined || vpc === dataVpc) return DATA_VPC;
    let key = keys.get(vpc);
    if (key === undefined) {
      const named = t.vpcs.find((v) => v.id === vpc);
      key = vpcKey(named?.name ?? vpc, taken);
      taken.add(key);
      keys.set(vpc, key);
    }
    return key;
  };
  // An endpoint the input does not place sits where its consumers are (a function runs in its endpoint's VPC).
  const endpointVpc = (id: string, vpc: string | undefined): string | undefined => vpc ?? t.consumers.find((c) => c.endpoint === id)?.vpc;
  const names = new Map<string, string>();
  const endpoints: RehearsedEndpoint[] = t.endpoints.map((e) => {
    const name = rdsName(e.name);
    names.set(e.id, name);
    return { name, role: e.role, isDefault: e.isDefault, vpc: e.isDefault ? DATA_VPC : keyOf(endpointVpc(e.id, e.vpc)), sourceId: e.id };
  });
  const consumers: RehearsedConsumer[] = [];
  for (const c of t.consumers) {
    const endpoint = c.endpoint === undefined ? undefined : names.get(c.endpoint);
    if (endpoint === undefined) {
      problems.push(`consumer ${c.id}: its DB_HOST names no endpoint the input resolves: give each consumer one endpoint of its role (see the topology's notes)`);
      continue;
    }
    const serverName = c.connection.tls.serverName;
    const server = serverName?.kind === 'endpoint-host' ? names.get(serverName.endpoint) : undefined;
    consumers.push({
      name: rdsName(c.functionName ?? c.id.split('/').pop() ?? c.id),
      sourceId: c.id,
      vpc: keyOf(c.vpc),
      endpoint,
      role: c.connection.endpointRole,
      database: c.connection.database ?? t.cluster.databaseName ?? literal(c.environment.DB_NAME) ?? 'postgres',
      user: c.connection.user ?? 'postgres',
      tlsMode: c.connection.tls.mode,
      ...(server !== undefined ? { tlsServerEndpoint: server } : {}),
      connectionMode: c.connection.connectionMode,
      ...(c.code !== undefined ? { code: c.code.path } : {}),
      ...(c.code?.handler !== undefined ? { functionHandler: c.code.handler } : {}),
    });
  }
  const consumerVpcs = [...keys].map(([sourceId, key]) => ({ key, sourceId }));
  if (consumerVpcs.length > MAX_CONSUMER_VPCS) problems.push(`${consumerVpcs.length} consumer VPCs: the rehearsal's address plan holds ${MAX_CONSUMER_VPCS}`);
  for (const { key } of consumerVpcs) {
    const count = endpoints.filter((e) => e.vpc === key).length;
    if (count > MAX_ENDPOINTS_PER_VPC) problems.push(`VPC ${key} holds ${count} endpoints: the rehearsal's address plan holds ${MAX_ENDPOINTS_PER_VPC} per consumer VPC`);
  }
  const inData = endpoints.filter((e) => e.vpc === DATA_VPC && !e.isDefault);
  if (inData.length > 0) problems.push(`endpoints ${inData.map((e) => e.name).join(', ')} sit in the data VPC beside the default endpoint: the rehearsal places added endpoints in consumer VPCs only; move them to a consumer VPC`);
  const consumerInData = consumers.filter((c) => c.vpc === DATA_VPC);
  if (consumerInData.length > 0) problems.push(`consumers ${consumerInData.map((c) => c.name).join(', ')} run in the data VPC: the rehearsal runs consumers in consumer VPCs only`);
  const fleet = t.fleet === undefined ? undefined : rehearsedFleet(t.fleet);
  if (problems.length > 0) throw new RehearsalConfigError(problems.map((p) => `--from ${from}: ${p}`));
  return {
    from,
    region: t.region ?? DEFAULT_AWS_REGION,
    proxyName: rdsName(t.proxy.name),
    clusterName: rdsName(t.cluster.identifier ?? t.cluster.id.split('/').pop() ?? 'cluster'),
    database: t.cluster.databaseName ?? consumers[0]?.database ?? 'postgres',
    writerClass: t.cluster.writer.instanceClass,
    readerClasses: t.cluster.readers.map((r) => r.instanceClass),
    endpoints,
    consumerVpcs,
    consumers,
    ...(fleet !== undefined ? { fleet } : {}),
    databaseRoles: databaseRoles(t, consumers),
    roleBootstraps: t.roleBootstraps.map((b) => b.id),
    notReproducible: t.notReproducible,
  };
}

/**
 * The roles the deployment's role bootstraps make, together (READ_WRITE where one makes a name READ_WRITE).
 * A bootstrap whose roles the input does not say (known only at deploy time) makes the consumers' users,
 * as the kit's wiring does; the topology's notes say so.
 */
function databaseRoles(t: DeployedTopology, consumers: ReadonlyArray<RehearsedConsumer>): TopologyRole[] {
  const roles = new Map<string, TopologyRole>();
  const add = (r: TopologyRole): void => {
    if (roles.get(r.name)?.access !== EndpointRole.READ_WRITE) roles.set(r.name, r);
  };
  for (const b of t.roleBootstraps) {
    if (b.roles !== undefined) b.roles.forEach(add);
    else consumers.forEach((c) => add({ name: c.user, access: c.role }));
  }
  return [...roles.values()];
}

/** The fleet's user data and values, split into what the deployment fixes and what AWS fills at deploy time. */
function rehearsedFleet(f: FleetTopology): RehearsedFleet {
  const values: Record<string, string> = {};
  const deployTime: Record<string, string> = {};
  for (const [key, value] of Object.entries(f.values)) {
    if (value.kind === 'literal') values[key] = value.value;
    else deployTime[key] = value.kind === 'unknown' ? value.detail : value.endpoint;
  }
  return { sourceId: f.id, hosts: f.hosts, userData: f.userData, renderer: f.renderer, values, deployTime };
}

/**
 * A rehearsal of the deployment at `from` (a cdk.out directory or a plan's JSON): the deployment, and the
 * settings it fixes (the topology's readers, pool and port, on network namespaces shaped like its VPCs).
 * The caller's own settings (work dir, address block, CPU, max_connections) go on top of `settings`.
 * `terraform`: where a plan was made (its root module's directory and data directory), for the PgBouncer
 * engine's user data template (default: the plan file's directory and TF_DATA_DIR).
 */
export function rehearsalFromDeployment(from: string, terraform?: TerraformWorkingDir): Required<RehearsalSpec> {
  const topology = loadTopology(from, terraform);
  return { settings: { ...settingsFromTopology(topology), network: 'namespaces', coresPerVcpu: DEFAULT_CORES_PER_VCPU }, deployment: deploymentFromTopology(topology, from) };
}

/** What `up --from` prints: the deployment it rehearses and what runs here in place of each AWS service. */
export function formatNotReproduced(d: RehearsedDeployment): string {
  const endpoints = d.endpoints.map((e) => `${e.name} (${e.role}${e.isDefault ? ', default' : ''}, VPC ${e.vpc})`).join(', ');
  return [
    `rehearsing ${d.from}: proxy ${d.proxyName} with endpoints ${endpoints}; ${d.consumers.length} consumers; region ${d.region}`,
    formatRoles(d),
    formatStandIns(d.notReproducible),
  ].join('\n');
}

/** The roles the deployment makes, or why its consumers' logins will fail. */
function formatRoles(d: RehearsedDeployment): string {
  if (d.roleBootstraps.length === 0) {
    return 'no role bootstrap in the deployment: no database role is made, so the consumers\' logins fail as they would on AWS (add a DatabaseRoleBootstrap, or the database-role-bootstrap module)';
  }
  const missing = [...new Set(d.consumers.map((c) => c.user))].filter((u) => !d.databaseRoles.some((r) => r.name === u));
  return [
    `database roles (${d.roleBootstraps.join(', ')}): ${d.databaseRoles.map((r) => `${r.name} (${r.access})`).join(', ') || 'none'}`,
    ...(missing.length > 0 ? [`no role for the consumers' users ${missing.join(', ')}: their logins fail as they would on AWS`] : []),
  ].join('\n');
}

/** The list of what the rehearsal does not run and what stands in for each. */
export function formatStandIns(entries: ReadonlyArray<NotReproducible>): string {
  return ['not reproduced here, and what stands in:', ...entries.map((n) => `  - ${n.what}\n    stand-in: ${n.localStandIn}`)].join('\n');
}

/**
 * What `up` prints of its stand-ins: a rehearsed deployment's list, or without one what every rehearsal
 * stands in for (its endpoints are PgBouncer, where a deployment's RDS Proxy pins sessions).
 */
export function formatUpStandIns(d: RehearsedDeployment | undefined): string {
  if (d !== undefined) return formatNotReproduced(d);
  const pinning = sessionPinning('RDS Proxy');
  return formatStandIns([{ id: pinning.id, what: pinning.what, localStandIn: pinning.localStandIn }]);
}
