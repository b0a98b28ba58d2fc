/**
 * The PgBouncer engine's fleet in a cloud assembly: the Auto Scaling group, its launch template's user data
 * (Fn::Base64 of Fn::Sub: the bootstrap's text and its substitution values), the interface endpoints of the
 * fleet's endpoint service in the consumer VPCs, and the pool settings the values carry.
 */
import { ENDPOINT_ROLES, ENV_VARS, EndpointRole } from '../../../lambda/src/environment';
import { BOOTSTRAP_PLACEHOLDERS } from '../../model/pgbouncer-bootstrap';
import type { CloudAssemblyIndex, LocatedResource, StackTemplate } from '../../cloud-assembly';
import { exactlyOne } from './cdk-cluster';
import { vpcOfSubnets } from './cdk-network';
import { describeResolved, literalString, resolveValue, resourceOfType } from './cfn-intrinsics';
import { defaultEndpointId } from './endpoint-ids';
import { TopologyInputError } from './errors';
import { poolWithDefaults } from './pool-defaults';
import type { EnvValue, FleetTopology, ProxyEndpointTopology, ProxyTopology } from './types';

/** Whether the assembly's pooling tier is the PgBouncer engine: a fleet behind an endpoint service, no RDS Proxy. */
export function isCdkFleet(assembly: CloudAssemblyIndex): boolean {
  return assembly.ofType('AWS::RDS::DBProxy').length === 0 && assembly.ofType('AWS::EC2::VPCEndpointService').length > 0 && assembly.ofType('AWS::AutoScaling::AutoScalingGroup').length > 0;
}

/** How CDK passes a list attribute to another stack: joined into one output value, split again where it is read. */
const STRING_LIST_DELIMITER = '||';

/**
 * The interface endpoint a consumer's DB_HOST names: the host part of the endpoint's first DNS entry,
 * `Fn::Select [1, Fn::Split [":", Fn::Select [0, <DnsEntries>]]]` (CloudFormation's DnsEntries are
 * `<hosted zone id>:<dns name>`), as PgBouncerProxyEndpoint writes it. In the endpoint's own stack <DnsEntries>
 * is `Fn::GetAtt [<endpoint>, DnsEntries]`; in a consumer's stack of its own, CDK passes the list through an
 * output of the endpoint's stack, `Fn::Join ["||", Fn::GetAtt ...]`, read back as `Fn::Split ["||", Fn::ImportValue
 * or Fn::GetStackOutput]`.
 */
export function interfaceEndpointOfHost(assembly: CloudAssemblyIndex, stack: StackTemplate, raw: unknown): LocatedResource | undefined {
  const call = (value: unknown, fn: string): unknown[] | undefined => {
    const arg = (value as Record<string, unknown> | null)?.[fn];
    return Array.isArray(arg) && arg.length === 2 ? arg : undefined;
  };
  const outer = call(raw, 'Fn::Select');
  if (outer === undefined || String(outer[0]) !== '1') return undefined;
  const split = call(outer[1], 'Fn::Split');
  if (split === undefined || split[0] !== ':') return undefined;
  const inner = call(split[1], 'Fn::Select');
  if (inner === undefined || String(inner[0]) !== '0') return undefined;
  let list = { stack, value: inner[1] };
  const passed = call(list.value, 'Fn::Split');
  if (passed !== undefined && passed[0] === STRING_LIST_DELIMITER) {
    const output = stackOutputOf(assembly, stack, passed[1]);
    const joined = output === undefined ? undefined : call(output.value, 'Fn::Join');
    if (output === undefined || joined === undefined || joined[0] !== STRING_LIST_DELIMITER) return undefined;
    list = { stack: output.stack, value: joined[1] };
  }
  const getAtt = call(list.value, 'Fn::GetAtt');
  return getAtt !== undefined && getAtt[1] === 'DnsEntries' && typeof getAtt[0] === 'string' ? assembly.resource(list.stack, getAtt[0]) : undefined;
}

