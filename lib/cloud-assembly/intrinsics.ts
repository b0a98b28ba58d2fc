/**
 * CloudFormation values of a cloud assembly resolved structurally: a literal, a resource (Ref or Fn::GetAtt,
 * followed across stacks through Fn::ImportValue), a pseudo parameter, or something only deployment knows.
 * Fn::Join of literals becomes a literal; Fn::Select of a literal list picks its element; Fn::ImportValue and
 * Fn::GetStackOutput continue in the stack of the assembly that exports (or outputs) the value. Also what
 * follows from them: the VPC a list of subnets lies in, the interface endpoint a host name is read from.
 */
import type { CloudAssemblyIndex, LocatedResource, StackTemplate } from '.';

export type Resolved =
  | { readonly kind: 'literal'; readonly value: string | number | boolean }
  | { readonly kind: 'resource'; readonly target: LocatedResource; readonly attribute?: string }
  | { readonly kind: 'opaque'; readonly detail: string };

/** Guards against a template whose exports refer to each other in a loop. */
const MAX_DEPTH = 16;

export function resolveValue(assembly: CloudAssemblyIndex, stack: StackTemplate, value: unknown, depth = 0): Resolved {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return { kind: 'literal', value };
  if (depth > MAX_DEPTH) return { kind: 'opaque', detail: 'a reference chain too deep to follow' };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { kind: 'opaque', detail: 'not a single value' };
  const entries = Object.entries(value);
  if (entries.length !== 1) return { kind: 'opaque', detail: 'an object value' };
  const [fn, arg] = entries[0]!;
  switch (fn) {
    case 'Ref':
      return reference(assembly, stack, String(arg));
    case 'Fn::GetAtt': {
      // Either [logicalId, attribute] or "logicalId.attribute" (the first dot splits them).
      const [logicalId, attribute] = Array.isArray(arg) ? [String(arg[0]), String(arg[1])] : splitOnce(String(arg), '.');
      const target = assembly.resource(stack, logicalId);
      return target ? { kind: 'resource', target, attribute } : { kind: 'opaque', detail: `Fn::GetAtt of ${logicalId}, which ${stack.file} does not define` };
    }
    case 'Fn::Join': {
      const [separator, parts] = Array.isArray(arg) ? arg : [];
      if (typeof separator !== 'string' || !Array.isArray(parts)) return { kind: 'opaque', detail: 'a malformed Fn::Join' };
      const resolved = parts.map((p) => resolveValue(assembly, stack, p, depth + 1));
      if (resolved.every((r) => r.kind === 'literal')) return { kind: 'literal', value: resolved.map((r) => String(r.value)).join(separator) };
      return { kind: 'opaque', detail: `Fn::Join of ${resolved.map(describeResolved).join(` + ${JSON.stringify(separator)} + `)}` };
    }
    case 'Fn::Select': {
      const [index, list] = Array.isArray(arg) ? arg : [];
      const i = resolveValue(assembly, stack, index, depth + 1);
      if (i.kind === 'literal' && Array.isArray(list) && list[Number(i.value)] !== undefined) return resolveValue(assembly, stack, list[Number(i.value)], depth + 1);
      return { kind: 'opaque', detail: 'Fn::Select over a list known at deploy time' };
    }
    case 'Fn::ImportValue': {
      const name = resolveValue(assembly, stack, arg, depth + 1);
      const exported = name.kind === 'literal' ? assembly.exported(String(name.value)) : undefined;
      if (!exported) return { kind: 'opaque', detail: `Fn::ImportValue ${describeResolved(name)}, exported by no stack of the assembly` };
      return resolveValue(assembly, exported.stack, exported.value, depth + 1);
    }
    case 'Fn::GetStackOutput': {
      // Another stack's output, read without an export (CDK's cross-stack references under newer feature flags).
      const spec = (arg ?? {}) as { StackName?: unknown; OutputName?: unknown };
      const stackName = resolveValue(assembly, stack, spec.StackName, depth + 1);
      const outputName = resolveValue(assembly, stack, spec.OutputName, depth + 1);
      const output = stackName.kind === 'literal' && outputName.kind === 'literal' ? assembly.stackOutput(String(stackName.value), String(outputName.value)) : undefined;
      if (!output) return { kind: 'opaque', detail: `Fn::GetStackOutput ${describeResolved(outputName)} of ${describeResolved(stackName)}, a stack outside the assembly` };
      return resolveValue(assembly, output.stack, output.value, depth + 1);
    }
    default:
      return { kind: 'opaque', detail: `${fn} (resolved at deploy time)` };
  }
}

/** Each element of a list property; a list built at deploy time (Fn::Split, Fn::GetAZs) is one opaque element. */
export function resolveList(assembly: CloudAssemblyIndex, stack: StackTemplate, value: unknown): Resolved[] {
  if (value === undefined) return [];
  if (Array.isArray(value)) return value.map((v) => resolveValue(assembly, stack, v));
  return [{ kind: 'opaque', detail: 'a list resolved at deploy time' }];
}

