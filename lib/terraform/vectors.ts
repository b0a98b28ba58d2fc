import * as fs from 'fs';
import * as path from 'path';
import { OFFERED_ENGINE_VERSIONS, OPTIMIZED_READS_MIN_MAJOR, evaluateRules, parseEngineVersion, terraformUses, type Violation } from '../model';
import { alignedMap, generatedBy, hclString, hclValue } from './hcl';
import { type ModuleRule, PROXY_ENDPOINT, derivedValue, derivedVariables, expressionOf, modulesOfRule, moduleSpec, preconditionOf, propertyNames, ruleVariable, rulesOf, variableOf } from './modules';
import { variableDefaults } from './module-variables';
import { moduleRegions } from './validations';

/**
 * The shared validation vectors (test/vectors/validation-vectors.json) as `terraform test` runs, one
 * file per module: a vector sets only the properties its rule reads, the module's defaults fill in the
 * rest, and the expected outcome is the model's for that full input.
 */
export interface Vector {
  readonly rule: string;
  readonly input: Record<string, unknown>;
  readonly accepted: boolean;
  readonly message: string | null;
}

export interface VectorExpectation {
  readonly module: string;
  readonly vector: Vector;
  /** The model's input: the module's defaults and fixture, and the vector's properties over them. */
  readonly input: Record<string, unknown>;
  /** The model's messages for the module's full input. */
  readonly messages: string[];
  /** The same messages as the module words them (its variable names). */
  readonly terraformMessages: string[];
  /** What `expect_failures` lists: variables, resources with a precondition, checks. */
  readonly failures: string[];
}

type Vars = Record<string, unknown>;

/** Vector values of properties that live inside a collection variable, as that variable. */
const COLLECTION_VALUES: Readonly<Record<string, (value: unknown, module: string) => unknown>> = {
  endpoints: (count) => Object.fromEntries(Array.from({ length: count as number }, (_, i) => [`endpoint-${i + 1}`, PROXY_ENDPOINT])),
  // The PgBouncer engine's endpoints have no default role.
  'endpoints key': (name, module) => ({ [name as string]: module === 'pgbouncer-proxy' ? { ...PROXY_ENDPOINT, role: 'READ_WRITE' } : PROXY_ENDPOINT }),
  'endpoints target_role': (role) => ({ 'endpoint-1': { ...PROXY_ENDPOINT, target_role: role } }),
  'consumer_users item': (user) => [user],
  'endpoints role': (role) => ({ 'endpoint-1': { ...PROXY_ENDPOINT, role } }),
  'endpoints pool_mode': (mode) => ({ 'endpoint-1': { ...PROXY_ENDPOINT, role: 'READ_WRITE', pool_mode: mode } }),
  // The roles some endpoint uses in session pooling: an endpoint of each, in session pooling.
  'endpoints role where pool_mode == session': (roles) => Object.fromEntries((roles as string[]).map((role, i) => [`endpoint-${i + 1}`, { ...PROXY_ENDPOINT, role, pool_mode: 'session' }])),
};

/** A list of `count` reader endpoints, for a variable a rule reads as its length. */
const readerEndpoints = (count: unknown) => Array.from({ length: count as number }, (_, i) => `vectors-reader-${i + 1}.abc.us-east-1.rds.amazonaws.com`);

/**
 * A vector's input as the values of the module's variables it sets, merged into the fixture where it sets
 * an attribute: what `terraform test` passes (vectorVariables) and the cdktn constructs take as props.
 */
export function vectorValues(module: string, input: Record<string, unknown>): Vars {
  const names = propertyNames(module);
  const spec = moduleSpec(module);
  const out: Vars = {};
  for (const [property, value] of Object.entries(input)) {
    const name = names[property];
    if (name === undefined) throw new Error(`${module}: no variable for property ${property}`);
    const derived = spec.derived?.[property];
    if (derived) Object.assign(out, derivedVariables(derived, value));
    else if (spec.lengths?.includes(name)) out[name] = readerEndpoints(value);
    else if (COLLECTION_VALUES[name]) out[name.split(' ')[0]] = COLLECTION_VALUES[name](value, module);
    else if (name.includes('.')) {
      const [variable, attribute] = name.split('.');
      out[variable] = { ...((out[variable] ?? spec.fixture[variable] ?? {}) as Vars), [attribute]: value };
    } else out[name] = value;
  }
  return out;
}