/** The output another stack of the assembly gives a value through (Fn::ImportValue or Fn::GetStackOutput), with its stack. */
function stackOutputOf(assembly: CloudAssemblyIndex, stack: StackTemplate, value: unknown): { stack: StackTemplate; value: unknown } | undefined {
  const fields = (value ?? {}) as Record<string, unknown>;
  if ('Fn::ImportValue' in fields) {
    const name = literalString(resolveValue(assembly, stack, fields['Fn::ImportValue']));
    return name === undefined ? undefined : assembly.exported(name);
  }
  const spec = fields['Fn::GetStackOutput'] as { StackName?: unknown; OutputName?: unknown } | undefined;
  if (spec === undefined) return undefined;
  const stackName = literalString(resolveValue(assembly, stack, spec.StackName));
  const outputName = literalString(resolveValue(assembly, stack, spec.OutputName));
  return stackName === undefined || outputName === undefined ? undefined : assembly.stackOutput(stackName, outputName);
}

/** Fn::Base64 { Fn::Sub: [text, values] } (or a bare Fn::Sub), as the launch template carries the bootstrap. */
function userDataOf(template: LocatedResource): { text: string; values: Record<string, unknown> } {
  const data = (template.resource.Properties?.LaunchTemplateData ?? {}) as Record<string, unknown>;
  const raw = data.UserData as Record<string, unknown> | undefined;
  const sub = ((raw?.['Fn::Base64'] as Record<string, unknown> | undefined) ?? raw)?.['Fn::Sub'];
  if (typeof sub === 'string') return { text: sub, values: {} };
  if (Array.isArray(sub) && typeof sub[0] === 'string') return { text: sub[0], values: (sub[1] ?? {}) as Record<string, unknown> };
  throw new TopologyInputError(template.stack.file, `launch template ${template.id} has no user data of the form Fn::Base64 { Fn::Sub }`, 'rehearse boots the fleet\'s hosts from the user data the PgBouncerProxy construct renders');
}

