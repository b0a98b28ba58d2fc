/** The RDS Proxy of a cloud assembly: its settings, pool, default endpoint and the endpoints beside it. */
import { ENDPOINT_ROLES, EndpointRole } from '../../../lambda/src/environment';
import type { PoolSettings } from '../../model/sizing';
import type { CloudAssemblyIndex, LocatedResource } from '../../cloud-assembly';
import { vpcOfSubnets } from './cdk-network';
import { defaultEndpointId } from './endpoint-ids';
import { literalString, resolveList, resolveValue, resourceOfType, type Resolved } from './cfn-intrinsics';
import { TopologyInputError } from './errors';
import { poolWithDefaults } from './pool-defaults';
import type { ClusterTopology, ProxyEndpointTopology, ProxyTopology } from './types';

/** Whether `value` names the proxy: a Ref to it, or its literal DBProxyName. */
function namesProxy(value: Resolved, proxy: LocatedResource, proxyName: string): boolean {
  return resourceOfType(value, 'AWS::RDS::DBProxy')?.id === proxy.id || literalString(value) === proxyName;
}

function pool(assembly: CloudAssemblyIndex, proxy: LocatedResource, proxyName: string, cluster: ClusterTopology) {
  const groups = assembly.ofType('AWS::RDS::DBProxyTargetGroup').filter((g) => namesProxy(resolveValue(assembly, g.stack, g.resource.Properties?.DBProxyName), proxy, proxyName));
  if (groups.length === 0) throw new TopologyInputError(proxy.stack.file, `no AWS::RDS::DBProxyTargetGroup for proxy ${proxy.id}`, 'rehearse needs the proxy\'s target group: register the cluster as its target (it carries the pool settings)');
  const group = groups[0]!;
  const targets = resolveList(assembly, group.stack, group.resource.Properties?.DBClusterIdentifiers);
  const targetsCluster = targets.some((t) => resourceOfType(t, 'AWS::RDS::DBCluster')?.id === cluster.id || (cluster.identifier !== undefined && literalString(t) === cluster.identifier));
  if (!targetsCluster) throw new TopologyInputError(group.stack.file, `target group ${group.id} does not target cluster ${cluster.id}`, 'rehearse needs the proxy in front of the cluster: list it in DBClusterIdentifiers');
  const info = (group.resource.Properties?.ConnectionPoolConfigurationInfo ?? {}) as Record<string, unknown>;
  const num = (key: string): number | undefined => {
    const value = literalString(resolveValue(assembly, group.stack, info[key]));
    return value === undefined ? undefined : Number(value);
  };
  const given: Partial<PoolSettings> & { initQuery?: string } = {};
  const set = <K extends keyof PoolSettings>(key: K, value: number | undefined): void => {
    if (value !== undefined) (given as Record<string, number>)[key] = value;
  };
  set('maxConnectionsPercent', num('MaxConnectionsPercent'));
  set('maxIdleConnectionsPercent', num('MaxIdleConnectionsPercent'));
  set('connectionBorrowTimeoutSeconds', num('ConnectionBorrowTimeout'));
  const initQuery = literalString(resolveValue(assembly, group.stack, info.InitQuery));
  return poolWithDefaults(initQuery !== undefined ? { ...given, initQuery } : given);
}

export function readCdkProxy(assembly: CloudAssemblyIndex, proxy: LocatedResource, cluster: ClusterTopology, notes: string[]): { proxy: ProxyTopology; endpoints: ProxyEndpointTopology[] } {
  const props = proxy.resource.Properties ?? {};
  const text = (name: string): string | undefined => literalString(resolveValue(assembly, proxy.stack, props[name]));
  const name = text('DBProxyName');
  if (name === undefined) throw new TopologyInputError(proxy.stack.file, `proxy ${proxy.id} has no literal DBProxyName`, 'name the proxy');
  const network = vpcOfSubnets(assembly, proxy.stack, props.VpcSubnetIds);
  if (network.problem) notes.push(`VPC of ${proxy.id} unknown: ${network.problem}`);
  const defaultEndpoint: ProxyEndpointTopology = { id: defaultEndpointId(proxy.id), name, role: EndpointRole.READ_WRITE, isDefault: true, ...(network.vpc ? { vpc: network.vpc } : {}) };
  const others = assembly
    .ofType('AWS::RDS::DBProxyEndpoint')
    .filter((e) => namesProxy(resolveValue(assembly, e.stack, e.resource.Properties?.DBProxyName), proxy, name))
    .map((e): ProxyEndpointTopology => {
      const endpointProps = e.resource.Properties ?? {};
      const endpointName = literalString(resolveValue(assembly, e.stack, endpointProps.DBProxyEndpointName)) ?? e.logicalId;
      // CloudFormation's TargetRole defaults to READ_WRITE.
      const role = literalString(resolveValue(assembly, e.stack, endpointProps.TargetRole)) ?? 'READ_WRITE';
      if (!(ENDPOINT_ROLES as readonly string[]).includes(role)) throw new TopologyInputError(e.stack.file, `endpoint ${e.id} has TargetRole ${role}`, `use one of ${ENDPOINT_ROLES.join(', ')}`);
      const where = vpcOfSubnets(assembly, e.stack, endpointProps.VpcSubnetIds);
      if (where.problem) notes.push(`VPC of ${e.id} unknown: ${where.problem}`);
      return { id: e.id, name: endpointName, role: role as EndpointRole, isDefault: false, ...(where.vpc ? { vpc: where.vpc } : {}) };
    });
  const timeout = text('IdleClientTimeout');
  return {
    proxy: {
      id: proxy.id,
      name,
      engineFamily: text('EngineFamily') ?? 'unknown',
      ...(network.vpc ? { vpc: network.vpc } : {}),
      requireTls: text('RequireTLS') === 'true',
      // Without DefaultAuthScheme the proxy logs in with the Secrets Manager secrets of its Auth entries.
      authScheme: text('DefaultAuthScheme') ?? 'NONE',
      ...(timeout !== undefined ? { idleClientTimeoutSeconds: Number(timeout) } : {}),
      defaultEndpoint: defaultEndpoint.id,
      pool: pool(assembly, proxy, name, cluster),
    },
    endpoints: [defaultEndpoint, ...others],
  };
}
