import { Token } from 'cdktn';
import { RULE_TABLES, evaluateRules, terraformUse, terraformUses, type Naming, type Rule } from './kit-model';

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
  | { readonly variable: string; readonly read: 'value' | 'count'; readonly default?: unknown }
  | { readonly variable: string; readonly read: 'attribute' | 'each'; readonly attribute: string; readonly default?: unknown }
  | { readonly variable: string; readonly read: 'keys' };

export type RuleReads = Readonly<Record<string, RuleRead>>;

/** Whether a value, or anything inside it, is a token (known only at plan or apply). */
export function holdsToken(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (Token.isUnresolved(value)) return true;
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

/** The value of a property that has one value per construct (not per element of a collection). */
function single(read: RuleRead, variables: Variables): unknown {
  const value = variables[read.variable];
  switch (read.read) {
    case 'value':
      return value === undefined ? read.default : known(value);
    case 'count': {
      const items = elements(value ?? read.default);
      return items === UNKNOWN ? UNKNOWN : items?.length;
    }
    case 'attribute': {
      if (value === undefined || value === null) return undefined;
      if (Token.isUnresolved(value)) return UNKNOWN;
      const attribute = (value as Input)[read.attribute];
      return attribute === undefined || attribute === null ? read.default : known(attribute);
    }
    default:
      return undefined;
  }
}

/** The value of a per-element property for one element. */
function perElement(read: RuleRead, key: string, element: unknown): unknown {
  if (read.read === 'keys') return key;
  if (read.read !== 'each' || element === null || typeof element !== 'object') return undefined;
  if (Token.isUnresolved(element)) return UNKNOWN;
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

const isPerElement = (read: RuleRead) => read.read === 'keys' || read.read === 'each';

/** The rows of lib/model that `module` states, in table order, each with that module's names only. */
export function moduleRules(module: string): Array<Rule<Input>> {
  return (Object.values(RULE_TABLES).flat() as Array<Rule<Input>>).flatMap((r) => {
    const use = terraformUse(r, module);
    return use ? [{ ...r, terraform: use }] : [];
  });
}

/**
 * The messages of every rule of `module` the variables break, in table order, naming the props. A rule
 * on a collection's elements (the proxy's endpoint names and roles) runs once per element.
 */
export function kitViolations(module: string, variables: Variables, reads: RuleReads): string[] {
  const base: Input = {};
  for (const [property, read] of Object.entries(reads)) {
    if (!isPerElement(read)) base[property] = single(read, variables);
  }
  const collections = [...new Set(Object.values(reads).filter(isPerElement).map((r) => r.variable))];
  if (collections.length > 1) throw new Error(`${module}: rules read the elements of more than one variable (${collections.join(', ')})`);
  const items = collections.length === 1 ? elements(variables[collections[0]]) : undefined;
  return moduleRules(module).flatMap((rule) => {
    const own = rule.properties.filter((p) => reads[p] !== undefined && isPerElement(reads[p]));
    if (own.length === 0) return messages(rule, base);
    if (items === UNKNOWN || items === undefined) return [];
    return items.flatMap(([key, element]) => {
      const input: Input = { ...base };
      for (const [property, read] of Object.entries(reads).filter(([, r]) => isPerElement(r))) input[property] = perElement(read, key, element);
      return messages(rule, input);
    });
  });
}
