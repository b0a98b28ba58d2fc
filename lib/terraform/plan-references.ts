/**
 * Follows a configuration expression's references through the plan's configuration to what they end
 * at: a resource, a known value (a constant, a root variable), or a dead end Terraform's JSON does not
 * let us see past (a local value, `each.value`). A child module's `var.x` continues at the module call's
 * argument `x`; `module.m.out` continues at that module's output `out`.
 */
import { parseTraversal, valueAt, type ConfigExpression, type TraversalStep } from './plan-json';
import type { PlanIndex, PlanResource } from './plan-index';

export type Terminal =
  | { readonly kind: 'resource'; readonly modulePath: ReadonlyArray<string>; readonly mode: 'managed' | 'data'; readonly type: string; readonly name: string; readonly key?: string | number }
  | { readonly kind: 'value'; readonly value: unknown }
  | { readonly kind: 'dead-end'; readonly reason: string };

/**
 * Blocks a module writes as `dynamic` blocks, which plan JSON's configuration leaves out: by the module's
 * source, the resource type, and for each block the module variable its content comes from. The kit's
 * internal/handler-function writes its function's vpc_config and environment from `var.vpc` and
 * `var.environment` (a function may have neither), so an argument inside them continues at that variable.
 */
const DYNAMIC_BLOCKS: ReadonlyArray<{ readonly source: RegExp; readonly type: string; readonly blocks: Readonly<Record<string, string>> }> = [
  { source: /(^|\/)internal\/handler-function$/, type: 'aws_lambda_function', blocks: { vpc_config: 'vpc', environment: 'environment' } },
];

/** Guards against configurations whose outputs and inputs refer to each other in a loop. */
const MAX_DEPTH = 24;

/** Terraform lists `a.b.c`, `a.b` and `a` for one reference: keep the most specific of each. */
function mostSpecific(references: ReadonlyArray<string>): string[] {
  const unique = [...new Set(references)];
  return unique.filter((r) => !unique.some((other) => other !== r && (other.startsWith(`${r}.`) || other.startsWith(`${r}[`))));
}

const nameOf = (step: TraversalStep | undefined): string | undefined => (step && 'name' in step ? step.name : undefined);
const keyOf = (step: TraversalStep | undefined): string | number | undefined => (step && 'key' in step ? step.key : undefined);
const where = (path: ReadonlyArray<string>): string => (path.length === 0 ? 'the root module' : path.map((m) => `module.${m}`).join('.'));

export class ReferenceTracer {
  constructor(private readonly index: PlanIndex) {}

  /** `repeated` is the resource whose arguments these are, so `each.value` continues at its for_each. */
  public traceExpression(modulePath: ReadonlyArray<string>, expression: ConfigExpression | undefined, depth = 0, repeated?: PlanResource): Terminal[] {
    if (expression === undefined) return [{ kind: 'dead-end', reason: `no expression in ${where(modulePath)}` }];
    if ('constant_value' in expression) return [{ kind: 'value', value: expression.constant_value }];
    if (depth > MAX_DEPTH) return [{ kind: 'dead-end', reason: 'a reference chain too deep to follow' }];
    const references = mostSpecific(expression.references ?? []);
    const terminals = references.flatMap((ref) => this.traceReference(modulePath, ref, depth + 1, repeated));
    return references.includes('each.key') ? terminals.map((t) => this.keyedByEach(t, repeated)) : terminals;
  }

  /**
   * `x[each.key]` lists `x` and `each.key` as two references. When a resource named without a key has an
   * instance under the repeated resource's own key, that instance is the one meant (the for_each idiom).
   */
  private keyedByEach(t: Terminal, repeated: PlanResource | undefined): Terminal {
    if (t.kind !== 'resource' || t.key !== undefined || repeated?.index === undefined) return t;
    const keyed: Terminal = { ...t, key: repeated.index };
    return this.instancesOf(keyed).length === 1 ? keyed : t;
  }

  /** The expression of a resource's argument at `path` (a nested block's argument: ['vpc_config', 0, 'subnet_ids']). */
  public traceArgument(resource: PlanResource, path: ReadonlyArray<string | number>): Terminal[] {
    const expression = valueAt(resource.config?.expressions, path) as ConfigExpression | undefined;
    if (expression !== undefined) return this.traceExpression(resource.modulePath, expression, 0, resource);
    const variable = this.dynamicBlockVariable(resource, path);
    if (variable !== undefined) return this.traceReference(resource.modulePath, `var.${variable}`, 1, resource);
    return [{ kind: 'dead-end', reason: `${resource.address} has no ${path.join('.')} in the configuration` }];
  }

