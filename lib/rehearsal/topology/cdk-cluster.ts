/** The Aurora cluster of a cloud assembly: its settings, VPC, writer and readers. */
import { POSTGRES_PORT } from '../../model/vocabulary';
import type { CloudAssemblyIndex, LocatedResource } from '../../cloud-assembly';
import { vpcOfSubnets } from './cdk-network';
import { literalString, resolveValue, resourceOfType } from './cfn-intrinsics';
import { TopologyInputError } from './errors';
import type { ClusterTopology, InstanceTopology } from './types';
import { splitWriter, type OrderedInstance } from './writer-order';

/** The one resource of `type` in the assembly; a clear error for none or several. */
export function exactlyOne(assembly: CloudAssemblyIndex, type: string, need: string): LocatedResource {
  const found = assembly.ofType(type);
  if (found.length === 0) throw new TopologyInputError(assembly.files, `no ${type}`, `rehearse needs ${need}`);
  if (found.length > 1) throw new TopologyInputError(assembly.files, `${found.length} ${type} (${found.map((f) => f.id).join(', ')})`, `rehearse models one; synthesize an app with ${need} only`);
  return found[0]!;
}

function numberProperty(assembly: CloudAssemblyIndex, located: LocatedResource, name: string): number | undefined {
  const value = literalString(resolveValue(assembly, located.stack, located.resource.Properties?.[name]));
  return value === undefined || !/^\d+$/.test(value) ? undefined : Number(value);
}

export function readCdkCluster(assembly: CloudAssemblyIndex, cluster: LocatedResource, notes: string[]): ClusterTopology {
  const props = cluster.resource.Properties ?? {};
  const text = (name: string): string | undefined => literalString(resolveValue(assembly, cluster.stack, props[name]));
  const identifier = text('DBClusterIdentifier');
  const members = assembly.ofType('AWS::RDS::DBInstance').filter((i) => {
    const target = resolveValue(assembly, i.stack, i.resource.Properties?.DBClusterIdentifier);
    return resourceOfType(target, 'AWS::RDS::DBCluster')?.id === cluster.id || (identifier !== undefined && literalString(target) === identifier);
  });
  if (members.length === 0) throw new TopologyInputError(cluster.stack.file, `no AWS::RDS::DBInstance in cluster ${cluster.id}`, 'rehearse needs at least the writer instance');
  const ordered = members.map((m): OrderedInstance => {
    const instanceClass = literalString(resolveValue(assembly, m.stack, m.resource.Properties?.DBInstanceClass));
    if (instanceClass === undefined) throw new TopologyInputError(m.stack.file, `instance ${m.id} has no literal DBInstanceClass`, 'give every instance its class');
    const id = literalString(resolveValue(assembly, m.stack, m.resource.Properties?.DBInstanceIdentifier));
    const tier = numberProperty(assembly, m, 'PromotionTier');
    const instance: InstanceTopology = { id: m.id, ...(id !== undefined ? { identifier: id } : {}), instanceClass, ...(tier !== undefined ? { promotionTier: tier } : {}) };
    const dependsOn = [m.resource.DependsOn ?? []].flat().map((logicalId) => `${m.stack.name}/${logicalId}`);
    return { instance, waitsFor: new Set(dependsOn) };
  });
  const { writer, readers, note } = splitWriter(cluster.id, ordered);
  if (note) notes.push(note);
  const subnetGroup = resourceOfType(resolveValue(assembly, cluster.stack, props.DBSubnetGroupName), 'AWS::RDS::DBSubnetGroup');
  const network = subnetGroup ? vpcOfSubnets(assembly, subnetGroup.stack, subnetGroup.resource.Properties?.SubnetIds) : { problem: 'its DBSubnetGroupName is not a subnet group of the assembly' };
  if (network.problem) notes.push(`VPC of ${cluster.id} unknown: ${network.problem}`);
  const engine = text('Engine');
  if (engine === undefined) throw new TopologyInputError(cluster.stack.file, `cluster ${cluster.id} has no literal Engine`, 'set the engine (aurora-postgresql)');
  const engineVersion = text('EngineVersion');
  const databaseName = text('DatabaseName');
  return {
    id: cluster.id,
    ...(identifier !== undefined ? { identifier } : {}),
    engine,
    ...(engineVersion !== undefined ? { engineVersion } : {}),
    port: numberProperty(assembly, cluster, 'Port') ?? POSTGRES_PORT,
    ...(databaseName !== undefined ? { databaseName } : {}),
    ...(network.vpc !== undefined ? { vpc: network.vpc } : {}),
    writer,
    readers,
  };
}
