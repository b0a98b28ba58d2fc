import * as fs from 'fs';
import * as path from 'path';
import { type HclAttribute, type HclType, objectOf, parseHclType } from './hcl-types';
import type { PropertyLookup } from '../model';
import { MODULES, moduleSpec, propertyNames } from './modules';
import { moduleVariables, parseOutputs } from './module-variables';
import { moduleRegions } from './validations';

/**
 * What a typed CDK Terrain (cdktn) construct of a module is made from: the module's variables (one
 * parse of the .tf files, the same as the README's Rules table), its outputs, and how the model's rule inputs
 * are read from the variables (the module's one property-to-variable table). lib/terraform/cdktn.ts
 * renders the TypeScript.
 */

/**
 * How a model property of a rule is read from the module's variables. A read names its variable(s) by
 * the module's names; packages/cdktn/src/kit-rules.ts runs them (its RuleRead is this type without
 * `property`, which becomes the key).
 */
export type RuleRead =
  /** The variable's value. */
  | { readonly property: string; readonly variable: string; readonly read: 'value'; readonly default?: unknown }
  /** One attribute of an object variable (`endpoint.target_role`). */
  | { readonly property: string; readonly variable: string; readonly read: 'attribute'; readonly attribute: string; readonly default?: unknown }
  /**
   * The number of elements of a collection variable: a collection of objects (`endpoints`, counted against
   * RDS Proxy's limit), or a list the module's rules read as its length (ModuleSpec.lengths: `reader_endpoints`).
   */
  | { readonly property: string; readonly variable: string; readonly read: 'length'; readonly default?: unknown }
  /** Each key of a map (`endpoints key`: the endpoint names). */
  | { readonly property: string; readonly variable: string; readonly read: 'keys' }
  /** One attribute of each element of a collection (`endpoints target_role`). */
  | { readonly property: string; readonly variable: string; readonly read: 'each'; readonly attribute: string; readonly default?: unknown }
  /** Each item of a list of strings or numbers (`consumer_users item`). */
  | { readonly property: string; readonly variable: string; readonly read: 'items' }
  /** A lookup of the model (PROPERTY_LOOKUPS) applied to the variable's value (the hosts' vCPUs from `instance_type`). */
  | { readonly property: string; readonly variable: string; readonly read: 'lookup'; readonly lookup: PropertyLookup; readonly default?: unknown }
  /** An object of several variables' values, by attribute (the fleet's pool settings), each with its variable's default. */
  | { readonly property: string; readonly read: 'object'; readonly variables: Readonly<Record<string, string>>; readonly defaults?: Readonly<Record<string, unknown>> }
  /**
   * The distinct values of one attribute over the elements of a collection whose other attribute equals a value
   * (`endpoints role where pool_mode == session`: the roles some endpoint uses session pooling in).
   */
  | { readonly property: string; readonly variable: string; readonly read: 'select'; readonly attribute: string; readonly where: string; readonly equals: string; readonly whereDefault?: unknown };

export interface BindingVariable {
  /** The module's variable. */
  readonly name: string;
  /** The construct prop: the variable in camelCase, as `cdktn get` names module inputs. */
  readonly prop: string;
  readonly description: string;
  readonly type: HclType;
  /** The HCL default; none: the prop is required. */
  readonly default?: string;
}

export type OutputKind = 'string' | 'number' | 'bool' | 'list' | 'stringMap' | 'numberMap' | 'any';

export interface BindingOutput {
  readonly name: string;
  /** The getter: the output in camelCase. */
  readonly getter: string;
  readonly description: string;
  readonly kind: OutputKind;
}

export interface ModuleBinding {
  /** Directory under modules/. */
  readonly module: string;
  readonly className: string;
  /** The class's former name, kept as a deprecated subclass (docs/DECISIONS.md, "One name per thing"). */
  readonly formerClassName?: string;
  /** The first paragraph of the module's README. */
  readonly summary: string;
  readonly variables: ReadonlyArray<BindingVariable>;
  readonly outputs: ReadonlyArray<BindingOutput>;
  readonly ruleReads: ReadonlyArray<RuleRead>;
}

/** The modules with a cdktn construct: every module of the topology, and the log-key policy users pass keys with. */
export const CDKTN_MODULES: ReadonlyArray<string> = [...MODULES, 'internal/logs-kms-policy'];

/**
 * Outputs whose type the value expression does not show (a resource attribute, a local, an object):
 * every other output is a string, or has its variable's type (`var.x`). A value that builds a collection
 * or a number must be listed, or generation fails.
 */
