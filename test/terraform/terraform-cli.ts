import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { KIT_HANDLERS } from '../../lib/private/handler-function';
import { buildLambdaZips, LAMBDA_ZIP_DIR } from '../../lib/packaging/handler-bundles';
import type { PlanJson, PlanOfResources } from '../../lib/terraform/plan-json';

/**
 * Runs Terraform against the offline stand-in provider (test/terraform/provider): builds it when its
 * sources changed, and gives each caller its own data directory so that parallel jest workers do not
 * share `.terraform/`.
 */
export const ROOT = path.join(__dirname, '..', '..');

let env: NodeJS.ProcessEnv | undefined;

export function terraformEnv(): NodeJS.ProcessEnv {
  if (env) return env;
  const out = execFileSync('bash', [path.join(ROOT, 'test/terraform/provider/install.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const match = /export TF_CLI_CONFIG_FILE=(\S+)/.exec(out);
  if (!match) throw new Error(`install.sh printed no TF_CLI_CONFIG_FILE: ${out}`);
  const terraform = execFileSync('bash', [path.join(ROOT, 'test/terraform/provider/install-terraform.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  // complete-pgbouncer's hosts' AMI has no default (it is pinned by whoever deploys): given here as a deployer
  // gives it; Terraform ignores it in the configurations that do not declare it.
  env = { ...process.env, TF_CLI_CONFIG_FILE: match[1], CHECKPOINT_DISABLE: '1', TF_IN_AUTOMATION: '1', TF_BIN: terraform, TF_VAR_pooler_image_id: EXAMPLE_POOLER_IMAGE_ID };
  return env;
}

/** An AMI id of the right shape for the offline plans of complete-pgbouncer (never deployed). */
export const EXAMPLE_POOLER_IMAGE_ID = 'ami-0123456789abcdef0';

/** The Lambda zips the examples deploy; built when missing. */
function ensureLambdaZips(): void {
  if (!KIT_HANDLERS.every((name) => fs.existsSync(path.join(LAMBDA_ZIP_DIR, `${name}.zip`)))) buildLambdaZips(LAMBDA_ZIP_DIR);
}

export interface TerraformRun {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A working copy of one configuration: `terraform -chdir=<dir>` with a private TF_DATA_DIR. */
export class TerraformDir {
  /** Its TF_DATA_DIR (`.terraform` of a plain run): providers, the module manifest. */
  public readonly dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tf-data-'));
  private initialized = false;

  /**
   * `env` adds to (or overrides) the environment Terraform runs with, e.g. a PATH without Node.js;
   * `backend` initializes the configuration's own backend (a synthesized cdktn stack always declares one).
   */
  constructor(
    public readonly dir: string,
    private readonly env: NodeJS.ProcessEnv = {},
    private readonly options: { readonly backend?: boolean } = {},
  ) {}

  public run(args: string[]): TerraformRun {
    const e = terraformEnv();
    const result = spawnSync(e.TF_BIN!, [`-chdir=${this.dir}`, ...args], {
      env: { ...e, ...this.env, TF_DATA_DIR: this.dataDir },
      encoding: 'utf8',
      timeout: 180_000,
      maxBuffer: 256 * 1024 * 1024,
    });
    return { status: result.status ?? -1, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
  }

  /** Initializes once; the examples' Lambda zips (read by filebase64sha256 at plan) are built first when missing. */
  public init(): void {
    if (this.initialized) return;
    ensureLambdaZips();
    const r = this.run(['init', '-input=false', ...(this.options.backend ? [] : ['-backend=false']), '-no-color']);
    if (r.status !== 0) throw new Error(`terraform init failed in ${this.dir}:\n${r.stdout}\n${r.stderr}`);
    this.initialized = true;
  }

  /** `terraform plan -json` with variables: the error diagnostics' summary and detail. */
  public planErrors(vars: Record<string, string>): Array<{ summary: string; detail: string }> {
    this.init();
    const r = this.run(['plan', '-json', '-input=false', '-lock=false', ...Object.entries(vars).flatMap(([k, v]) => ['-var', `${k}=${v}`])]);
    return r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { type: string; diagnostic?: { severity: string; summary: string; detail: string } })
      .filter((m) => m.type === 'diagnostic' && m.diagnostic?.severity === 'error')
      .map((m) => ({ summary: m.diagnostic!.summary, detail: m.diagnostic!.detail }));
  }

  /** The planned changes as `terraform show -json` gives them (the kit's configurations have resources). */
  public planJson(vars: Record<string, string> = {}): PlanOfResources {
    this.init();
    const planFile = path.join(this.dataDir, 'plan.tfplan');
    const plan = this.run(['plan', '-input=false', '-lock=false', '-no-color', `-out=${planFile}`, ...Object.entries(vars).flatMap(([k, v]) => ['-var', `${k}=${v}`])]);
    if (plan.status !== 0) throw new Error(`terraform plan failed in ${this.dir}:\n${plan.stdout}\n${plan.stderr}`);
    const show = this.run(['show', '-json', planFile]);
    if (show.status !== 0) throw new Error(`terraform show failed:\n${show.stderr}`);
    return JSON.parse(show.stdout) as PlanOfResources;
  }

  /**
   * What plan does with a state holding `resources` (state version 4 `resources` entries) at addresses the
   * configuration may have moved: each change that came from another address, as [from, to, actions]. The state
   * is a file of its own (-state), so the configuration's directory stays without one; not refreshed, since the
   * stand-in provider has no such objects.
   */
  public movesFrom(resources: ReadonlyArray<Record<string, unknown>>): Array<[string, string, string[]]> {
    return this.changesFrom(resources)
      .filter((c) => c.from !== undefined)
      .map((c): [string, string, string[]] => [c.from!, c.address, c.actions])
      .sort();
  }

  /** Every change plan makes with a state holding `resources`, as movesFrom plans it: its address, where it came from, its actions. */
  public changesFrom(resources: ReadonlyArray<Record<string, unknown>>): Array<{ address: string; from?: string; actions: string[] }> {
    this.init();
    const stateFile = path.join(this.dataDir, 'moves.tfstate');
    fs.writeFileSync(stateFile, JSON.stringify({ version: 4, serial: 1, lineage: 'moves', outputs: {}, resources }));
    const planFile = path.join(this.dataDir, 'moves.tfplan');
    const plan = this.run(['plan', '-input=false', '-lock=false', '-refresh=false', '-no-color', `-state=${stateFile}`, `-out=${planFile}`]);
    if (plan.status !== 0) throw new Error(`terraform plan failed in ${this.dir}:\n${plan.stdout}\n${plan.stderr}`);
    const show = this.run(['show', '-json', planFile]);
    if (show.status !== 0) throw new Error(`terraform show failed:\n${show.stderr}`);
    const changes = (JSON.parse(show.stdout) as PlanJson).resource_changes ?? [];
    return changes.map((c) => ({ address: c.address, ...(c.previous_address !== undefined ? { from: c.previous_address } : {}), actions: [...c.change.actions] }));
  }

  public dispose(): void {
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }
}