function reference(assembly: CloudAssemblyIndex, stack: StackTemplate, name: string): Resolved {
  if (name.startsWith('AWS::')) return { kind: 'opaque', detail: `the pseudo parameter ${name}` };
  const target = assembly.resource(stack, name);
  return target ? { kind: 'resource', target } : { kind: 'opaque', detail: `the parameter ${name}` };
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

export function describeResolved(r: Resolved): string {
  switch (r.kind) {
    case 'literal':
      return JSON.stringify(r.value);
    case 'resource':
      return r.attribute === undefined ? `Ref ${r.target.id}` : `Fn::GetAtt ${r.target.id}.${r.attribute}`;
    case 'opaque':
      return r.detail;
  }
}

/** The literal string, when the value is one. */
export function literalString(r: Resolved): string | undefined {
  return r.kind === 'literal' ? String(r.value) : undefined;
}

/** The resource a value refers to when it is of `type` (Ref or any attribute). */
export function resourceOfType(r: Resolved, type: string): LocatedResource | undefined {
  return r.kind === 'resource' && r.target.resource.Type === type ? r.target : undefined;
}

/**
 * A string built from literals and pseudo parameters, the latter written `${AWS::Region}`; undefined when
 * it involves a resource or another deploy-time value.
 */
export function templateString(value: unknown): string | undefined {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null || typeof value !== 'object') return undefined;
  const ref = (value as { Ref?: unknown }).Ref;
  if (typeof ref === 'string' && ref.startsWith('AWS::')) return `\${${ref}}`;
  const join = (value as { 'Fn::Join'?: unknown })['Fn::Join'];
  if (Array.isArray(join) && typeof join[0] === 'string' && Array.isArray(join[1])) {
    const parts = (join[1] as unknown[]).map(templateString);
    return parts.every((p): p is string => p !== undefined) ? parts.join(join[0]) : undefined;
  }
  return undefined;
}

/** The logical ids a value refers to with Ref anywhere inside it (an interface endpoint's ServiceName built from its endpoint service). */
export function refsIn(value: unknown): string[] {
  return [...JSON.stringify(value ?? '').matchAll(/"Ref":"([^"]+)"/g)].map((m) => m[1]!);
}

/** A literal property of a located resource. */
export function literalProperty(assembly: CloudAssemblyIndex, r: LocatedResource, name: string): string | undefined {
  return literalString(resolveValue(assembly, r.stack, r.resource.Properties?.[name]));
}

/** A VPC of the assembly: its id `<stack>/<logical id>`, its Name tag and CIDR block when literal. */
export interface AssemblyVpc {
  readonly id: string;
  readonly name?: string;
  readonly cidr?: string;
}

export function assemblyVpcs(assembly: CloudAssemblyIndex): AssemblyVpc[] {
  return assembly.ofType('AWS::EC2::VPC').map((vpc) => {
    const cidr = literalProperty(assembly, vpc, 'CidrBlock');
    const tags = (Array.isArray(vpc.resource.Properties?.Tags) ? vpc.resource.Properties.Tags : []) as Array<{ Key?: unknown; Value?: unknown }>;
    const name = tags.find((t) => t.Key === 'Name');
    const nameValue = name ? literalString(resolveValue(assembly, vpc.stack, name.Value)) : undefined;
    return { id: vpc.id, ...(nameValue !== undefined ? { name: nameValue } : {}), ...(cidr !== undefined ? { cidr } : {}) };
  });
}

/** The VPC id of the subnets (a proxy's, an endpoint's, a function's, a subnet group's), or why it is not known. */
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

/** How CDK passes a list attribute to another stack: joined into one output value, split again where it is read. */
const STRING_LIST_DELIMITER = '||';

/**
 * The interface endpoint a host name is read from: the host part of the endpoint's first DNS entry,
 * `Fn::Select [1, Fn::Split [":", Fn::Select [0, <DnsEntries>]]]` (CloudFormation's DnsEntries are
 * `<hosted zone id>:<dns name>`). In the endpoint's own stack <DnsEntries> is `Fn::GetAtt [<endpoint>,
 * DnsEntries]`; in another stack, CDK passes the list through an output of the endpoint's stack,
 * `Fn::Join ["||", Fn::GetAtt ...]`, read back as `Fn::Split ["||", Fn::ImportValue or Fn::GetStackOutput]`.
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

/** Fn::Base64 { Fn::Sub: [text, values] } (or a bare Fn::Sub, or Fn::Sub of a text alone): the text and its values. */
export function substitution(value: unknown): { text: string; values: Record<string, unknown> } | undefined {
  const raw = value as Record<string, unknown> | undefined;
  const sub = ((raw?.['Fn::Base64'] as Record<string, unknown> | undefined) ?? raw)?.['Fn::Sub'];
  if (typeof sub === 'string') return { text: sub, values: {} };
  if (Array.isArray(sub) && typeof sub[0] === 'string') return { text: sub[0], values: (sub[1] ?? {}) as Record<string, unknown> };
  return undefined;
}

/** A property that is a literal whole number (a count, a port, a promotion tier). */
export function wholeNumberProperty(assembly: CloudAssemblyIndex, r: LocatedResource, name: string): number | undefined {
  const value = literalProperty(assembly, r, name);
  return value === undefined || !/^\d+$/.test(value) ? undefined : Number(value);
}