const OUTPUT_KINDS: Readonly<Record<string, Readonly<Record<string, OutputKind>>>> = {
  'aurora-optimized-reads': {
    port: 'number',
    reader_instance_identifiers: 'list',
    reader_instance_endpoints: 'list',
    instance_identifiers: 'list',
    sizing: 'any',
    tiered_cache_gib: 'number',
    temporary_objects_gib: 'number',
    max_connections: 'number',
  },
  'rds-proxy': { endpoints: 'any', pool_settings: 'any', max_server_connections: 'number', reserved_connections: 'number' },
  'pgbouncer-proxy': {
    endpoints: 'any',
    ports: 'numberMap',
    consumer_secret_arns: 'stringMap',
    vcpus_per_host: 'number',
    bootstrap_variables: 'stringMap',
    metric_targets: 'any',
    target_group_arn_suffixes: 'stringMap',
  },
  'database-role-bootstrap': { roles: 'stringMap' },
  dashboard: { alarm_names: 'list', thresholds: 'any' },
  'internal/logs-kms-policy': { logs_condition: 'any' },
};

/** Class names that are not the module's directory in PascalCase: PgBouncer's own spelling, as the CDK construct has it. */
const CLASS_NAMES: Readonly<Record<string, string>> = { 'pgbouncer-proxy': 'PgBouncerProxy' };

/** Class names a module's construct had before its module was renamed: cdktn users may have them, so they stay, deprecated. */
const FORMER_CLASS_NAMES: Readonly<Record<string, string>> = { 'rds-proxy': 'PoolingProxy' };

/** Members of cdktn's TerraformHclModule (and the construct's own options) that a prop or getter must not shadow. */
export const RESERVED_MEMBERS: ReadonlySet<string> = new Set([
  'node', 'source', 'version', 'variables', 'providers', 'dependsOn', 'forEach', 'skipAssetCreationFromLocalModules',
  'set', 'get', 'getString', 'getNumber', 'getBoolean', 'getList', 'interpolationForOutput', 'addProvider', 'fqn',
  'friendlyUniqueId', 'cdktfStack', 'stack', 'rawOverrides', 'addOverride', 'overrideLogicalId', 'resetOverrideLogicalId',
  'toTerraform', 'toHclTerraform', 'toMetadata', 'toString',
]);

