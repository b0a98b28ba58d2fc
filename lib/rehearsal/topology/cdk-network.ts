/**
 * The VPCs of a cloud assembly, and which VPC a list of subnets (a proxy's, an endpoint's, a function's,
 * a subnet group's) lies in: each subnet's VpcId, followed structurally to its AWS::EC2::VPC.
 */
import type { CloudAssemblyIndex, StackTemplate } from '../../cloud-assembly';
import { describeResolved, literalString, resolveList, resolveValue, resourceOfType } from './cfn-intrinsics';
import type { VpcTopology } from './types';

export function assemblyVpcs(assembly: CloudAssemblyIndex): VpcTopology[] {
  return assembly.ofType('AWS::EC2::VPC').map(({ stack, resource, id }) => {
    const props = resource.Properties ?? {};
    const cidr = literalString(resolveValue(assembly, stack, props.CidrBlock));
    const tags = (Array.isArray(props.Tags) ? props.Tags : []) as Array<{ Key?: unknown; Value?: unknown }>;
    const name = tags.find((t) => t.Key === 'Name');
    const nameValue = name ? literalString(resolveValue(assembly, stack, name.Value)) : undefined;
    return { id, ...(nameValue !== undefined ? { name: nameValue } : {}), ...(cidr !== undefined ? { cidr } : {}) };
  });
}

/** The VPC id of the subnets, or why it is not known (imported subnets, subnets of several VPCs). */
export function vpcOfSubnets(assembly: CloudAssemblyIndex, stack: StackTemplate, subnets: unknown): { vpc?: string; problem?: string } {
  const vpcs = new Set<string>();
  for (const subnet of resolveList(assembly, stack, subnets)) {
    const resource = resourceOfType(subnet, 'AWS::EC2::Subnet');
    if (!resource) return { problem: `subnet ${describeResolved(subnet)} is not a subnet of the assembly` };
    const vpc = resolveValue(assembly, resource.stack, resource.resource.Properties?.VpcId);
    const vpcResource = resourceOfType(vpc, 'AWS::EC2::VPC');
    if (!vpcResource) return { problem: `subnet ${resource.id} lies in ${describeResolved(vpc)}, not a VPC of the assembly` };
    vpcs.add(vpcResource.id);
  }
  if (vpcs.size === 0) return { problem: 'no subnets are given' };
  if (vpcs.size > 1) return { problem: `its subnets lie in several VPCs (${[...vpcs].join(', ')})` };
  return { vpc: [...vpcs][0] };
}
