import * as fs from 'fs';
import * as path from 'path';
import { MODULES } from '../../lib/terraform/modules';
import { moduleVariables } from '../../lib/terraform/module-variables';
import { moduleRegions } from '../../lib/terraform/validations';

/**
 * What a user reads before calling a module: the root README's Terraform table lists every module, and
 * each module's README opens with a Usage section whose HCL calls the module from the kit's git source
 * at the release's tag, setting every required variable and no variable the module lacks.
 */
const ROOT = path.join(__dirname, '..', '..');
const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
/** Arguments of a module block that are not variables. */
const META_ARGUMENTS = ['source', 'version', 'providers', 'depends_on', 'count', 'for_each'];

/** The first ```hcl block under the README's "## Usage" heading, before the next heading. */
function usageExample(module: string): string | undefined {
  const readme = fs.readFileSync(path.join(ROOT, 'modules', module, 'README.md'), 'utf8');
  const start = readme.search(/^## Usage$/m);
  if (start < 0) return undefined;
  const section = readme.slice(start + '## Usage'.length).split(/^## /m)[0]!;
  return /```hcl\n([\s\S]*?)```/.exec(section)?.[1];
}

describe('module READMEs', () => {
  test('GIVEN the root README WHEN its Terraform table is read THEN it lists every module, linked to its README', () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const listed = MODULES.filter((m) => readme.includes(`| [\`modules/${m}\`](modules/${m}/README.md) |`));
    expect(listed).toEqual([...MODULES]);
  });

  test.each(MODULES.map((m) => [m]))('GIVEN modules/%s WHEN its README\'s Usage section is read THEN it calls the module from the release, with every required variable and only its variables', (module) => {
    // GIVEN
    const example = usageExample(module);
    expect([module, example !== undefined]).toEqual([module, true]);
    // WHEN
    const source = /^ {2}source\s*=\s*"([^"]+)"/m.exec(example!)?.[1];
    const set = [...example!.matchAll(/^ {2}([a-z_]+)\s*=/gm)].map((m) => m[1]!);
    const variables = moduleVariables(path.join(ROOT, 'modules', module), moduleRegions(module));
    // THEN
    expect(source).toBe(`git::https://github.com/aurora-proxy-kit/aurora-proxy-kit.git//modules/${module}?ref=v${VERSION}`);
    expect(set.filter((name) => !META_ARGUMENTS.includes(name) && !variables.some((v) => v.name === name))).toEqual([]);
    expect(variables.filter((v) => v.default === undefined && !set.includes(v.name)).map((v) => v.name)).toEqual([]);
  });

  test('GIVEN the root README\'s Terraform example WHEN its module blocks are read THEN each calls a module from the release, with every required variable and only its variables', () => {
    // GIVEN the first ```hcl block under "### Terraform"
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const hcl = /```hcl\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('### Terraform\n')))?.[1] ?? '';
    // WHEN it is split into its module blocks
    const blocks = [...hcl.matchAll(/^module "[a-z_]+" \{\n([\s\S]*?)^\}/gm)].map((m) => m[1]!);
    expect(blocks.length).toBeGreaterThan(1);
    for (const block of blocks) {
      const module = /\/\/modules\/([a-z-]+)\?ref=/.exec(block)?.[1] ?? '';
      const set = [...block.matchAll(/^ {2}([a-z_]+)\s*=/gm)].map((m) => m[1]!);
      const variables = moduleVariables(path.join(ROOT, 'modules', module), moduleRegions(module));
      // THEN each calls a module of the kit at the release's tag with what it needs
      expect([module, /^ {2}source\s*=\s*"([^"]+)"/m.exec(block)?.[1]]).toEqual([module, `git::https://github.com/aurora-proxy-kit/aurora-proxy-kit.git//modules/${module}?ref=v${VERSION}`]);
      expect([module, set.filter((name) => !META_ARGUMENTS.includes(name) && !variables.some((v) => v.name === name))]).toEqual([module, []]);
      expect([module, variables.filter((v) => v.default === undefined && !set.includes(v.name)).map((v) => v.name)]).toEqual([module, []]);
    }
  });

  test('GIVEN every README under modules/ (modules, examples, internal helpers) WHEN read THEN each has a Usage section', () => {
    const readmes = (fs.readdirSync(path.join(ROOT, 'modules'), { recursive: true }) as string[])
      .filter((f) => path.basename(f) === 'README.md' && !f.split(path.sep).includes('.terraform'));
    expect(readmes.length).toBeGreaterThan(MODULES.length);
    expect(readmes.filter((f) => !/^## Usage$/m.test(fs.readFileSync(path.join(ROOT, 'modules', f), 'utf8'))).sort()).toEqual([]);
  });
});
