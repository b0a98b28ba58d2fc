import * as path from 'path';
import { CloudAssemblyIndex, regionOfEnvironment, type StackTemplate } from '../cloud-assembly';
import { refsIn, templateString } from '../cloud-assembly/intrinsics';
import { type CostEstimate, estimateCost, formatCostEstimate } from '../model/cost-estimate';
import type { DeploymentInventory, InterfaceEndpointUse } from '../model/cost-inventory';
import type { CostEstimateOptions } from '../model/cost-pricing';
import { POOLER_LISTENER_PORTS, POOLER_SESSION_LISTENER_PORTS } from '../model/pgbouncer-hosts';

/**
 * Summarizes what a cloud assembly (cdk.out, read by lib/cloud-assembly) would create. It reads templates
 * only, so it works on any synthesized app of the kit.
 */

type Resources = StackTemplate['resources'];

export interface StackSummary {
  readonly stackName: string;
  readonly templateFile: string;
  readonly resourceCounts: Record<string, number>;
  readonly instanceClasses: Record<string, number>;
  readonly endpoints: Array<{ logicalId: string; role: string; vpc: string }>;
  readonly outputs: Record<string, string>;
  /** What the stack runs that is billed by the hour, for the cost estimate. */
  readonly inventory: DeploymentInventory;
}

export function summarizeAssembly(dir: string): StackSummary[] {
  return CloudAssemblyIndex.read(dir).stacks.map((stack) => summarizeTemplate(stack));
}

/** One stack of the assembly: what it deploys, its endpoints and its estimate in its Region (if it names one). */
export function summarizeTemplate(stack: StackTemplate): StackSummary {
  const stackName = stack.name;
  const region = regionOfEnvironment(stack.environment);
  const resources: Resources = stack.resources;
  const resourceCounts: Record<string, number> = {};
  const instanceClasses: Record<string, number> = {};
  // Which VPC each subnet belongs to, to say where each endpoint sits.
  const subnetVpc: Record<string, string> = {};
  for (const [id, r] of Object.entries(resources)) {
    resourceCounts[r.Type] = (resourceCounts[r.Type] ?? 0) + 1;
    if (r.Type === 'AWS::RDS::DBInstance') {
      const cls = String(r.Properties?.DBInstanceClass);
      instanceClasses[cls] = (instanceClasses[cls] ?? 0) + 1;
    }
    if (r.Type === 'AWS::EC2::Subnet') subnetVpc[id] = refName(r.Properties?.VpcId);
  }
  const vpcLabel = (vpcId: string): string => {
    const cidr = resources[vpcId]?.Properties?.CidrBlock;
    return typeof cidr === 'string' ? `${vpcId} (${cidr})` : vpcId;
  };
  const vpcsOf = (subnets: unknown): string =>
    [...new Set(((subnets as unknown[] | undefined) ?? []).map((s) => vpcLabel(subnetVpc[refName(s)] ?? refName(s))))].join(',');
  // A proxy's own (default) endpoint is READ_WRITE and sits in the proxy's subnets.
  const endpoints = Object.entries(resources)
    .filter(([, r]) => r.Type === 'AWS::RDS::DBProxy' || r.Type === 'AWS::RDS::DBProxyEndpoint')
    .map(([logicalId, r]) => ({
      logicalId: r.Type === 'AWS::RDS::DBProxy' ? `${logicalId} (default)` : logicalId,
      role: String(r.Properties?.TargetRole ?? 'READ_WRITE'),
      vpc: vpcsOf(r.Properties?.VpcSubnetIds),
    }));
  // A PgBouncer engine's endpoints: interface endpoints of the fleet's endpoint service; the port their
  // security group admits clients on says the listener (5432 read/write, 5433 read-only; in session pooling 5434, 5435).
  const services = new Set(Object.entries(resources).filter(([, r]) => r.Type === 'AWS::EC2::VPCEndpointService').map(([id]) => id));
  const roleOfPort = new Map([
    ...Object.entries(POOLER_LISTENER_PORTS).map(([role, port]): [number, string] => [port, role]),
    ...Object.entries(POOLER_SESSION_LISTENER_PORTS).map(([role, port]): [number, string] => [port, `${role} (session pooling)`]),
  ]);
  const admittedPort = (groupId: string): number | undefined =>
    Object.values(resources)
      .filter((r) => r.Type === 'AWS::EC2::SecurityGroupIngress' && JSON.stringify(r.Properties?.GroupId) === JSON.stringify({ 'Fn::GetAtt': [groupId, 'GroupId'] }))
      .map((r) => Number(r.Properties?.FromPort))[0];
  for (const [logicalId, r] of Object.entries(resources)) {
    if (r.Type !== 'AWS::EC2::VPCEndpoint' || !refsIn(r.Properties?.ServiceName).some((id) => services.has(id))) continue;
    const group = ((r.Properties?.SecurityGroupIds as Array<{ 'Fn::GetAtt'?: [string, string] }> | undefined)?.[0]?.['Fn::GetAtt'] ?? [''])[0];
    const port = admittedPort(group);
    endpoints.push({ logicalId: `${logicalId} (PgBouncer)`, role: (port !== undefined && roleOfPort.get(port)) || 'no client admitted yet', vpc: vpcsOf(r.Properties?.SubnetIds) });
  }
  const outputs: Record<string, string> = {};
  for (const [key, o] of Object.entries(stack.outputs)) {
    outputs[key] = typeof o.Value === 'string' ? o.Value : '(resolved at deploy)';
  }
  return { stackName, templateFile: stack.file, resourceCounts, instanceClasses, endpoints, outputs, inventory: inventoryOfTemplate(resources, region, services) };
}

