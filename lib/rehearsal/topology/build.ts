/**
 * What both readers build the topology with. Each flavour extracts a small record per concept from its
 * artifact (cdk.ts from a cloud assembly, plan.ts from a plan); one function here turns the record into its
 * piece of the DeployedTopology, with the same checks, errors and notes for both.
 */
import { EndpointRole, ENDPOINT_ROLES } from '../../../lambda/src/environment';
import type { PoolSettings } from '../../model/sizing';
import { POSTGRES_PORT } from '../../model/vocabulary';
import { TopologyInputError } from './errors';
import { notReproducible, type DeploymentEvidence } from './not-reproducible';
import type { ClusterTopology, DeployedTopology, FleetTopology, InstanceTopology, ProxyEndpointTopology, ProxyPoolTopology, ProxyTopology } from './types';

/** The object without its undefined fields (an optional field the input does not give is absent, not undefined). */
export function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** The one resource of `type`; a clear error for none or several. `made` says how an input with only that one is made. */
export function exactlyOne<T>(found: ReadonlyArray<T>, idOf: (t: T) => string, type: string, file: string, need: string, made: string): T {
  if (found.length === 0) throw new TopologyInputError(file, `no ${type}`, `rehearse needs ${need}`);
  if (found.length > 1) throw new TopologyInputError(file, `${found.length} ${type} (${found.map(idOf).join(', ')})`, `rehearse models one; ${made} with ${need} only`);
  return found[0]!;
}

/** Where a resource lies: its VPC's id, or why it is not known. */
export interface Placement {
  readonly vpc?: string;
  readonly problem?: string;
}

/** How a flavour says that a resource lacks a value: `no literal Engine`, `no engine known at plan`. */
export type Lacks = (property: string) => string;

/** An instance as the input gives it, and the ids of the cluster's other instances it is created after. */
export type InstanceRecord = Partial<InstanceTopology> & { readonly id: string; readonly file: string; readonly waitsFor: ReadonlySet<string> };

export type ClusterRecord = Partial<Omit<ClusterTopology, 'vpc' | 'writer' | 'readers'>> & {
  readonly id: string;
  readonly file: string;
  readonly lacks: Lacks;
  /** The flavour's names: its instance resource type and its properties for the instance class and engine. */
  readonly names: { readonly instanceType: string; readonly instanceClass: string; readonly engine: string };
  readonly placement: Placement;
  readonly instances: ReadonlyArray<InstanceRecord>;
};

export function buildCluster(c: ClusterRecord, notes: string[]): ClusterTopology {
  if (c.instances.length === 0) throw new TopologyInputError(c.file, `no ${c.names.instanceType} in cluster ${c.id}`, 'rehearse needs at least the writer instance');
  const instances = c.instances.map(({ id, file, identifier, instanceClass, promotionTier, waitsFor }) => {
    if (instanceClass === undefined) throw new TopologyInputError(file, `instance ${id} has ${c.lacks(c.names.instanceClass)}`, 'give every instance its class');
    return { instance: compact<InstanceTopology>({ id, identifier, instanceClass, promotionTier }), waitsFor };
  });
  const { writer, readers, note } = splitWriter(c.id, instances);
  if (note) notes.push(note);
  if (c.placement.problem) notes.push(`VPC of ${c.id} unknown: ${c.placement.problem}`);
  if (c.engine === undefined) throw new TopologyInputError(c.file, `cluster ${c.id} has ${c.lacks(c.names.engine)}`, 'set the engine (aurora-postgresql)');
  const { id, identifier, engine, engineVersion, databaseName } = c;
  return compact<ClusterTopology>({ id, identifier, engine, engineVersion, port: c.port ?? POSTGRES_PORT, databaseName, vpc: c.placement.vpc, writer, readers });
}

/**
 * Which of a cluster's instances is the writer. Aurora makes the first instance created in a cluster its
 * writer, and both flavours order creation explicitly (CDK: the readers DependsOn the writer; Terraform:
 * the readers' module depends_on the writer's), so the writer is the instance that waits for no other.
 * When that does not single one out, the lowest promotion tier decides, and a note says so.
 */
