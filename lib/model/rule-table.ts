/**
 * The machinery of the rule tables (rules.ts, and the rehearsal's own table): one row per rule, its
 * kind and its bounds, values or pattern as data, the properties it reads, how each flavour names them,
 * and its message template. The CDK constructs and the rehearsal run the rows (runRules); the Terraform
 * generator (lib/terraform) renders the same rows as HCL conditions and messages from the same data.
 */

/**
 * - `integer-range`: an integer from min to max.
 * - `one-of`: one of a list of values.
 * - `pattern`: a name matching a regular expression (the same text in JavaScript and Terraform's RE2),
 *   without `--` or a trailing hyphen.
 * - `percentage`: a number above 0 and at most 100; `non-negative`: a number of 0 or more.
 * - `custom`: logic of its own (a catalog lookup, a rule spanning properties); each flavour renders it by hand.
 */
export type RuleKind = 'integer-range' | 'one-of' | 'pattern' | 'percentage' | 'non-negative' | 'custom';

/** How a message names each property: CDK prop names, Terraform variables, rehearsal settings. */
export type Naming = Readonly<Record<string, string>>;

/** Where a Terraform module states a rule: the module, and the HCL name of each property the rule reads. */
export interface TerraformUse {
  /** The module directory under modules/, e.g. `rds-proxy` or `examples/complete`. */
  readonly module: string;
  /** Model property -> the variable (or a path into one, e.g. `endpoint.target_role`) messages name. */
  readonly names: Naming;
  /** The variable may be null, meaning unset (the rule holds). */
  readonly nullable?: boolean;
}

interface RuleBase<I> {
  /** Stable id, used by the shared test vectors and the generated Terraform regions. */
  readonly id: string;
  readonly kind: RuleKind;
  /** The model properties the rule reads (the keys of the shared vectors); more than one for rules that span props. */
  readonly properties: ReadonlyArray<keyof I & string>;
  /** Message names of the flavour that runs the table (CDK props, rehearsal settings), where not the property. */
  readonly names?: Naming;
  /**
   * The Terraform modules that state the rule, if any: one, or several when modules share an input
   * (the pool settings of rds-proxy and pgbouncer-proxy), each naming its own variables.
   */
  readonly terraform?: TerraformUse | ReadonlyArray<TerraformUse>;
  /** Why the rule exists in Terraform only (the CDK construct has no equivalent prop). */
  readonly terraformOnly?: string;
  /** Why no Terraform module states the rule (its property is no module input, e.g. derived from another). */
  readonly notInTerraform?: string;
  /** One-line summary for the modules' README tables. */
  readonly summary: string;
  /**
   * Set when the rule restates a constraint AWS (or the hashicorp/aws provider) imposes, rather than a
   * choice of the kit: what AWS requires and where that is written (a documentation URL, or a provider
   * source path and function). docs/AWS-RULES.md lists these rows, and each must have a shared vector.
   */
  readonly aws?: AwsSource;
}

/** Where an AWS constraint is written down. */
export interface AwsSource {
  /** The constraint in AWS's terms, e.g. "RDS identifiers are lower case, start with a letter, ...". */
  readonly constraint: string;
  /** Documentation URLs, or provider source as `hashicorp/terraform-provider-aws internal/service/rds/validate.go validIdentifier`. */
  readonly sources: ReadonlyArray<string>;
}

/** A rule on one value, applied to each of its properties alone. */
export interface ValueRule<I> extends RuleBase<I> {
  readonly kind: Exclude<RuleKind, 'custom'>;
  readonly accepts: (value: unknown) => boolean;
  /** The message for a rejected value, naming the property `name` and showing the value as `shown`. */
  readonly message: (name: string, shown: string, value?: unknown) => string;
}

export interface IntegerRangeRule<I> extends ValueRule<I> {
  readonly kind: 'integer-range';
  readonly min: number;
  readonly max: number;
  /** Why the range is what it is; the message's fix. */
  readonly fix: string;
}

export interface OneOfRule<I> extends ValueRule<I> {
  readonly kind: 'one-of';
  readonly values: ReadonlyArray<string | number>;
}

export interface PatternRule<I> extends ValueRule<I> {
  readonly kind: 'pattern';
  /** Anchored regular expression, valid in JavaScript and RE2 alike. */
  readonly pattern: string;
  /** Neither `--` nor a trailing hyphen (RE2 has no lookahead, so these are separate tests). */
  readonly noDoubleOrTrailingHyphen: boolean;
}

export interface CustomRule<I> extends RuleBase<I> {
  readonly kind: 'custom';
  /** The message of a failing input (undefined when fine), naming properties by `names`. */
  readonly check: (input: I, names: (property: keyof I & string) => string) => string | undefined;
}

export interface BoundRule<I> extends ValueRule<I> {
  readonly kind: 'percentage' | 'non-negative';
}

export type Rule<I> = IntegerRangeRule<I> | OneOfRule<I> | PatternRule<I> | BoundRule<I> | CustomRule<I>;

/** Every Terraform module that states the rule, with its names. */
export function terraformUses<I>(rule: Rule<I>): ReadonlyArray<TerraformUse> {
  if (rule.terraform === undefined) return [];
  return Array.isArray(rule.terraform) ? (rule.terraform as ReadonlyArray<TerraformUse>) : [rule.terraform as TerraformUse];
}

