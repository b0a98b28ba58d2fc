import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ROOT } from '../../../lib/terraform';
import { renderReadme } from '../../../lib/terraform/readme';
import { moduleRegions } from '../../../lib/terraform/validations';

/**
 * The module READMEs' tables are terraform-docs' (.terraform-docs.yml), run by bin/generate-terraform.ts on
 * the .tf files of the same render, with the kit's Rules table below them: a changed variable or output
 * changes the README, so `--check` fails until `make terraform-generate` writes it.
 */
const MODULE = 'rds-proxy';

function copyOfModule(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'readme-docs-'));
  const source = path.join(ROOT, 'modules', MODULE);
  for (const f of fs.readdirSync(source).filter((x) => x.endsWith('.tf') || x === 'README.md')) fs.copyFileSync(path.join(source, f), path.join(dir, f));
  return dir;
}

describe('module README tables by terraform-docs', () => {
  let dir: string;
  beforeEach(() => {
    dir = copyOfModule();
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('GIVEN the committed module WHEN its README is rendered THEN it is the committed README', () => {
    expect(renderReadme(MODULE, dir, moduleRegions(MODULE))).toBe(fs.readFileSync(path.join(dir, 'README.md'), 'utf8'));
  });

  test('GIVEN an output whose description changed WHEN the README is rendered THEN its Outputs table says so and the committed README is stale', () => {
    // GIVEN
    const outputs = path.join(dir, 'outputs.tf');
    fs.writeFileSync(outputs, fs.readFileSync(outputs, 'utf8').replace('"ARN of the proxy."', '"ARN of the RDS Proxy, for IAM policies."'));
    // WHEN
    const readme = renderReadme(MODULE, dir, moduleRegions(MODULE));
    // THEN
    expect(readme).toContain('| <a name="output_proxy_arn"></a> [proxy\\_arn](#output\\_proxy\\_arn) | ARN of the RDS Proxy, for IAM policies. |');
    expect(readme).not.toBe(fs.readFileSync(path.join(dir, 'README.md'), 'utf8'));
  });

  test('GIVEN a .tf file this render rewrites WHEN the README is rendered THEN terraform-docs reads the rewritten text, not the file on disk', () => {
    // GIVEN a variables.tf whose render describes `tags` otherwise
    const variables = fs.readFileSync(path.join(dir, 'variables.tf'), 'utf8');
    const rendered = new Map([['variables.tf', variables.replace('"Tags for every resource of the module."', '"Tags for every resource of the proxy."')]]);
    // WHEN
    const readme = renderReadme(MODULE, dir, moduleRegions(MODULE), rendered);
    // THEN
    expect(readme).toContain('| Tags for every resource of the proxy. |');
    expect(readme).not.toContain('| Tags for every resource of the module. |');
  });

  test('GIVEN the borrow timeout WHEN the README is rendered THEN the Rules table states its rule from the model', () => {
    const readme = renderReadme(MODULE, dir, moduleRegions(MODULE));
    const rules = readme.slice(readme.indexOf('<!-- BEGIN_KIT_RULES -->'), readme.indexOf('<!-- END_KIT_RULES -->'));
    expect(rules).toMatch(/^\| `connection_borrow_timeout_seconds` \| borrow-timeout: an integer from \d+ to \d+ \|$/m);
    expect(rules).not.toContain('`tags`');
  });

  test('GIVEN a README without terraform-docs\' markers WHEN rendered THEN the error names the file and the markers to add', () => {
    const readme = path.join(dir, 'README.md');
    fs.writeFileSync(readme, fs.readFileSync(readme, 'utf8').replace('<!-- BEGIN_TF_DOCS -->', ''));
    expect(() => renderReadme(MODULE, dir, moduleRegions(MODULE))).toThrow(`${readme}: no <!-- BEGIN_TF_DOCS --> ... <!-- END_TF_DOCS --> markers`);
  });

  test('GIVEN no terraform-docs binary WHEN a README is rendered THEN the error says how to install it', () => {
    const saved = process.env.TERRAFORM_DOCS;
    process.env.TERRAFORM_DOCS = path.join(dir, 'missing', 'terraform-docs');
    try {
      jest.isolateModules(() => {
        const { renderReadme: render } = jest.requireActual<typeof import('../../../lib/terraform/readme')>('../../../lib/terraform/readme');
        expect(() => render(MODULE, dir, moduleRegions(MODULE))).toThrow(/does not run; install terraform-docs v0\.20\.0 with make terraform-docs/);
      });
    } finally {
      if (saved === undefined) delete process.env.TERRAFORM_DOCS;
      else process.env.TERRAFORM_DOCS = saved;
    }
  });
});