function splitWriter(clusterId: string, instances: ReadonlyArray<{ instance: InstanceTopology; waitsFor: ReadonlySet<string> }>): { writer: InstanceTopology; readers: InstanceTopology[]; note?: string } {
  const first = instances.filter((i) => ![...i.waitsFor].some((id) => id !== i.instance.id && instances.some((o) => o.instance.id === id)));
  const pool = first.length > 0 ? first : instances;
  const tier = (i: { instance: InstanceTopology }): number => i.instance.promotionTier ?? Number.MAX_SAFE_INTEGER;
  const writer = first.length === 1 ? first[0]!.instance : [...pool].sort((a, b) => tier(a) - tier(b))[0]!.instance;
  const readers = instances.map((i) => i.instance).filter((i) => i !== writer);
  if (first.length === 1) return { writer, readers };
  return { writer, readers, note: `${clusterId}: no creation order singles out the writer among ${pool.map((i) => i.instance.id).join(', ')}; took ${writer.id}, the lowest promotion tier` };
}

/**
 * RDS Proxy's pool defaults for the settings a template or plan leaves out (the kit's constructs and
 * modules always set all three; a hand-written proxy may not). Source: RDS API reference,
 * ConnectionPoolConfiguration (docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_ConnectionPoolConfiguration.html):
 * MaxConnectionsPercent 100 for every engine but SQL Server; MaxIdleConnectionsPercent half of
 * MaxConnectionsPercent, or 50 when that is not given either; ConnectionBorrowTimeout 120 s.
 */
export const RDS_PROXY_DEFAULT_MAX_CONNECTIONS_PERCENT = 100;
export const RDS_PROXY_DEFAULT_IDLE_WITHOUT_MAX_PERCENT = 50;
export const RDS_PROXY_DEFAULT_BORROW_TIMEOUT_SECONDS = 120;

/** The pool as given, with RDS Proxy's defaults for what is missing, recording which were filled. */
export function poolWithDefaults(given: GivenPool): ProxyPoolTopology {
  const defaulted: Array<keyof PoolSettings> = [];
  const pick = (key: keyof PoolSettings, fallback: number): number => {
    const value = given[key];
    if (value !== undefined) return value;
    defaulted.push(key);
    return fallback;
  };
  const maxConnectionsPercent = pick('maxConnectionsPercent', RDS_PROXY_DEFAULT_MAX_CONNECTIONS_PERCENT);
  const idleFallback = given.maxConnectionsPercent !== undefined ? Math.floor(given.maxConnectionsPercent / 2) : RDS_PROXY_DEFAULT_IDLE_WITHOUT_MAX_PERCENT;
  const maxIdleConnectionsPercent = pick('maxIdleConnectionsPercent', idleFallback);
  const connectionBorrowTimeoutSeconds = pick('connectionBorrowTimeoutSeconds', RDS_PROXY_DEFAULT_BORROW_TIMEOUT_SECONDS);
  const initQuery = given.initQuery !== '' ? given.initQuery : undefined;
  return compact<ProxyPoolTopology>({ maxConnectionsPercent, maxIdleConnectionsPercent, connectionBorrowTimeoutSeconds, initQuery, defaulted });
}

/** A proxy's default endpoint has no resource of its own in either flavour: it is named after its proxy. */
export function defaultEndpointId(proxyId: string): string {
  return `${proxyId}#default`;
}

export interface EndpointRecord {
  readonly id: string;
  readonly file: string;
  readonly name: string;
  /** The role as the input gives it (both flavours default to READ_WRITE). */
  readonly role: string;
  readonly placement: Placement;
}

/** The settings a pool's input gives (the rest take RDS Proxy's defaults). */
export type GivenPool = Partial<PoolSettings> & { readonly initQuery?: string };

/** An RDS Proxy: its settings as the input gives them, its other endpoints, and its pool (read when the rest holds). */
export type ProxyRecord = Partial<Pick<ProxyTopology, 'name' | 'engineFamily' | 'authScheme' | 'idleClientTimeoutSeconds'>> & {
  readonly id: string;
  readonly file: string;
  readonly lacks: Lacks;
  /** The flavour's names of the proxy's name property and of an endpoint's role property. */
  readonly names: { readonly name: string; readonly role: string };
  readonly requireTls: boolean;
  readonly placement: Placement;
  readonly endpoints: ReadonlyArray<EndpointRecord>;
  readonly pool: () => GivenPool;
};

export interface PoolingTier {
  readonly proxy: ProxyTopology;
  /** The default endpoint first. */
  readonly endpoints: ProxyEndpointTopology[];
  /** Why an endpoint's VPC is not known, by endpoint id. */
  readonly endpointVpcProblems: Map<string, string>;
  readonly fleet?: FleetTopology;
}

