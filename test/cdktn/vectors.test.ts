import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as kit from '../../packages/cdktn/src';
import { cdktnName } from '../../packages/cdktn/src/kit-rules';
import { evaluateRules, terraformUse, type Rule } from '../../lib/model';
import { CDKTN_MODULES, MODULES, ROOT, camelCase, moduleBinding, moduleSpec, rulesOf, vectorExpectations, vectorValues } from '../../lib/terraform';
import { App, TerraformStack } from './cdktn-runtime';

/**
 * The shared validation vectors (test/vectors/validation-vectors.json), which the CDK constructs and the
 * modules' `terraform test` files already run, run a third time through the cdktn constructs: each
 * vector's input as props over the module's fixture, the module's defaults filling the rest, and the
 * verdict and messages must be the model's for that full input, naming the cdktn props.
 */

type Props = Record<string, unknown>;

const constructs = kit as unknown as Record<string, new (scope: TerraformStack, id: string, props: Props) => unknown>;

describe('the shared vectors through the cdktn constructs', () => {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdktn-vectors-'));
  afterAll(() => fs.rmSync(outdir, { recursive: true, force: true }));
  const cases = vectorExpectations().filter((c) => MODULES.includes(c.module));

  test('GIVEN the vectors THEN every module has a construct, and every rule of each module vectors accepted and refused', () => {
    expect(MODULES.filter((m) => !CDKTN_MODULES.includes(m))).toEqual([]);
    for (const module of MODULES) {
      for (const rule of rulesOf(module)) {
        const own = cases.filter((c) => c.module === module && c.vector.rule === rule.id);
        expect([module, rule.id, own.some((c) => c.vector.accepted), own.some((c) => !c.vector.accepted)]).toEqual([module, rule.id, true, true]);
      }
    }
    expect(cases.length).toBeGreaterThan(100);
  });

  test.each(cases.map((c, i) => [i + 1, c.module, c.vector.rule, JSON.stringify(c.vector.input), c] as const))(
    'vector %i (%s, %s %s): the construct gives the model\'s verdict and messages',
    (_i, module, _rule, _input, c) => {
      const variables = { ...moduleSpec(module).fixture, ...vectorValues(module, c.vector.input) };
      const naming = (r: Rule<Record<string, unknown>>) => Object.fromEntries(Object.entries(terraformUse(r, module)!.names).map(([p, n]) => [p, cdktnName(n)]));
      const expected = evaluateRules(rulesOf(module), c.input, naming).map((v) => v.message);
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
