/**
 * CloudFormation values resolved structurally: a literal, a resource (Ref or Fn::GetAtt, followed across
 * stacks through Fn::ImportValue), a pseudo parameter, or something only deployment knows. Fn::Join of
 * literals becomes a literal; Fn::Select of a literal list picks its element; Fn::ImportValue and
 * Fn::GetStackOutput continue in the stack of the assembly that exports (or outputs) the value.
 */
import type { CloudAssemblyIndex, LocatedResource, StackTemplate } from '../../cloud-assembly';

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
