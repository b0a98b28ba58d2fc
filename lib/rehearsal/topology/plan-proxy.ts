/** The RDS Proxy of a plan: its settings, pool, default endpoint and the endpoints beside it. */
import { ENDPOINT_ROLES, EndpointRole } from '../../../lambda/src/environment';
import type { PoolSettings } from '../../model/sizing';
import { defaultEndpointId } from './endpoint-ids';
import { TopologyInputError } from './errors';
import { valueAt } from '../../terraform/plan-json';
import type { PlanIndex, PlanResource } from './plan-index';
import type { PlanNetwork } from './plan-network';
import { poolWithDefaults } from './pool-defaults';
import type { ClusterTopology, ProxyEndpointTopology, ProxyTopology } from './types';

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** Resources of `type` whose `db_proxy_name` is the proxy's, or not known until apply (the plan has one proxy). */
function ofProxy(index: PlanIndex, type: string, proxyName: string): PlanResource[] {
  return index.managed(type).filter((r) => {
    const name = str(r.values.db_proxy_name);
    return name === undefined || name === proxyName;
  });
}

function pool(index: PlanIndex, proxy: PlanResource, proxyName: string, cluster: ClusterTopology) {
  const group = ofProxy(index, 'aws_db_proxy_default_target_group', proxyName)[0];
  if (!group) throw new TopologyInputError(index.file, `no aws_db_proxy_default_target_group for proxy ${proxy.address}`, 'rehearse needs the proxy\'s default target group (it carries the pool settings)');
  const targets = ofProxy(index, 'aws_db_proxy_target', proxyName);
  const ofCluster = targets.filter((t) => {
    const target = str(t.values.db_cluster_identifier);
    return target === undefined || target === cluster.identifier;
  });
  if (ofCluster.length === 0) throw new TopologyInputError(index.file, `no aws_db_proxy_target registering cluster ${cluster.id} with proxy ${proxy.address}`, 'rehearse needs the proxy in front of the cluster: register it as the target');
  const config = (valueAt(group.values, ['connection_pool_config', 0]) ?? {}) as Record<string, unknown>;
  const given: Partial<Record<keyof PoolSettings, number>> = {};
  const set = (key: keyof PoolSettings, value: number | undefined): void => {
    if (value !== undefined) given[key] = value;
  };
  set('maxConnectionsPercent', num(config.max_connections_percent));
  set('maxIdleConnectionsPercent', num(config.max_idle_connections_percent));
  set('connectionBorrowTimeoutSeconds', num(config.connection_borrow_timeout));
  const initQuery = str(config.init_query);
  return poolWithDefaults(initQuery !== undefined ? { ...given, initQuery } : given);
}

export interface PlannedProxy {
  readonly proxy: ProxyTopology;
  readonly endpoints: ProxyEndpointTopology[];
  /** Why an endpoint's VPC is not known, by endpoint id; the consumers may still place it. */
  readonly endpointVpcProblems: Map<string, string>;
}

export function readPlanProxy(index: PlanIndex, proxy: PlanResource, cluster: ClusterTopology, network: PlanNetwork, notes: string[]): PlannedProxy {
  const v = proxy.values;
  const name = str(v.name);
  if (name === undefined) throw new TopologyInputError(index.file, `proxy ${proxy.address} has no name known at plan`, 'name the proxy');
  const placement = network.vpcOf(proxy);
  if (placement.problem) notes.push(`VPC of ${proxy.address} unknown: ${placement.problem}`);
  const defaultEndpoint: ProxyEndpointTopology = { id: defaultEndpointId(proxy.address), name, role: EndpointRole.READ_WRITE, isDefault: true, ...(placement.vpc ? { vpc: placement.vpc } : {}) };
  const endpointVpcProblems = new Map<string, string>();
  const others = ofProxy(index, 'aws_db_proxy_endpoint', name).map((e): ProxyEndpointTopology => {
    // The provider's target_role defaults to READ_WRITE.
    const role = str(e.values.target_role) ?? 'READ_WRITE';
    if (!(ENDPOINT_ROLES as readonly string[]).includes(role)) throw new TopologyInputError(index.file, `endpoint ${e.address} has target_role ${role}`, `use one of ${ENDPOINT_ROLES.join(', ')}`);
    const where = network.vpcOf(e);
    if (where.problem) endpointVpcProblems.set(e.address, where.problem);
    return {
      id: e.address,
      name: str(e.values.db_proxy_endpoint_name) ?? e.address,
      role: role as EndpointRole,
      isDefault: false,
      ...(where.vpc ? { vpc: where.vpc } : {}),
    };
  });
  const auth = str(v.default_auth_scheme);
  const timeout = num(v.idle_client_timeout);
  return {
    proxy: {
      id: proxy.address,
      name,
      engineFamily: str(v.engine_family) ?? 'unknown',
      ...(placement.vpc ? { vpc: placement.vpc } : {}),
      requireTls: v.require_tls === true,
      authScheme: auth ?? 'NONE',
      ...(timeout !== undefined ? { idleClientTimeoutSeconds: timeout } : {}),
      defaultEndpoint: defaultEndpoint.id,
      pool: pool(index, proxy, name, cluster),
    },
    endpoints: [defaultEndpoint, ...others],
    endpointVpcProblems,
  };
}
