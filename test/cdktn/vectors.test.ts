import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as kit from '../../packages/cdktn/src';
import { cdktnName } from '../../packages/cdktn/src/kit-rules';
import { evaluateRules, terraformUse, type Rule } from '../../lib/model';
import { CDKTN_MODULES, MODULES, NO_CDKTN_MODULES, ROOT, camelCase, moduleBinding, moduleSpec, propertyNames, rulesOf, variableDefaults, vectorExpectations } from '../../lib/terraform';
import { PROXY_ENDPOINT } from '../../lib/terraform/modules';
import { App, TerraformStack } from './cdktn-runtime';

/**
 * The shared validation vectors (test/vectors/validation-vectors.json), which the CDK constructs and the
 * modules' `terraform test` files already run, run a third time through the cdktn constructs: each
 * vector's input as props over the module's fixture, the module's defaults filling the rest, and the
 * verdict and messages must be the model's for that full input, naming the cdktn props.
 */

type Props = Record<string, unknown>;

/** A vector's value for a property that lives in a collection variable, as that variable (cf. vectors.ts). */
const COLLECTION_PROPS: Readonly<Record<string, (value: unknown) => unknown>> = {
  endpoints: (count) => Object.fromEntries(Array.from({ length: count as number }, (_, i) => [`endpoint-${i + 1}`, PROXY_ENDPOINT])),
  'endpoints key': (name) => ({ [name as string]: PROXY_ENDPOINT }),
  'endpoints target_role': (role) => ({ 'endpoint-1': { ...PROXY_ENDPOINT, target_role: role } }),
};

/** The module's variables (snake_case) for the fixture and a vector's input. */
function moduleVariables(module: string, input: Props): Props {
  const names = propertyNames(module);
  const variables: Props = { ...moduleSpec(module).fixture };
  for (const [property, value] of Object.entries(input)) {
    const name = names[property];
    if (COLLECTION_PROPS[name]) variables[name.split(' ')[0]] = COLLECTION_PROPS[name](value);
    else if (name.includes('.')) {
      const [variable, attribute] = name.split('.');
      variables[variable] = { ...(variables[variable] as Props), [attribute]: value };
    } else variables[name] = value;
  }
  return variables;
}

/** The model's input for a module's full variables (defaults, fixture, vector), where a plain name reads it. */
function modelInput(module: string, variables: Props): Props {
  const input: Props = {};
  for (const [property, name] of Object.entries(propertyNames(module))) {
    if (COLLECTION_PROPS[name]) continue;
    const [variable, attribute] = name.split('.');
    const value = attribute === undefined ? variables[variable] : (variables[variable] as Props | undefined)?.[attribute];
    if (value !== undefined && value !== null) input[property] = value;
  }
  return input;
}

const constructs = kit as unknown as Record<string, new (scope: TerraformStack, id: string, props: Props) => unknown>;

describe('the shared vectors through the cdktn constructs', () => {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdktn-vectors-'));
  afterAll(() => fs.rmSync(outdir, { recursive: true, force: true }));
  const constructModules = MODULES.filter((m) => CDKTN_MODULES.includes(m));
  const cases = vectorExpectations().filter((c) => constructModules.includes(c.module));

  test('GIVEN the vectors THEN every rule of every module with a construct has some', () => {
    expect(MODULES.filter((m) => !CDKTN_MODULES.includes(m))).toEqual([...NO_CDKTN_MODULES]);
    for (const module of constructModules) {
      for (const rule of rulesOf(module)) expect(cases.some((c) => c.vector.rule === rule.id)).toBe(true);
    }
    expect(cases.length).toBeGreaterThan(100);
  });

  test.each(cases.map((c, i) => [i + 1, c.module, c.vector.rule, JSON.stringify(c.vector.input), c] as const))(
    'vector %i (%s, %s %s): the construct gives the model\'s verdict and messages',
    (_i, module, _rule, _input, c) => {
      const variables = moduleVariables(module, c.vector.input);
      const defaults = variableDefaults(path.join(ROOT, 'modules', module));
      const full = { ...modelInput(module, { ...defaults, ...moduleSpec(module).fixture }), ...c.vector.input };
      const naming = (r: Rule<Record<string, unknown>>) => Object.fromEntries(Object.entries(terraformUse(r, module)!.names).map(([p, n]) => [p, cdktnName(n)]));
      const expected = evaluateRules(rulesOf(module), full, naming).map((v) => v.message);
      // The same violations the generator expects of `terraform test`, in the module's words.
      expect(expected).toHaveLength(c.terraformMessages.length);

      const props = Object.fromEntries(Object.entries(variables).map(([k, v]) => [camelCase(k), v]));
      const className = moduleBinding(ROOT, module).className;
      const stack = new TerraformStack(new App({ outdir }), 'Vectors');
      let violations: ReadonlyArray<string> = [];
      try {
        new constructs[className](stack, 'Module', props);
      } catch (e) {
        violations = (e as { violations?: string[] }).violations ?? [String(e)];
      }
      expect(violations).toEqual(expected);
      expect(violations.length === 0).toBe(c.failures.every((f) => f.startsWith('check.')));
    },
  );
});
