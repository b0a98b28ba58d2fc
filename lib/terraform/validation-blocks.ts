/**
 * The HCL a rule's check becomes (a `validation` or `precondition` block's condition and message), for the
 * rules whose check is their data: a range, values or a pattern over one or more variables.
 */
import type { CustomRule } from '../model';
import { hclString, hclTemplate, hclValue, slot } from './hcl';
import { type ModuleRule, expressionOf, moduleSpec, variableOf } from './modules';

export type ValueRule = Exclude<ModuleRule, CustomRule<Record<string, unknown>>>;

/** A condition and the message Terraform shows when it fails. */
export interface Block {
  readonly condition: string;
  readonly errorMessage: string;
}

const not = (condition: string) => (condition.startsWith('(') ? `!${condition}` : `!(${condition})`);

/** The HCL condition that a value rule accepts `x`. */
export function acceptsHcl(rule: ValueRule, x: string): string {
  switch (rule.kind) {
    case 'integer-range':
      return `floor(${x}) == ${x} && ${x} >= ${rule.min} && ${x} <= ${rule.max}`;
    case 'one-of':
      return `contains(${hclValue(rule.values)}, ${x})`;
    case 'pattern': {
      const hyphens = rule.noDoubleOrTrailingHyphen ? ` && !strcontains(${x}, "--") && !endswith(${x}, "-")` : '';
      return `(can(regex(${hclString(rule.pattern)}, ${x}))${hyphens})`;
    }
    case 'percentage':
      return `${x} > 0 && ${x} <= 100`;
    case 'non-negative':
      return `${x} >= 0`;
  }
}

export const isValue = (rule: ModuleRule): rule is ValueRule => rule.kind !== 'custom';

/** The HCL expression a property's plain name reads: the variable, or its number of elements (ModuleSpec.lengths). */
function valueExpression(module: string, name: string): string {
  const x = expressionOf(name)!;
  return moduleSpec(module).lengths?.includes(name) ? `length(${x})` : x;
}

/**
 * The validation blocks of a value rule, by the variable each belongs to: one block per variable. A
 * property inside a collection (`endpoints key`, `consumer_users item`) is checked for every element.
 */
export function valueRuleBlocks(module: string, rule: ValueRule): Array<{ variable: string; block: Block }> {
  const names = rule.terraform.names;
  const byVariable = new Map<string, string[]>();
  for (const p of rule.properties) byVariable.set(variableOf(names[p]), [...(byVariable.get(variableOf(names[p])) ?? []), p]);
  return [...byVariable].map(([variable, properties]) => ({ variable, block: valueBlock(module, rule, properties) }));
}

function valueBlock(module: string, rule: ValueRule, properties: ReadonlyArray<string>): Block {
  const names = rule.terraform.names;
  const collection = moduleSpec(module).collections?.[names[properties[0]]];
  if (collection) {
    const ok = acceptsHcl(rule, collection.value);
    return {
      condition: `alltrue([for ${collection.each} : ${ok}])`,
      errorMessage: hclTemplate(rule.message(names[properties[0]], slot(0)), [`try([for ${collection.each} : ${collection.value} if ${not(ok)}][0], "")`]),
    };
  }
  if (properties.length > 1) {
    // One rule over several attributes: each is checked and every failing one reported.
    const map = `{ ${properties.map((p) => `${hclString(names[p])} = ${valueExpression(module, names[p])}`).join(', ')} }`;
    const ok = acceptsHcl(rule, 'v');
    return {
      condition: `alltrue([for k, v in ${map} : ${ok}])`,
      errorMessage: `join("\\n", [for k, v in ${map} : ${hclTemplate(rule.message(slot(0), slot(1)), ['k', 'v'])} if ${not(ok)}])`,
    };
  }
  const x = valueExpression(module, names[properties[0]]);
  const message = rule.message(names[properties[0]], slot(0));
  // HCL's || does not short-circuit, and the message is rendered even when the condition holds.
  return rule.terraform.nullable
    ? { condition: `${x} == null ? true : (${acceptsHcl(rule, x)})`, errorMessage: hclTemplate(message, [`${x} == null ? "null" : ${x}`]) }
    : { condition: acceptsHcl(rule, x), errorMessage: hclTemplate(message, [x]) };
}
