/**
 * The PgBouncer engine's fleet in a cloud assembly: the Auto Scaling group, its launch template's user data
 * (Fn::Base64 of Fn::Sub: the bootstrap's text and its substitution values), the interface endpoints of the
 * fleet's endpoint service in the consumer VPCs, and the pool settings the values carry.
 */
import { ENDPOINT_ROLES, ENV_VARS, EndpointRole } from '../../../lambda/src/environment';
import { BOOTSTRAP_PLACEHOLDERS } from '../../model/pgbouncer-bootstrap';
import type { CloudAssemblyIndex, LocatedResource } from './cdk-assembly';
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

/**
 * The logical id of the interface endpoint a consumer's DB_HOST names: the host part of the endpoint's first
 * DNS entry, `Fn::Select [1, Fn::Split [":", Fn::Select [0, Fn::GetAtt [<endpoint>, DnsEntries]]]]` (CloudFormation's
 * DnsEntries are `<hosted zone id>:<dns name>`), as PgBouncerProxyEndpoint writes it.
 */
export function interfaceEndpointOfHost(raw: unknown): string | undefined {
  const select = (value: unknown): [unknown, unknown] | undefined => {
    const arg = (value as Record<string, unknown> | null)?.['Fn::Select'];
    return Array.isArray(arg) && arg.length === 2 ? [arg[0], arg[1]] : undefined;
  };
  const outer = select(raw);
  if (outer === undefined || String(outer[0]) !== '1') return undefined;
  const split = (outer[1] as Record<string, unknown> | null)?.['Fn::Split'];
  if (!Array.isArray(split) || split[0] !== ':') return undefined;
  const inner = select(split[1]);
  if (inner === undefined || String(inner[0]) !== '0') return undefined;
  const getAtt = (inner[1] as Record<string, unknown> | null)?.['Fn::GetAtt'];
  return Array.isArray(getAtt) && getAtt[1] === 'DnsEntries' && typeof getAtt[0] === 'string' ? getAtt[0] : undefined;
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
      const roles = new Set(
        functions
          .filter((f) => f.stack === e.stack)
          .map((f) => ((f.resource.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {}) as Record<string, unknown>)
          .filter((vars) => interfaceEndpointOfHost(vars[ENV_VARS.host]) === e.logicalId)
          .map((vars) => String(vars[ENV_VARS.endpointRole] ?? EndpointRole.READ_WRITE)),
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
