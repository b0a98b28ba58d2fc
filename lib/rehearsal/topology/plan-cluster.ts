/** The Aurora cluster of a plan: its settings, VPC, writer and readers. */
import { POSTGRES_PORT } from '../../model/vocabulary';
import { TopologyInputError } from './errors';
import { modulePrefix } from '../../terraform/plan-json';
import type { PlanIndex, PlanResource } from './plan-index';
import type { PlanNetwork } from './plan-network';
import type { ClusterTopology, InstanceTopology } from './types';
import { splitWriter, type OrderedInstance } from './writer-order';

/** The one managed resource of `type` in the plan; a clear error for none or several. */
export function exactlyOnePlanned(index: PlanIndex, type: string, need: string): PlanResource {
  const found = index.managed(type);
  if (found.length === 0) throw new TopologyInputError(index.file, `no ${type}`, `rehearse needs ${need}`);
  if (found.length > 1) throw new TopologyInputError(index.file, `${found.length} ${type} (${found.map((f) => f.address).join(', ')})`, `rehearse models one; plan a configuration with ${need} only`);
  return found[0]!;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** The absolute configuration addresses a resource is created after: its own depends_on and its enclosing module calls'. */
function dependsOn(index: PlanIndex, r: PlanResource): string[] {
  const own = (r.config?.depends_on ?? []).map((d) => `${modulePrefix(r.modulePath)}${d}`);
  const calls = r.modulePath.flatMap((_, i) => (index.moduleCall(r.modulePath.slice(0, i + 1))?.depends_on ?? []).map((d) => `${modulePrefix(r.modulePath.slice(0, i))}${d}`));
  return [...own, ...calls];
}

const configAddress = (r: PlanResource): string => `${modulePrefix(r.modulePath)}${r.type}.${r.name}`;
const within = (address: string, prefix: string): boolean => address === prefix || address.startsWith(`${prefix}.`) || address.startsWith(`${prefix}[`);

export function readPlanCluster(index: PlanIndex, cluster: PlanResource, network: PlanNetwork, notes: string[]): ClusterTopology {
  const v = cluster.values;
  const identifier = str(v.cluster_identifier);
  // An instance's cluster_identifier is usually known only after apply; one that is known must match.
  const members = index.managed('aws_rds_cluster_instance').filter((i) => {
    const target = str(i.values.cluster_identifier);
    return target === undefined || target === identifier;
  });
  if (members.length === 0) throw new TopologyInputError(index.file, `no aws_rds_cluster_instance in cluster ${cluster.address}`, 'rehearse needs at least the writer instance');
  const ordered = members.map((m): OrderedInstance => {
    const instanceClass = str(m.values.instance_class);
    if (instanceClass === undefined) throw new TopologyInputError(index.file, `instance ${m.address} has no instance_class known at plan`, 'give every instance its class');
    const id = str(m.values.identifier);
    const tier = num(m.values.promotion_tier);
    const instance: InstanceTopology = { id: m.address, ...(id !== undefined ? { identifier: id } : {}), instanceClass, ...(tier !== undefined ? { promotionTier: tier } : {}) };
    const deps = dependsOn(index, m);
    const waitsFor = new Set(members.filter((o) => o !== m && deps.some((d) => within(configAddress(o), d) || within(o.address, d))).map((o) => o.address));
    return { instance, waitsFor };
  });
  const { writer, readers, note } = splitWriter(cluster.address, ordered);
  if (note) notes.push(note);
  const placement = network.vpcOf(cluster);
  if (placement.problem) notes.push(`VPC of ${cluster.address} unknown: ${placement.problem}`);
  const engine = str(v.engine);
  if (engine === undefined) throw new TopologyInputError(index.file, `cluster ${cluster.address} has no engine known at plan`, 'set the engine (aurora-postgresql)');
  const engineVersion = str(v.engine_version);
  const databaseName = str(v.database_name);
  return {
    id: cluster.address,
    ...(identifier !== undefined ? { identifier } : {}),
    engine,
    ...(engineVersion !== undefined ? { engineVersion } : {}),
    port: num(v.port) ?? POSTGRES_PORT,
    ...(databaseName !== undefined ? { databaseName } : {}),
    ...(placement.vpc !== undefined ? { vpc: placement.vpc } : {}),
    writer,
    readers,
  };
}
