import { Token } from 'cdktn';
import { PROPERTY_LOOKUPS, RULE_TABLES, evaluateRules, terraformUse, terraformUses, type Naming, type PropertyLookup, type Rule } from './kit-model';

/**
 * The kit's rules of one module, run on the variables a construct was given: each model property a rule
 * reads comes from a variable (generated from the module's property-to-variable table), the module's
 * defaults fill what is left out (as Terraform would), and a value still unknown at synth (a token: an
 * output of another module, a resource attribute) is skipped, left to the module's own validation at plan.
 */

type Input = Record<string, unknown>;
type Variables = Readonly<Record<string, unknown>>;

/** How a model property is read from the variables (see lib/terraform/cdktn-bindings.ts, which writes them). */
export type RuleRead =
  /** The variable's value; a collection's number of elements. */
  | { readonly variable: string; readonly read: 'value' | 'length'; readonly default?: unknown }
  /** An attribute of an object variable. */
  | { readonly variable: string; readonly read: 'attribute'; readonly attribute: string; readonly default?: unknown }
  /** That attribute of each element of a collection. */
  | { readonly variable: string; readonly read: 'each'; readonly attribute: string; readonly default?: unknown }
  /** Each key of a map. */
  | { readonly variable: string; readonly read: 'keys' }
  /** Each item of a list of strings or numbers. */
  | { readonly variable: string; readonly read: 'items' }
  /** A lookup of the model applied to the variable's value (the hosts' vCPUs from instance_type). */
  | { readonly variable: string; readonly read: 'lookup'; readonly lookup: PropertyLookup; readonly default?: unknown }
  /** An object of several variables' values, by attribute (the fleet's pool settings). */
  | { readonly read: 'object'; readonly variables: Readonly<Record<string, string>>; readonly defaults?: Readonly<Record<string, unknown>> }
  /** The distinct values of an attribute over the elements whose `where` attribute equals `equals` (the roles of the session endpoints). */
  | { readonly variable: string; readonly read: 'select'; readonly attribute: string; readonly where: string; readonly equals: string; readonly whereDefault?: unknown };

type PerElementRead = Extract<RuleRead, { readonly read: 'keys' | 'items' | 'each' }>;

export type RuleReads = Readonly<Record<string, RuleRead>>;

/**
 * Whether a value is a token. A list token spread into a list (`[...other.list, 'x']`) leaves an item that
 * is a token only as a list's item (cdktn encodes a list token as a list of one string), so the item is
 * also asked as a list of itself.
 */
function isToken(value: unknown): boolean {
  return Token.isUnresolved(value) || Token.isUnresolved([value]);
}

/** Whether a value, or anything inside it, is a token (known only at plan or apply). */
export function holdsToken(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (isToken(value)) return true;
  if (Array.isArray(value)) return value.some(holdsToken);
  if (typeof value === 'object') return Object.values(value).some(holdsToken);
  return false;
}

/** Marks a value given but not known at synth (a token), as distinct from a value left out. */
const UNKNOWN = Symbol('unknown at synth');

/** A value as a rule sees it: UNKNOWN for a token, undefined for null. */
function known(value: unknown): unknown {
  if (holdsToken(value)) return UNKNOWN;
  return value === null ? undefined : value;
}

/** How a message names what a rule reads: the module's name with its variable in camelCase (the prop). */
export function cdktnName(hclName: string): string {
  return hclName.replace(/^[a-z0-9_]+/, (variable) => variable.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase()));
}

function cdktnNaming(rule: Rule<Input>): Naming {
  return Object.fromEntries(Object.entries(terraformUses(rule)[0]?.names ?? {}).map(([property, name]) => [property, cdktnName(name)]));
}

/** The elements of a collection variable (a map's entries, a list's items); UNKNOWN for a token. */
function elements(value: unknown): Array<[string, unknown]> | typeof UNKNOWN | undefined {
  if (value === null || value === undefined || typeof value !== 'object') return undefined;
  if (Token.isUnresolved(value)) return UNKNOWN;
  return Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
}

/**
 * A collection's number of elements; UNKNOWN when it is a token or a list holds one as an item, which may
 * be a whole list spread into it (`[...other.list, 'x']` looks two long whatever its length at plan). A
 * map's keys, or an object item with a token inside, leave the number known.
 */
function length(value: unknown): number | typeof UNKNOWN | undefined {
  const items = elements(value);
  if (items === UNKNOWN || items === undefined) return items;
  if (Array.isArray(value) && value.some(isToken)) return UNKNOWN;
  return items.length;
}

/** A variable's value as a rule sees it: the module's default when left out. */
function valueOf(variables: Variables, variable: string, fallback: unknown): unknown {
  const value = variables[variable];
  return value === undefined ? fallback : known(value);
}