/** What a template runs that is billed by the hour (cost-estimate.ts prices it). */
export function inventoryOfTemplate(resources: Resources, region: string | undefined, endpointServices: ReadonlySet<string>): DeploymentInventory {
  const all = Object.values(resources);
  const ofType = (type: string): Array<{ Type: string; Properties?: Record<string, unknown> }> => all.filter((r) => r.Type === type);
  const cluster = ofType('AWS::RDS::DBCluster')[0];
  const templates = new Map(Object.entries(resources).filter(([, r]) => r.Type === 'AWS::EC2::LaunchTemplate').map(([id, r]) => [id, r]));
  let fleet: DeploymentInventory['fleet'];
  for (const group of ofType('AWS::AutoScaling::AutoScalingGroup')) {
    const ref = refName((group.Properties?.LaunchTemplate as { LaunchTemplateId?: unknown } | undefined)?.LaunchTemplateId);
    const instanceType = (templates.get(ref)?.Properties?.LaunchTemplateData as { InstanceType?: unknown } | undefined)?.InstanceType;
    const hosts = Number(group.Properties?.DesiredCapacity ?? group.Properties?.MinSize);
    if (typeof instanceType === 'string' && Number.isFinite(hosts)) fleet = { hosts: (fleet?.hosts ?? 0) + hosts, instanceType };
  }
  const interfaceEndpoints: InterfaceEndpointUse[] = ofType('AWS::EC2::VPCEndpoint')
    .filter((r) => (r.Properties?.VpcEndpointType ?? 'Gateway') === 'Interface')
    .map((r) => {
      const pooler = refsIn(r.Properties?.ServiceName).some((id) => endpointServices.has(id));
      // com.amazonaws.<region>.<service>: the service is the name's last part.
      const service = pooler ? 'PgBouncer' : (templateString(r.Properties?.ServiceName)?.split('.').pop() ?? 'an AWS service');
      return { service, pooler, azs: ((r.Properties?.SubnetIds as unknown[] | undefined) ?? []).length || undefined };
    });
  return {
    region,
    storageType: cluster ? String(cluster.Properties?.StorageType ?? 'aurora') : undefined,
    instanceClasses: ofType('AWS::RDS::DBInstance').map((r) => String(r.Properties?.DBInstanceClass)),
    rdsProxies: ofType('AWS::RDS::DBProxy').length,
    rdsProxyEndpoints: ofType('AWS::RDS::DBProxyEndpoint').length,
    fleet,
    networkLoadBalancers: ofType('AWS::ElasticLoadBalancingV2::LoadBalancer').filter((r) => r.Properties?.Type === 'network').length,
    interfaceEndpoints,
  };
}

function refName(value: unknown): string {
  if (value && typeof value === 'object' && 'Ref' in value) return String((value as { Ref: unknown }).Ref);
  return JSON.stringify(value);
}

/** A stack's cost estimate; undefined when it runs nothing the estimate prices. */
export function stackCost(s: StackSummary, options: CostEstimateOptions = {}): CostEstimate | undefined {
  const i = s.inventory;
  const billable = i.instanceClasses.length + i.rdsProxies + i.networkLoadBalancers + i.interfaceEndpoints.length + (i.fleet ? 1 : 0);
  return billable > 0 ? estimateCost(i, options) : undefined;
}

export function formatSummary(stacks: StackSummary[], cost: CostEstimateOptions = {}): string {
  const lines: string[] = [];
  for (const s of stacks) {
    const total = Object.values(s.resourceCounts).reduce((a, b) => a + b, 0);
    lines.push(`Stack ${s.stackName} (${path.basename(s.templateFile)}): ${total} resources`);
    lines.push('  Resources per type:');
    for (const [type, n] of Object.entries(s.resourceCounts).sort(([a], [b]) => a.localeCompare(b))) {
      lines.push(`    ${String(n).padStart(4)}  ${type}`);
    }
    lines.push('  Instances:');
    for (const [cls, n] of Object.entries(s.instanceClasses)) lines.push(`    ${n} x ${cls}`);
    const o = s.outputs;
    if (o.TieredCacheGiB) {
      lines.push('  Optimized Reads sizing per instance:');
      lines.push(`    tiered cache      ${o.TieredCacheGiB} GiB`);
      lines.push(`    temporary objects ${o.TemporaryObjectsGiB} GiB`);
      lines.push(`    max_connections   ${o.MaxConnections} (proxy may open ${o.ProxyMaxServerConnections}; ${o.ReservedConnections} reserved for rdsadmin, AWS's automation, the master user and the role bootstrap)`);
    }
    lines.push('  Proxy endpoints:');
    for (const e of s.endpoints) lines.push(`    ${e.logicalId}  ${e.role}  in VPC ${e.vpc}`);
    const estimate = stackCost(s, cost);
    if (estimate) lines.push(formatCostEstimate(estimate));
    lines.push('');
  }
  return lines.join('\n');
}