/** How `module` states the rule, if it does. */
export function terraformUse<I>(rule: Rule<I>, module: string): TerraformUse | undefined {
  return terraformUses(rule).find((u) => u.module === module);
}

export function isValueRule<I>(rule: Rule<I>): rule is Exclude<Rule<I>, CustomRule<I>> {
  return rule.kind !== 'custom';
}

/** A failed rule: the row and its message. */
export interface Violation<I> {
  readonly rule: Rule<I>;
  readonly property?: keyof I & string;
  readonly message: string;
}

/** How a value shows in a message: lists joined by commas, maps as key=value. */
export function showValue(value: unknown): string {
  if (Array.isArray(value)) return value.join(',');
  if (value && typeof value === 'object') return Object.entries(value).map(([k, v]) => `${k}=${v}`).join(',');
  return String(value);
}

/**
 * Runs every rule whose properties are set (a value rule: each of its set properties alone) and
 * returns the failures, in table order. `naming` overrides each row's own names (e.g. Terraform's).
 */
export function evaluateRules<I>(rules: ReadonlyArray<Rule<I>>, input: I, naming?: (rule: Rule<I>) => Naming | undefined): Array<Violation<I>> {
  const out: Array<Violation<I>> = [];
  for (const rule of rules) {
    const names = naming?.(rule) ?? rule.names ?? {};
    const nameOf = (p: keyof I & string) => names[p] ?? p;
    if (isValueRule(rule)) {
      for (const property of rule.properties.filter((p) => input[p] !== undefined)) {
        const value = input[property];
        if (!rule.accepts(value)) out.push({ rule, property, message: rule.message(nameOf(property), showValue(value), value) });
      }
    } else if (rule.properties.every((p) => input[p] !== undefined)) {
      const message = rule.check(input, nameOf);
      if (message !== undefined) out.push({ rule, message });
    }
  }
  return out;
}

/** The messages of evaluateRules, as the constructs and the rehearsal report them. */
export function runRules<I>(rules: ReadonlyArray<Rule<I>>, input: I): string[] {
  return evaluateRules(rules, input).map((v) => v.message);
}

type Common<I> = Omit<RuleBase<I>, 'kind' | 'summary'> & { readonly summary?: string };

export function integerRange<I>(row: Common<I> & { min: number; max: number; fix: string }): IntegerRangeRule<I> {
  return {
    ...row,
    kind: 'integer-range',
    summary: row.summary ?? `an integer from ${row.min} to ${row.max}`,
    accepts: (v) => typeof v === 'number' && Number.isInteger(v) && v >= row.min && v <= row.max,
    message: (name, shown) => `${name} ${shown} is out of range: ${row.fix} (an integer from ${row.min} to ${row.max})`,
  };
}

/** "a, b or c" */
export function listWithOr(values: ReadonlyArray<string | number>): string {
  return values.length < 2 ? values.join('') : `${values.slice(0, -1).join(', ')} or ${values[values.length - 1]}`;
}

/** `what` names the kind of value, e.g. "a connection mode"; `unit` follows the list of values. */
export function oneOf<I>(row: Common<I> & { values: ReadonlyArray<string | number>; what: string; unit?: string }): OneOfRule<I> {
  const { what, unit, ...rest } = row;
  const use = `${listWithOr(row.values)}${unit ? ` ${unit}` : ''}`;
  return {
    ...rest,
    kind: 'one-of',
    summary: row.summary ?? `one of ${use}`,
    accepts: (v) => row.values.includes(v as string | number),
    message: (name, shown) => `${name} ${shown} is not ${what}: use ${use}`,
  };
}

/** `what` names the thing, e.g. "proxy endpoint name"; `use` describes the allowed form. */
export function pattern<I>(row: Common<I> & { pattern: string; noDoubleOrTrailingHyphen: boolean; what: string; use: string }): PatternRule<I> {
  const { what, use, ...rest } = row;
  const re = new RegExp(row.pattern);
  return {
    ...rest,
    kind: 'pattern',
    summary: row.summary ?? use,
    accepts: (v) => typeof v === 'string' && re.test(v) && !(row.noDoubleOrTrailingHyphen && (v.includes('--') || v.endsWith('-'))),
    message: (name, shown) => `${name} ${shown} is not a valid ${what}: use ${use}`,
  };
}

export function percentage<I>(row: Common<I>): BoundRule<I> {
  return {
    ...row,
    kind: 'percentage',
    summary: row.summary ?? 'above 0 and at most 100',
    accepts: (v) => typeof v === 'number' && v > 0 && v <= 100,
    message: (name, shown) => `${name} ${shown} is not a percentage: use a value above 0 and at most 100`,
  };
}

export function nonNegative<I>(row: Common<I>): BoundRule<I> {
  return {
    ...row,
    kind: 'non-negative',
    summary: row.summary ?? '0 or more',
    accepts: (v) => typeof v === 'number' && v >= 0,
    message: (name, shown, value) => `${name} ${shown} ${Number.isNaN(value) ? 'is not a number' : 'is negative'}: use 0 or more`,
  };
}

export function custom<I>(row: Common<I> & { summary: string; check: CustomRule<I>['check'] }): CustomRule<I> {
  return { ...row, kind: 'custom' };
}
