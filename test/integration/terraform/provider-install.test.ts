import { spawnSync } from 'child_process';
import * as path from 'path';

/**
 * The stand-in provider's install.sh, as a user runs it (`eval "$(test/terraform/provider/install.sh)"`):
 * one line to eval on stdout, and a warning that `terraform init` under it writes the stand-in's hash into
 * the directory's .terraform.lock.hcl under hashicorp/aws, where the real provider would not match it.
 */
const ROOT = path.join(__dirname, '..', '..', '..');

describe('stand-in provider install.sh', () => {
  test('GIVEN install.sh WHEN run THEN stdout is the export line alone and stderr warns about the lock file, with the fix', () => {
    // WHEN
    const r = spawnSync('bash', [path.join(ROOT, 'test/terraform/provider/install.sh')], { cwd: ROOT, encoding: 'utf8', timeout: 600_000 });
    // THEN
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^export TF_CLI_CONFIG_FILE=\S+terraformrc\.hcl\n$/);
    const warning = r.stderr.slice(r.stderr.indexOf('WARNING'));
    expect(warning).toMatch(/writes the stand-in's own hash for\s+registry\.terraform\.io\/hashicorp\/aws \d+\.\d+\.\d+ into the directory's \.terraform\.lock\.hcl/);
    expect(warning).toMatch(/never commit\s+that lock file/);
    expect(warning).toMatch(/delete \.terraform\.lock\.hcl, unset TF_CLI_CONFIG_FILE and run\s+`terraform init` again/);
  });
});