export function camelCase(name: string): string {
  return name.replace(/[_-]([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

export function pascalCase(name: string): string {
  const camel = camelCase(name);
  return camel[0].toUpperCase() + camel.slice(1);
}

/** A literal HCL default as a JavaScript value (undefined for null and for expressions). */
function literal(hcl: string | undefined): unknown {
  if (hcl === undefined) return undefined;
  try {
    return JSON.parse(hcl) ?? undefined;
  } catch {
    return undefined;
  }
}

function kindOfType(type: HclType): OutputKind {
  if (type.kind === 'string' || type.kind === 'number' || type.kind === 'bool') return type.kind;
  if ((type.kind === 'list' || type.kind === 'set') && type.element.kind === 'string') return 'list';
  if (type.kind === 'map' && type.element.kind === 'string') return 'stringMap';
  if (type.kind === 'map' && type.element.kind === 'number') return 'numberMap';
  return 'any';
}

function outputKind(module: string, name: string, value: string, variables: ReadonlyArray<BindingVariable>): OutputKind {
  const listed = OUTPUT_KINDS[module]?.[name];
  if (listed) return listed;
  const ref = /^var\.([a-z0-9_]+)(?:\.([a-z0-9_]+))?$/.exec(value);
  if (ref) {
    const variable = variables.find((v) => v.name === ref[1]);
    if (!variable) throw new Error(`modules/${module}: output ${name} reads an unknown variable ${ref[1]}`);
    if (ref[2] === undefined) return kindOfType(variable.type);
    const attribute = objectOf(variable.type)?.attributes.find((a) => a.name === ref[2]);
    if (!attribute) throw new Error(`modules/${module}: output ${name} reads an unknown attribute ${value}`);
    return kindOfType(attribute.type);
  }
  if (/^[{[]|^(concat|merge|tolist|toset|tomap|keys|values|length|floor|ceil|max|min|sum)\(|\bfloor\(|\blength\(/.test(value)) {
    throw new Error(`modules/${module}: output ${name} = ${value} is not a string: list its kind in OUTPUT_KINDS (lib/terraform/cdktn-bindings.ts)`);
  }
  return 'string';
}

function attributeOf(module: string, variable: BindingVariable, name: string): HclAttribute {
  const attribute = objectOf(variable.type)?.attributes.find((a) => a.name === name);
  if (!attribute) throw new Error(`modules/${module}: rule input ${variable.name}.${name} is not an attribute of the variable`);
  return attribute;
}

const isStringOrNumber = (type: HclType) => type.kind === 'string' || type.kind === 'number';

/** How each model property the module's rules read comes from its variables. */
function ruleReads(module: string, variables: ReadonlyArray<BindingVariable>): RuleRead[] {
  const byName = (name: string) => {
    const variable = variables.find((v) => v.name === name);
    if (!variable) throw new Error(`modules/${module}: the rules name a variable ${name} the module does not declare`);
    return variable;
  };
  if (!MODULES.includes(module)) return [];
  const spec = moduleSpec(module);
  return Object.entries(propertyNames(module)).map(([property, hclName]): RuleRead => {
    const derived = spec.derived?.[property];
    if (derived && 'object' in derived) {
      const defaults = Object.fromEntries(Object.entries(derived.object).map(([attribute, name]) => [attribute, literal(byName(name).default)]).filter(([, v]) => v !== undefined));
      return { property, read: 'object', variables: derived.object, ...(Object.keys(defaults).length > 0 ? { defaults } : {}) };
    }
    if (derived) return { property, variable: derived.variable, read: 'lookup', lookup: derived.lookup, default: literal(byName(derived.variable).default) };
    const selected = /^([a-z0-9_]+) ([a-z0-9_]+) where ([a-z0-9_]+) == ([a-z0-9_]+)$/.exec(hclName);
    if (selected) {
      const [, name, attribute, where, equals] = selected as unknown as [string, string, string, string, string];
      const variable = byName(name);
      attributeOf(module, variable, attribute);
      return { property, variable: name, read: 'select', attribute, where, equals, whereDefault: literal(attributeOf(module, variable, where).default) };
    }
    const [head, rest] = hclName.split(' ');
    if (rest !== undefined) {
      const variable = byName(head);
      if (rest === 'key') return { property, variable: head, read: 'keys' };
      if (rest === 'item') {
        const { type } = variable;
        if ((type.kind !== 'list' && type.kind !== 'set') || !isStringOrNumber(type.element)) throw new Error(`modules/${module}: rule input ${hclName} reads the items of ${head}, which is not a list of strings or numbers`);
        return { property, variable: head, read: 'items' };
      }
      return { property, variable: head, read: 'each', attribute: rest, default: literal(attributeOf(module, variable, rest).default) };
    }
    const [name, attribute] = hclName.split('.');
    const variable = byName(name);
    if (attribute !== undefined) return { property, variable: name, read: 'attribute', attribute, default: literal(attributeOf(module, variable, attribute).default) };
    if (spec.lengths?.includes(name)) {
      if (!['list', 'set', 'map'].includes(variable.type.kind)) throw new Error(`modules/${module}: ${name} is read as its length but is not a collection`);
      return { property, variable: name, read: 'length', default: literal(variable.default) };
    }
    // A collection of objects stands in a rule as its size (the model has no rule on such a value itself).
    const countsElements = objectOf(variable.type) !== undefined && variable.type.kind !== 'object';
    return { property, variable: name, read: countsElements ? 'length' : 'value', default: literal(variable.default) };
  });
}

function readmeSummary(moduleDir: string): string {
  const text = fs.readFileSync(path.join(moduleDir, 'README.md'), 'utf8');
  const paragraph = text.split(/\n\s*\n/).find((p) => !p.startsWith('#'));
  return (paragraph ?? '').replace(/\s+/g, ' ').trim();
}

export function moduleBinding(root: string, module: string): ModuleBinding {
  const moduleDir = path.join(root, 'modules', module);
  const regions = MODULES.includes(module) ? moduleRegions(module) : [];
  const className = CLASS_NAMES[module] ?? pascalCase(path.basename(module));
  const variables = moduleVariables(moduleDir, regions).map((v): BindingVariable => {
    const prop = camelCase(v.name);
    if (RESERVED_MEMBERS.has(prop)) throw new Error(`modules/${module}: variable ${v.name} would shadow ${className}.${prop} of cdktn's TerraformHclModule`);
    return { name: v.name, prop, description: v.description, type: parseHclType(v.type), default: v.default };
  });
  const outputs = parseOutputs(fs.readFileSync(path.join(moduleDir, 'outputs.tf'), 'utf8')).map((o): BindingOutput => {
    const getter = camelCase(o.name);
    if (RESERVED_MEMBERS.has(getter)) throw new Error(`modules/${module}: output ${o.name} would shadow ${className}.${getter} of cdktn's TerraformHclModule`);
    return { name: o.name, getter, description: o.description, kind: outputKind(module, o.name, o.value, variables) };
  });
  for (const listed of Object.keys(OUTPUT_KINDS[module] ?? {})) {
    if (!outputs.some((o) => o.name === listed)) throw new Error(`modules/${module}: OUTPUT_KINDS lists ${listed}, which the module does not output`);
  }
  const formerClassName = FORMER_CLASS_NAMES[module];
  return { module, className, ...(formerClassName ? { formerClassName } : {}), summary: readmeSummary(moduleDir), variables, outputs, ruleReads: ruleReads(module, variables) };
}