export function readCdkFleet(assembly: CloudAssemblyIndex, notes: string[]): { proxy: ProxyTopology; endpoints: ProxyEndpointTopology[]; fleet: FleetTopology } {
  const group = exactlyOne(assembly, 'AWS::AutoScaling::AutoScalingGroup', 'the PgBouncer engine\'s Auto Scaling group (a PgBouncerProxy)');
  const props = group.resource.Properties ?? {};
  const spec = (props.LaunchTemplate ?? {}) as Record<string, unknown>;
  const template = resourceOfType(resolveValue(assembly, group.stack, spec.LaunchTemplateId), 'AWS::EC2::LaunchTemplate');
  if (template === undefined) throw new TopologyInputError(group.stack.file, `Auto Scaling group ${group.id} names no AWS::EC2::LaunchTemplate of the assembly`, 'rehearse boots the hosts from the launch template PgBouncerProxy makes');
  const userData = userDataOf(template);
  const values: Record<string, EnvValue> = {};
  for (const [key, raw] of Object.entries(userData.values)) {
    const resolved = resolveValue(assembly, template.stack, raw);
    values[key] = resolved.kind === 'literal' ? { kind: 'literal', value: String(resolved.value) } : { kind: 'unknown', detail: describeResolved(resolved) };
  }
  const missing = Object.values(BOOTSTRAP_PLACEHOLDERS).map((p) => p.slice(2, -1)).filter((name) => values[name] === undefined);
  if (missing.length > 0) throw new TopologyInputError(template.stack.file, `the user data of ${template.id} does not substitute ${missing.join(', ')}`, 'synthesize with the kit\'s PgBouncerProxy of this version: its bootstrap takes exactly these values');
  const literal = (key: string): string | undefined => (values[key]?.kind === 'literal' ? (values[key] as { value: string }).value : undefined);
  const count = (name: string): number | undefined => {
    const v = literalString(resolveValue(assembly, group.stack, props[name]));
    return v === undefined || !/^\d+$/.test(v) ? undefined : Number(v);
  };
  const hosts = count('DesiredCapacity') ?? count('MinSize');
  if (hosts === undefined || hosts < 1) throw new TopologyInputError(group.stack.file, `Auto Scaling group ${group.id} has no literal DesiredCapacity or MinSize`, 'give the fleet a fixed host count');
  const network = vpcOfSubnets(assembly, group.stack, props.VPCZoneIdentifier);
  if (network.problem) notes.push(`VPC of ${group.id} unknown: ${network.problem}`);

  // The interface endpoints of the fleet's endpoint service, each with the role its consumers reach it for.
  const services = new Set(assembly.ofType('AWS::EC2::VPCEndpointService').map((s) => s.logicalId));
  const functions = assembly.ofType('AWS::Lambda::Function');
  const endpoints = assembly
    .ofType('AWS::EC2::VPCEndpoint')
    .filter((e) => JSON.stringify(e.resource.Properties?.ServiceName ?? '').match(/"Ref":"([^"]+)"/g)?.some((ref) => services.has(ref.slice(7, -1))))
    .map((e): ProxyEndpointTopology => {
      // Its consumers, in its stack or in another one of the assembly.
      const roles = new Set(
        functions
          .map((f) => ({ f, vars: ((f.resource.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {}) as Record<string, unknown> }))
          .filter(({ f, vars }) => interfaceEndpointOfHost(assembly, f.stack, vars[ENV_VARS.host])?.id === e.id)
          .map(({ vars }) => String(vars[ENV_VARS.endpointRole] ?? EndpointRole.READ_WRITE)),
      );
      const role = roles.size === 1 ? [...roles][0]! : EndpointRole.READ_WRITE;
      if (roles.size !== 1) notes.push(`interface endpoint ${e.id}: ${roles.size === 0 ? 'no consumer reaches it' : `consumers reach it as ${[...roles].join(' and ')}`}; rehearsed as ${role}`);
      if (!(ENDPOINT_ROLES as readonly string[]).includes(role)) throw new TopologyInputError(e.stack.file, `the consumers of ${e.id} set ${ENV_VARS.endpointRole}=${role}`, `use one of ${ENDPOINT_ROLES.join(', ')}`);
      const vpc = resourceOfType(resolveValue(assembly, e.stack, e.resource.Properties?.VpcId), 'AWS::EC2::VPC')?.id;
      return { id: e.id, name: e.logicalId, role: role as EndpointRole, isDefault: false, ...(vpc !== undefined ? { vpc } : {}) };
    });

  const name = literal('FleetName') ?? group.logicalId;
  const num = (key: string): number | undefined => (literal(key) === undefined ? undefined : Number(literal(key)));
  const given: Record<string, number> = {};
  for (const [key, value] of [
    ['maxConnectionsPercent', num('MaxConnectionsPercent')],
    ['maxIdleConnectionsPercent', num('MaxIdleConnectionsPercent')],
    ['connectionBorrowTimeoutSeconds', num('BorrowTimeoutSeconds')],
  ] as const) {
    if (value !== undefined) given[key] = value;
  }
  // The load balancer's DNS name is the fleet's own endpoint in the data VPC: read/write, like RDS Proxy's default.
  const defaultEndpoint: ProxyEndpointTopology = { id: defaultEndpointId(group.id), name, role: EndpointRole.READ_WRITE, isDefault: true, ...(network.vpc ? { vpc: network.vpc } : {}) };
  return {
    proxy: {
      id: group.id,
      name,
      engineFamily: 'POSTGRESQL',
      ...(network.vpc ? { vpc: network.vpc } : {}),
      // The engine's listeners take TLS only (client_tls_sslmode = require) and log in with SCRAM passwords.
      requireTls: true,
      authScheme: 'NONE',
      defaultEndpoint: defaultEndpoint.id,
      pool: poolWithDefaults(given),
    },
    endpoints: [defaultEndpoint, ...endpoints],
    fleet: { id: group.id, hosts, userData: userData.text, values, renderer: 'cloudformation-sub' },
  };
}