  /** Whether the configuration says where the argument at `path` comes from (its own expression, or a dynamic block's variable). */
  public hasArgument(resource: PlanResource, path: ReadonlyArray<string | number>): boolean {
    return valueAt(resource.config?.expressions, path) !== undefined || this.dynamicBlockVariable(resource, path) !== undefined;
  }

  /** The module variable a dynamic block at `path` is written from (DYNAMIC_BLOCKS), when the resource's module writes one. */
  private dynamicBlockVariable(resource: PlanResource, path: ReadonlyArray<string | number>): string | undefined {
    const source = this.index.moduleCall(resource.modulePath)?.source;
    const block = path[0];
    if (source === undefined || typeof block !== 'string') return undefined;
    return DYNAMIC_BLOCKS.find((d) => d.type === resource.type && d.source.test(source))?.blocks[block];
  }

  /** The planned instances a resource terminal stands for (every instance when the reference has no key). */
  public instancesOf(terminal: Terminal): PlanResource[] {
    if (terminal.kind !== 'resource') return [];
    const path = terminal.modulePath.join('/');
    return this.index.resources.filter(
      (r) => r.modulePath.join('/') === path && r.mode === terminal.mode && r.type === terminal.type && r.name === terminal.name && (terminal.key === undefined || r.index === terminal.key),
    );
  }

  private traceReference(modulePath: ReadonlyArray<string>, reference: string, depth: number, repeated: PlanResource | undefined): Terminal[] {
    const steps = parseTraversal(reference);
    const head = nameOf(steps[0]);
    switch (head) {
      case 'var': {
        const name = nameOf(steps[1])!;
        if (modulePath.length === 0) {
          const variable = this.index.rootVariable(name);
          return variable ? [{ kind: 'value', value: variable.value }] : [{ kind: 'dead-end', reason: `var.${name} has no value in the plan` }];
        }
        const parent = modulePath.slice(0, -1);
        return this.traceExpression(parent, this.index.moduleCall(modulePath)?.expressions?.[name], depth);
      }
      case 'module': {
        const name = nameOf(steps[1])!;
        const output = nameOf(steps[2]) ?? nameOf(steps[3]);
        const child = [...modulePath, name];
        const expression = output === undefined ? undefined : this.index.configModule(child)?.outputs?.[output]?.expression;
        if (expression === undefined) return [{ kind: 'dead-end', reason: `${reference} in ${where(modulePath)} names no output` }];
        return this.traceExpression(child, expression, depth);
      }
      case 'local':
        return [{ kind: 'dead-end', reason: `${reference} in ${where(modulePath)} (plan JSON carries no local values)` }];
      case 'each':
        // each.value is an element of the for_each collection: follow the collection (its elements are not told apart).
        if (nameOf(steps[1]) === 'value' && repeated?.config?.for_each_expression) return this.traceExpression(modulePath, repeated.config.for_each_expression, depth);
        if (nameOf(steps[1]) === 'key' && repeated?.index !== undefined) return [{ kind: 'value', value: repeated.index }];
        return [{ kind: 'dead-end', reason: `${reference} in ${where(modulePath)}` }];
      case 'count':
      case 'self':
      case 'path':
      case 'terraform':
        return [{ kind: 'dead-end', reason: `${reference} in ${where(modulePath)}` }];
      case 'data':
        return [{ kind: 'resource', modulePath, mode: 'data', type: nameOf(steps[1])!, name: nameOf(steps[2])!, ...optionalKey(keyOf(steps[3])) }];
      default:
        return [{ kind: 'resource', modulePath, mode: 'managed', type: head!, name: nameOf(steps[1])!, ...optionalKey(keyOf(steps[2])) }];
    }
  }
}

function optionalKey(key: string | number | undefined): { key?: string | number } {
  return key === undefined ? {} : { key };
}

/** The region the root module's aws provider is configured with, else what a data.aws_region read. */
export function planRegion(index: PlanIndex, tracer: ReferenceTracer): string | undefined {
  const expression = index.plan.configuration?.provider_config?.aws?.expressions?.region;
  if (expression !== undefined) {
    const values = tracer.traceExpression([], expression).filter((t) => t.kind === 'value' && typeof t.value === 'string');
    if (values.length === 1 && values[0]!.kind === 'value') return values[0]!.value as string;
  }
  const read = index.resources.find((r) => r.mode === 'data' && r.type === 'aws_region' && (typeof r.values.region === 'string' || typeof r.values.name === 'string'));
  return read ? String(read.values.region ?? read.values.name) : undefined;
}