const isObject = (value: unknown): value is Vars => value !== null && typeof value === 'object' && !Array.isArray(value);

/** A map of objects (endpoints) one entry a line, as terraform fmt leaves it; any other value on one line. */
function vectorHcl(value: unknown): string {
  if (isObject(value) && Object.keys(value).length > 0 && Object.values(value).every(isObject)) {
    const names = Object.keys(value);
    const pad = Math.max(...names.map((n) => hclString(n).length));
    return `{\n${names.map((n) => `      ${hclString(n).padEnd(pad)} = ${hclValue(value[n])}`).join('\n')}\n    }`;
  }
  return hclValue(value);
}

/** A vector's input as the module's variables (HCL text), merged into the fixture where it sets an attribute. */
export function vectorVariables(module: string, input: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(vectorValues(module, input)).map(([name, value]) => [name, vectorHcl(value)]));
}

/** The model input a module's variables amount to (defaults and fixture), for properties with a plain variable. */
function modelInput(module: string, vars: Vars): Vars {
  const input: Vars = {};
  const spec = moduleSpec(module);
  for (const [property, name] of Object.entries(propertyNames(module))) {
    const derived = spec.derived?.[property];
    if (derived) {
      input[property] = derivedValue(derived, vars);
      continue;
    }
    if (spec.lengths?.includes(name)) {
      if (Array.isArray(vars[name])) input[property] = (vars[name] as unknown[]).length;
      continue;
    }
    if (COLLECTION_VALUES[name] || expressionOf(name) === undefined) continue;
    const [variable, attribute] = name.split('.');
    const value = attribute === undefined ? vars[variable] : (vars[variable] as Vars | undefined)?.[attribute];
    if (value !== undefined && value !== null) input[property] = value;
  }
  return input;
}

/** The checkable object a violation fails: the variable, or the resource whose precondition states the rule. */
function failingObject(module: string, violation: Violation<Vars>, input: Vars): string {
  const rule = violation.rule as ModuleRule;
  const precondition = preconditionOf(module, rule.id);
  if (precondition) return precondition.address;
  if (rule.id === 'engine-version') {
    // The variable checks the form and the first major; the family floor and deprecation are a precondition.
    const parsed = parseEngineVersion(input.engineVersion as string);
    if (parsed && parsed.major >= OPTIMIZED_READS_MIN_MAJOR) return 'aws_rds_cluster.this';
  }
  // A value rule over several variables fails at the variable of the property that broke it.
  return `var.${violation.property ? variableOf(rule.terraform.names[violation.property]) : ruleVariable(rule)}`;
}

const ROOT = path.join(__dirname, '..', '..');
/** The mocked provider's values every module test shares. */
export const MOCKS_DIR = path.join(ROOT, 'test', 'terraform', 'mocks', 'aws');
export const VECTORS_FILE = path.join(ROOT, 'test', 'vectors', 'validation-vectors.json');

export function loadVectors(): Vector[] {
  return JSON.parse(fs.readFileSync(VECTORS_FILE, 'utf8')) as Vector[];
}

/** One expectation per vector and module that states its rule (the pool settings' vectors run in both engines' modules). */
export function vectorExpectations(): VectorExpectation[] {
  return loadVectors().flatMap((vector) => modulesOfRule(vector.rule).map((module) => expectation(module, vector)));
}

