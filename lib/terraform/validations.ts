/**
 * The generated regions that state the model's rules in a module: each rule's `validation` blocks in its
 * variable or `precondition` blocks on a resource (validation-blocks.ts, custom-rule-blocks.ts), the dashboard's
 * `thresholds` variable and the engine-version `check`.
 */
import { DEFAULT_ALARM_THRESHOLDS, unknownEngineVersionWarning } from '../model';
import { CUSTOM_BLOCKS } from './custom-rule-blocks';
import { consumerEnvironmentRegion } from './environment';
import { POOL_SETTINGS_MODULES, POOL_VARIABLES, poolSettingsRegion } from './pool-variables';
import type { Region } from './regions';
import { hclTemplate, slot } from './hcl';
import { type ModuleRule, preconditionOf, rulesOf, variableOf } from './modules';
import { type Block, type ValueRule, isValue, valueRuleBlocks } from './validation-blocks';

const RULES_SOURCE = 'lib/model/rules.ts';

function validationLines(blocks: ReadonlyArray<Block>): string[] {
  return blocks.flatMap((b) => ['', '  validation {', `    condition     = ${b.condition}`, `    error_message = ${b.errorMessage}`, '  }']);
}

/** A precondition in a resource's `lifecycle` block, or (`indent` two spaces) directly in an output. */
function preconditionLines(block: Block, indent = '    '): string[] {
  return [`${indent}precondition {`, `${indent}  condition     = ${block.condition}`, `${indent}  error_message = ${block.errorMessage}`, `${indent}}`];
}

/**
 * The regions of a rule: its precondition in main.tf, or its validation in the variable it reads. A value
 * rule over properties of several variables has a validation in each, the first region named by the
 * rule's id and the others `<id>-<variable>`.
 */
function ruleRegions(module: string, rule: ModuleRule): Region[] {
  const precondition = preconditionOf(module, rule.id);
  const indent = precondition?.address.startsWith('output.') ? '  ' : '    ';
  const region = (id: string, blocks: Block[]): Region => ({
    module,
    file: precondition?.file ?? 'variables.tf',
    id,
    source: RULES_SOURCE,
    lines: precondition ? blocks.flatMap((b) => preconditionLines(b, indent)) : validationLines(blocks),
  });
  if (isValue(rule) && !precondition) {
    return valueRuleBlocks(module, rule).map(({ variable, block }, i) => region(i === 0 ? rule.id : `${rule.id}-${variable.replace(/_/g, '-')}`, [block]));
  }
  const blocks = isValue(rule) ? valueRuleBlocks(module, rule).map((b) => b.block) : CUSTOM_BLOCKS[rule.id]?.(rule);
  if (!blocks) throw new Error(`rule ${rule.id} of ${module} has no HCL renderer`);
  return [region(rule.id, blocks)];
}

const snakeOf = (name: string) => name.replace(/^thresholds\./, '');

/** The dashboard's whole `thresholds` variable: its keys and defaults, and the threshold rules. */
function thresholdsRegion(rules: ReadonlyArray<ModuleRule>): Region {
  const names = Object.assign({}, ...rules.map((r) => r.terraform.names)) as Record<string, string>;
  const keys = Object.keys(DEFAULT_ALARM_THRESHOLDS) as Array<keyof typeof DEFAULT_ALARM_THRESHOLDS>;
  const pad = Math.max(...keys.map((k) => snakeOf(names[k]).length));
  return {
    module: 'dashboard',
    file: 'variables.tf',
    id: 'thresholds',
    source: 'lib/model/metrics.ts and rules.ts',
    lines: [
      'variable "thresholds" {',
      '  description = "Alarm thresholds; any left out take the kit\'s defaults (DEFAULT_ALARM_THRESHOLDS of lib/model)."',
      '  type = object({',
      ...keys.map((k) => `    ${snakeOf(names[k]).padEnd(pad)} = optional(number, ${DEFAULT_ALARM_THRESHOLDS[k]})`),
      '  })',
      '  default  = {}',
      '  nullable = false',
      ...validationLines(rules.filter(isValue).flatMap((r) => valueRuleBlocks('dashboard', r).map((b) => b.block))),
      '}',
    ],
  };
}

/** The cluster's warning, as the CDK construct's annotation, for a version the rules accept but the catalog does not list. */
function engineVersionOfferedRegion(): Region {
  return {
    module: 'aurora-optimized-reads',
    file: 'main.tf',
    id: 'engine-version-offered',
    source: RULES_SOURCE,
    lines: [
      'check "engine_version_offered" {',
      '  assert {',
      '    condition     = contains(local.offered_engine_versions, var.engine_version)',
      `    error_message = ${hclTemplate(unknownEngineVersionWarning(slot(0), 'engine_version'), ['var.engine_version'])}`,
      '  }',
      '}',
    ],
  };
}

/** A module's generated regions: its rules' blocks, the pool and threshold variables declared whole, the engine-version check, lambda-consumer's environment. */
export function moduleRegions(module: string): Region[] {
  const rules = rulesOf(module);
  const thresholdRules = rules.filter((r) => variableOf(r.terraform.names[r.properties[0]]) === 'thresholds');
  // Both proxies' pool variables are declared whole (pool-variables.ts), with the validations of the rules that check only them.
  const poolVariables = new Set<string>(POOL_SETTINGS_MODULES.includes(module) ? Object.values(POOL_VARIABLES) : []);
  const poolRules = rules.filter((r): r is ValueRule => isValue(r) && !preconditionOf(module, r.id) && valueRuleBlocks(module, r).every((b) => poolVariables.has(b.variable)));
  const poolValidations = (variable: string) => validationLines(poolRules.flatMap((r) => valueRuleBlocks(module, r)).filter((b) => b.variable === variable).map((b) => b.block));
  return [
    ...(poolVariables.size > 0 ? [poolSettingsRegion(module, poolValidations)] : []),
    ...rules.filter((r) => !thresholdRules.includes(r) && !(poolRules as ModuleRule[]).includes(r)).flatMap((r) => ruleRegions(module, r)),
    ...(thresholdRules.length > 0 ? [thresholdsRegion(thresholdRules)] : []),
    ...(module === 'aurora-optimized-reads' ? [engineVersionOfferedRegion()] : []),
    ...(module === 'lambda-consumer' ? [consumerEnvironmentRegion()] : []),
  ];
}
