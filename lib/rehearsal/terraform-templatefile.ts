/**
 * A Terraform module's user data rendered by Terraform itself: `templatefile` of the module's template with
 * the values the rehearsal fills, in a scratch root module of its own (no provider, nothing to create), read
 * back with `terraform output -json`. So a host booted from a plan runs the bytes Terraform would put in the
 * launch template, with Terraform's own template language (escapes, directives), not a restatement of it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RehearsalConfigError, RehearsalOperationError } from './errors';

/** The Terraform CLI: TERRAFORM (a path), else `terraform` on the PATH. */
export function terraformBinary(): string {
  return process.env.TERRAFORM ?? 'terraform';
}

const TEMPLATE_FILE = 'user-data.tftpl';

const ROOT_MODULE = `# Renders the user data as the module's templatefile does, from the values the rehearsal fills.
variable "values" {
  type = map(string)
}

output "user_data" {
  value = templatefile("\${path.module}/${TEMPLATE_FILE}", var.values)
}
`;

/**
 * `templatefile(template, values)` as Terraform renders it. `scratchParent` holds the scratch root module while
 * it runs (removed after). A value the template references and `values` lacks fails with Terraform's message.
 */
export function renderTemplatefile(template: string, values: Readonly<Record<string, string>>, scratchParent: string): string {
  mkdirSync(scratchParent, { recursive: true, mode: 0o700 });
  const dir = mkdtempSync(join(scratchParent, 'templatefile-'));
  const terraform = terraformBinary();
  const env = { ...process.env, CHECKPOINT_DISABLE: '1', TF_IN_AUTOMATION: '1', TF_DATA_DIR: join(dir, '.terraform'), TF_INPUT: '0' };
  const run = (args: string[]): string => {
    try {
      return execFileSync(terraform, [`-chdir=${dir}`, ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000, maxBuffer: 16 * 1024 * 1024 });
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stderr?: string; stdout?: string };
      if (e.code === 'ENOENT') throw new RehearsalConfigError([`the hosts' user data is a Terraform templatefile and ${terraform} is not installed: install Terraform (or set TERRAFORM to its path), as the plan was made with it`]);
      throw new RehearsalOperationError(`terraform ${args[0]} of the hosts' user data failed: ${String(e.stderr ?? '').trim() || String(e.stdout ?? '').trim() || e.message}`);
    }
  };
  try {
    writeFileSync(join(dir, TEMPLATE_FILE), template);
    writeFileSync(join(dir, 'main.tf'), ROOT_MODULE);
    writeFileSync(join(dir, 'values.auto.tfvars.json'), JSON.stringify({ values }));
    run(['init', '-input=false', '-backend=false', '-no-color']);
    // apply with no resources only evaluates the output; the state it writes goes with the scratch directory.
    run(['apply', '-auto-approve', '-input=false', '-no-color', '-lock=false']);
    return JSON.parse(run(['output', '-no-color', '-json', 'user_data'])) as string;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
