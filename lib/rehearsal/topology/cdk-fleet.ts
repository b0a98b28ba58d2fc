/**
 * The PgBouncer engine's fleet in a cloud assembly: the Auto Scaling group, its launch template's user data
 * (Fn::Base64 of Fn::Sub: the bootstrap's text and its substitution values), and the interface endpoints of the
 * fleet's endpoint service in the consumer VPCs.
 */
import { ENDPOINT_ROLES, ENV_VARS, EndpointRole } from '../../../lambda/src/environment';
import { BOOTSTRAP_PLACEHOLDERS } from '../../model/pgbouncer-bootstrap';
import type { CloudAssemblyIndex } from '../../cloud-assembly';
import { describeResolved, interfaceEndpointOfHost, refsIn, resolveValue, resourceOfType, substitution, vpcOfSubnets, wholeNumberProperty } from '../../cloud-assembly/intrinsics';
import { compact, exactlyOne, fleetTier, type PoolingTier } from './build';
import { TopologyInputError } from './errors';
import type { EnvValue, ProxyEndpointTopology } from './types';

export function readCdkFleet(assembly: CloudAssemblyIndex, notes: string[]): PoolingTier {
  const type = 'AWS::AutoScaling::AutoScalingGroup';
  const group = exactlyOne(assembly.ofType(type), (r) => r.id, type, assembly.files, 'the PgBouncer engine\'s Auto Scaling group (a PgBouncerProxy)', 'synthesize an app');
  const props = group.resource.Properties ?? {};
  const template = resourceOfType(resolveValue(assembly, group.stack, (props.LaunchTemplate as { LaunchTemplateId?: unknown } | undefined)?.LaunchTemplateId), 'AWS::EC2::LaunchTemplate');
  if (template === undefined) throw new TopologyInputError(group.stack.file, `Auto Scaling group ${group.id} names no AWS::EC2::LaunchTemplate of the assembly`, 'rehearse boots the hosts from the launch template PgBouncerProxy makes');
  const userData = substitution((template.resource.Properties?.LaunchTemplateData as { UserData?: unknown } | undefined)?.UserData);
  if (userData === undefined) throw new TopologyInputError(template.stack.file, `launch template ${template.id} has no user data of the form Fn::Base64 { Fn::Sub }`, 'rehearse boots the fleet\'s hosts from the user data the PgBouncerProxy construct renders');
  const values: Record<string, EnvValue> = {};
  for (const [key, raw] of Object.entries(userData.values)) {
    const resolved = resolveValue(assembly, template.stack, raw);
    // A literal, or a value AWS fills in at deploy time (the rehearsal fills its own).
    values[key] = resolved.kind === 'literal' ? { kind: 'literal', value: String(resolved.value) } : { kind: 'unknown', detail: describeResolved(resolved) };
  }
  const missing = Object.values(BOOTSTRAP_PLACEHOLDERS).map((p) => p.slice(2, -1)).filter((name) => values[name] === undefined);
  if (missing.length > 0) throw new TopologyInputError(template.stack.file, `the user data of ${template.id} does not substitute ${missing.join(', ')}`, 'synthesize with the kit\'s PgBouncerProxy of this version: its bootstrap takes exactly these values');
  const hosts = wholeNumberProperty(assembly, group, 'DesiredCapacity') ?? wholeNumberProperty(assembly, group, 'MinSize');
  if (hosts === undefined || hosts < 1) throw new TopologyInputError(group.stack.file, `Auto Scaling group ${group.id} has no literal DesiredCapacity or MinSize`, 'give the fleet a fixed host count');
  const network = vpcOfSubnets(assembly, group.stack, props.VPCZoneIdentifier);
  if (network.problem) notes.push(`VPC of ${group.id} unknown: ${network.problem}`);

  // The interface endpoints of the fleet's endpoint service, each with the role its consumers reach it for.
  const services = new Set(assembly.ofType('AWS::EC2::VPCEndpointService').map((s) => s.logicalId));
  const consumers = assembly.ofType('AWS::Lambda::Function').map((f) => ({ f, vars: ((f.resource.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {}) as Record<string, unknown> }));
  const endpoints = assembly
    .ofType('AWS::EC2::VPCEndpoint')
    .filter((e) => refsIn(e.resource.Properties?.ServiceName).some((ref) => services.has(ref)))
    .map((e): ProxyEndpointTopology => {
      // Its consumers, in its stack or in another one of the assembly.
      const roles = new Set(consumers.filter(({ f, vars }) => interfaceEndpointOfHost(assembly, f.stack, vars[ENV_VARS.host])?.id === e.id).map(({ vars }) => String(vars[ENV_VARS.endpointRole] ?? EndpointRole.READ_WRITE)));
      const role = roles.size === 1 ? [...roles][0]! : EndpointRole.READ_WRITE;
      if (roles.size !== 1) notes.push(`interface endpoint ${e.id}: ${roles.size === 0 ? 'no consumer reaches it' : `consumers reach it as ${[...roles].join(' and ')}`}; rehearsed as ${role}`);
      if (!(ENDPOINT_ROLES as readonly string[]).includes(role)) throw new TopologyInputError(e.stack.file, `the consumers of ${e.id} set ${ENV_VARS.endpointRole}=${role}`, `use one of ${ENDPOINT_ROLES.join(', ')}`);
      const vpc = resourceOfType(resolveValue(assembly, e.stack, e.resource.Properties?.VpcId), 'AWS::EC2::VPC')?.id;
      return compact<ProxyEndpointTopology>({ id: e.id, name: e.logicalId, role: role as EndpointRole, isDefault: false, vpc });
    });
  const name = values.FleetName?.kind === 'literal' ? values.FleetName.value : group.logicalId;
  return fleetTier({ id: group.id, hosts, userData: userData.text, values, renderer: 'cloudformation-sub' }, name, network.vpc, endpoints);
}