export function buildProxy(p: ProxyRecord, notes: string[]): PoolingTier {
  if (p.name === undefined) throw new TopologyInputError(p.file, `proxy ${p.id} has ${p.lacks(p.names.name)}`, 'name the proxy');
  if (p.placement.problem) notes.push(`VPC of ${p.id} unknown: ${p.placement.problem}`);
  const defaultEndpoint = compact<ProxyEndpointTopology>({ id: defaultEndpointId(p.id), name: p.name, role: EndpointRole.READ_WRITE, isDefault: true, vpc: p.placement.vpc });
  const endpointVpcProblems = new Map<string, string>();
  const others = p.endpoints.map((e) => {
    if (!(ENDPOINT_ROLES as readonly string[]).includes(e.role)) throw new TopologyInputError(e.file, `endpoint ${e.id} has ${p.names.role} ${e.role}`, `use one of ${ENDPOINT_ROLES.join(', ')}`);
    if (e.placement.problem) endpointVpcProblems.set(e.id, e.placement.problem);
    return compact<ProxyEndpointTopology>({ id: e.id, name: e.name, role: e.role as EndpointRole, isDefault: false, vpc: e.placement.vpc });
  });
  const { id, name, idleClientTimeoutSeconds } = p;
  const proxy = compact<ProxyTopology>({
    id,
    name,
    engineFamily: p.engineFamily ?? 'unknown',
    vpc: p.placement.vpc,
    requireTls: p.requireTls,
    // Without a default auth scheme the proxy logs in with the Secrets Manager secrets of its auth entries.
    authScheme: p.authScheme ?? 'NONE',
    idleClientTimeoutSeconds,
    defaultEndpoint: defaultEndpoint.id,
    pool: poolWithDefaults(p.pool()),
  });
  return { proxy, endpoints: [defaultEndpoint, ...others], endpointVpcProblems };
}

/**
 * The PgBouncer engine's fleet as the pooling tier, in the engine-neutral terms the consumers use: the load
 * balancer is its default endpoint (read/write, like RDS Proxy's), its interface endpoints the others, and the
 * pool settings are the user data's values.
 */
export function fleetTier(fleet: FleetTopology, name: string, vpc: string | undefined, endpoints: ProxyEndpointTopology[], endpointVpcProblems = new Map<string, string>()): PoolingTier {
  const literal = (key: string): number | undefined => (fleet.values[key]?.kind === 'literal' ? Number((fleet.values[key] as { value: string }).value) : undefined);
  const defaultEndpoint = compact<ProxyEndpointTopology>({ id: defaultEndpointId(fleet.id), name, role: EndpointRole.READ_WRITE, isDefault: true, vpc });
  const proxy = compact<ProxyTopology>({
    id: fleet.id,
    name,
    engineFamily: 'POSTGRESQL',
    vpc,
    // The engine's listeners take TLS only (client_tls_sslmode = require) and log in with SCRAM passwords.
    requireTls: true,
    authScheme: 'NONE',
    defaultEndpoint: defaultEndpoint.id,
    pool: poolWithDefaults(compact({ maxConnectionsPercent: literal('MaxConnectionsPercent'), maxIdleConnectionsPercent: literal('MaxIdleConnectionsPercent'), connectionBorrowTimeoutSeconds: literal('BorrowTimeoutSeconds') })),
  });
  return { proxy, endpoints: [defaultEndpoint, ...endpoints], endpointVpcProblems, fleet };
}

/** The topology from its pieces; the not-reproducible entries from the evidence and the pieces' facts. */
export function assembleTopology(
  pieces: Omit<DeployedTopology, 'notReproducible' | 'proxy' | 'endpoints' | 'fleet'> & { readonly tier: PoolingTier; readonly endpoints: ReadonlyArray<ProxyEndpointTopology>; readonly evidence: DeploymentEvidence },
): DeployedTopology {
  const { source, region, cluster, tier, endpoints, vpcs, consumers, roleBootstraps, evidence, notes } = pieces;
  const engine = tier.fleet !== undefined ? 'pgbouncer' : 'rds-proxy';
  const instanceClasses = [cluster.writer, ...cluster.readers].map((i) => i.instanceClass);
  const facts = { engine, proxyName: tier.proxy.name, requireTls: tier.proxy.requireTls, instanceClasses, consumers } as const;
  return compact<DeployedTopology>({ source, region, cluster, proxy: tier.proxy, endpoints, vpcs, consumers, fleet: tier.fleet, roleBootstraps, notReproducible: notReproducible(evidence, facts), notes });
}