/** The value of a property that has one value per construct (not per element of a collection). */
function single(read: RuleRead, variables: Variables): unknown {
  switch (read.read) {
    case 'value':
      return valueOf(variables, read.variable, read.default);
    case 'length':
      return length(variables[read.variable] ?? read.default);
    case 'attribute': {
      const value = variables[read.variable];
      if (value === undefined || value === null) return undefined;
      if (Token.isUnresolved(value)) return UNKNOWN;
      const attribute = (value as Input)[read.attribute];
      return attribute === undefined || attribute === null ? read.default : known(attribute);
    }
    case 'lookup': {
      const value = valueOf(variables, read.variable, read.default);
      return value === UNKNOWN || value === undefined ? value : PROPERTY_LOOKUPS[read.lookup](value);
    }
    case 'select': {
      const items = elements(variables[read.variable]);
      if (items === UNKNOWN) return UNKNOWN;
      const values: unknown[] = [];
      for (const [, element] of items ?? []) {
        if (isToken(element)) return UNKNOWN;
        if (element === null || typeof element !== 'object') continue;
        const where = (element as Input)[read.where] ?? read.whereDefault;
        const value = (element as Input)[read.attribute];
        if (holdsToken(where) || holdsToken(value)) return UNKNOWN;
        if (where === read.equals && !values.includes(value)) values.push(value);
      }
      return values;
    }
    case 'object': {
      const object: Input = {};
      for (const [attribute, variable] of Object.entries(read.variables)) {
        const value = valueOf(variables, variable, read.defaults?.[attribute]);
        if (value === UNKNOWN) return UNKNOWN;
        if (value !== undefined) object[attribute] = value;
      }
      return object;
    }
    default:
      return undefined;
  }
}

/** The value of a per-element property for one element (a map's key and value, a list's index and item). */
function perElement(read: PerElementRead, key: string, element: unknown): unknown {
  if (read.read === 'keys') return known(key);
  if (read.read === 'items') return known(element);
  if (isToken(element)) return UNKNOWN;
  if (element === null || typeof element !== 'object') return undefined;
  const attribute = (element as Input)[read.attribute];
  return attribute === undefined || attribute === null ? read.default : known(attribute);
}

/**
 * The rule's messages for one input; none when a property it reads is unknown at synth (Terraform
 * decides at plan). A rule reads its properties and the others its messages name (a custom check's).
 */
function messages(rule: Rule<Input>, input: Input): string[] {
  const reads = [...rule.properties, ...Object.keys(terraformUses(rule)[0]?.names ?? {})];
  if (reads.some((p) => input[p] === UNKNOWN)) return [];
  const defined: Input = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== UNKNOWN && v !== undefined));
  // A custom check sees an unset variable as Terraform does: null (e.g. neither filename nor S3 given).
  if (rule.kind === 'custom') for (const p of rule.properties) defined[p] ??= null;
  return evaluateRules([rule], defined, cdktnNaming).map((v) => v.message);
}

const isPerElement = (read: RuleRead | undefined): read is PerElementRead => read?.read === 'keys' || read?.read === 'items' || read?.read === 'each';

/** The rows of lib/model that `module` states, in table order, each with that module's names only. */
export function moduleRules(module: string): Array<Rule<Input>> {
  return (Object.values(RULE_TABLES).flat() as Array<Rule<Input>>).flatMap((r) => {
    const use = terraformUse(r, module);
    return use ? [{ ...r, terraform: use }] : [];
  });
}

/**
 * The messages of every rule of `module` the variables break, in table order, naming the props. A rule
 * on a collection's elements (the proxy's endpoint names and roles, the pooler's consumer users) runs once
 * per element; a value rule checks its other properties once, as each property is checked alone.
 */
export function kitViolations(module: string, variables: Variables, reads: RuleReads): string[] {
  const base: Input = {};
  for (const [property, read] of Object.entries(reads)) {
    if (!isPerElement(read)) base[property] = single(read, variables);
  }
  return moduleRules(module).flatMap((rule) => {
    const own = rule.properties.filter((p) => isPerElement(reads[p]));
    if (own.length === 0) return messages(rule, base);
    const collections = [...new Set(own.map((p) => (reads[p] as PerElementRead).variable))];
    if (collections.length > 1) throw new Error(`${module}: rule ${rule.id} reads the elements of more than one variable (${collections.join(', ')})`);
    const items = elements(variables[collections[0]]);
    const runs: Input[] = items === UNKNOWN || items === undefined ? [] : items.map(([key, element]) => Object.fromEntries(own.map((p) => [p, perElement(reads[p] as PerElementRead, key, element)])));
    if (rule.kind === 'custom') return runs.flatMap((run) => messages(rule, { ...base, ...run }));
    return rule.properties.flatMap((p) => (own.includes(p) ? runs.map((run) => ({ [p]: run[p] })) : [{ [p]: base[p] }]).flatMap((input) => messages(rule, input)));
  });
}
