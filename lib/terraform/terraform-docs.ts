import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/**
 * terraform-docs, the tool that writes the module READMEs' tables (requirements, providers, modules,
 * resources, inputs, outputs) between their `<!-- BEGIN_TF_DOCS -->` and `<!-- END_TF_DOCS -->` markers, as
 * the repository's .terraform-docs.yml configures it. `make terraform-docs` installs the pinned version.
 */
export const TERRAFORM_DOCS_VERSION = 'v0.20.0';

const ROOT = path.join(__dirname, '..', '..');
export const TERRAFORM_DOCS_CONFIG = path.join(ROOT, '.terraform-docs.yml');

/** The binary: TERRAFORM_DOCS (as the Makefile passes it), else .cache/bin/terraform-docs. */
export function terraformDocsBinary(): string {
  return process.env.TERRAFORM_DOCS || path.join(ROOT, '.cache', 'bin', 'terraform-docs');
}

let checked: string | undefined;

/** Fails with the fix unless the binary is the pinned version: another version writes other tables. */
function checkedBinary(): string {
  const binary = terraformDocsBinary();
  if (checked === binary) return binary;
  let version = '';
  try {
    version = execFileSync(binary, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  } catch {
    throw new Error(`terraform-docs: ${binary} does not run; install terraform-docs ${TERRAFORM_DOCS_VERSION} with make terraform-docs`);
  }
  if (!version.includes(`version ${TERRAFORM_DOCS_VERSION} `)) {
    throw new Error(`terraform-docs: ${binary} is "${version.trim()}", not ${TERRAFORM_DOCS_VERSION}; install the pinned version with make terraform-docs`);
  }
  checked = binary;
  return binary;
}

/**
 * A README with terraform-docs' tables injected, for a module given as its README and .tf files (the
 * generated regions already rendered, so a table never lags a render of the same pass). terraform-docs
 * runs on a copy in a temporary directory and the repository is left as it was.
 */
export function injectTerraformDocs(readme: string, tfFiles: ReadonlyMap<string, string>, label: string): string {
  if (!/^<!-- BEGIN_TF_DOCS -->$[\s\S]*^<!-- END_TF_DOCS -->$/m.test(readme)) {
    throw new Error(`${label}: no <!-- BEGIN_TF_DOCS --> ... <!-- END_TF_DOCS --> markers; add them where terraform-docs' tables go`);
  }
  const binary = checkedBinary();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'terraform-docs-'));
  try {
    for (const [file, text] of tfFiles) fs.writeFileSync(path.join(dir, file), text);
    fs.writeFileSync(path.join(dir, 'README.md'), readme);
    try {
      execFileSync(binary, ['--config', TERRAFORM_DOCS_CONFIG, dir], { encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      const stderr = (e as { stderr?: string }).stderr ?? String(e);
      throw new Error(`${label}: terraform-docs failed: ${stderr.trim()}`);
    }
    return fs.readFileSync(path.join(dir, 'README.md'), 'utf8');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