function expectation(module: string, vector: Vector): VectorExpectation {
  const defaults = variableDefaults(path.join(ROOT, 'modules', module), moduleRegions(module));
  // The properties the module derives from the vector's variables too (the fleet's pool from max_connections_percent).
  const input = { ...modelInput(module, { ...defaults, ...moduleSpec(module).fixture, ...vectorValues(module, vector.input) }), ...vector.input };
  const violations = evaluateRules(rulesOf(module), input);
  const objects = [...new Set(violations.map((v) => failingObject(module, v, input)))];
  // Terraform validates variables first; a resource whose inputs failed validation is not planned,
  // so its precondition is not evaluated.
  const variables = objects.filter((o) => o.startsWith('var.'));
  const failures = variables.length > 0 ? variables : objects;
  // The cluster module's check block warns, as the CDK construct's annotation does, about a version
  // the rules accept but the catalog does not list; terraform test counts a failed check as a failure.
  const engineVersion = input.engineVersion as string | undefined;
  if (module === 'aurora-optimized-reads' && engineVersion !== undefined && !OFFERED_ENGINE_VERSIONS.includes(engineVersion) && !failures.includes('var.engine_version')) {
    failures.push('check.engine_version_offered');
  }
  return { module, vector, input, messages: violations.map((v) => v.message), terraformMessages: terraformMessages(module, input), failures };
}

export function renderVectorTests(module: string, expectations: ReadonlyArray<VectorExpectation>): string {
  const spec = moduleSpec(module);
  const cases = expectations.filter((c) => c.module === module);
  const fixture = Object.entries(spec.fixture).map(([k, v]) => [k, hclValue(v)] as const);
  const lines = [
    `# ${generatedBy('test/vectors/validation-vectors.json and lib/model/rules.ts')}`,
    '#',
    '# The shared validation vectors of this module\'s rules, one run each. A vector sets only the',
    '# properties its rule reads; the module\'s defaults fill in the rest, and the expected outcome is the',
    '# model\'s for that full input, so Terraform and the CDK constructs are held to the same verdicts.',
    '# The exact messages are checked by test/integration/terraform/plan-messages.test.ts.',
    '',
    // The shared mock values (test/terraform/mocks/aws): validated attributes must look like AWS's.
    'mock_provider "aws" {',
    `  source = "${path.relative(path.join(ROOT, 'modules', module), MOCKS_DIR)}"`,
    '}',
    ...(fixture.length > 0 ? ['', 'variables {', ...alignedMap('  ', fixture), '}'] : []),
  ];
  cases.forEach((c, i) => {
    const vars = Object.entries(vectorVariables(module, c.vector.input));
    const rule = rulesOf(module).find((r) => r.id === c.vector.rule)!;
    const [own] = evaluateRules([rule], c.vector.input, (r) => terraformUses(r)[0]?.names).map((v) => v.message);
    lines.push(
      '',
      `# ${c.vector.rule} ${JSON.stringify(c.vector.input)}: ${c.vector.accepted ? 'accepted' : `rejected: ${own}`}`,
      ...c.terraformMessages.filter((_m, i) => c.messages[i] !== c.vector.message).map((m) => `# with the module's defaults the model also says: ${m}`),
      `run "v${String(i + 1).padStart(3, '0')}_${c.vector.rule.replace(/-/g, '_')}_${c.failures.every((f) => f.startsWith('check.')) ? 'accepted' : 'rejected'}" {`,
      '  command = plan',
      '',
      '  variables {',
      ...alignedMap('    ', vars),
      '  }',
    );
    if (c.failures.length > 0) lines.push('');
    if (c.failures.includes('check.engine_version_offered')) lines.push('  # check.engine_version_offered: a warning for a version outside the catalog, which terraform test counts');
    if (c.failures.length > 0) lines.push(`  expect_failures = [${c.failures.join(', ')}]`);
    lines.push('}');
  });
  return `${lines.join('\n')}\n`;
}

/** The messages a module gives for a model input: the model's rules of that module, naming its variables. */
export function terraformMessages(module: string, input: Vars): string[] {
  return evaluateRules(rulesOf(module), input, (rule) => terraformUses(rule)[0]?.names).map((v) => v.message);
}
