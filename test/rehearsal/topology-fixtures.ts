/**
 * Inputs for the topology suites, made by the real tools: cloud assemblies written by `app.synth()`
 * (bin/app.ts's stack, with cdk.json's feature flags and the context a `-c key=value` would give), and
 * plans of Terraform configurations against the offline stand-in provider.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { App } from 'aws-cdk-lib';
import { readDeploymentContext } from '../../lib/reference-app/app-context';
import { ReferenceDeployment } from '../../lib/reference-app/reference-deployment';
import type { PlanOfResources } from '../../lib/terraform/plan-json';
import { ROOT, TerraformDir } from '../terraform/terraform-cli';

const CDK_CONTEXT = JSON.parse(fs.readFileSync(path.join(ROOT, 'cdk.json'), 'utf8')).context as Record<string, unknown>;

/** Temporary directories made here, removed by `removeFixtures`. */
const made: string[] = [];

function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/**
 * Synthesizes `build`'s app into a fresh directory, as `cdk synth --output` would. The Lambda bundles
 * are not built ('aws:cdk:bundling-stacks': []): only their asset hashes would differ, which no topology reads.
 */
export function synthesize(build: (app: App) => void, context: Record<string, unknown> = {}): string {
  const outdir = tempDir('topology-cdk-');
  // `context` as what the command line passes, which wins over CDK_CONTEXT_JSON (the unit project's setup).
  const app = new App({ outdir, context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [] }, postCliContext: context });
  build(app);
  app.synth();
  return outdir;
}

/** bin/app.ts's reference deployment with `-c` context, synthesized; also its stack, to name resources. */
export function synthesizeReferenceApp(context: Record<string, string> = {}): { dir: string; stack: ReferenceDeployment } {
  let stack: ReferenceDeployment | undefined;
  const dir = synthesize((app) => {
    const settings = readDeploymentContext(app);
    stack = new ReferenceDeployment(app, settings.stackName, settings);
  }, context);
  return { dir, stack: stack! };
}

/** `terraform show -json` of a plan of `dir` with `-var`s, written to a file as a user would pass it. */
export function planFile(dir: string, vars: Record<string, string> = {}): { file: string; plan: PlanOfResources } {
  const terraform = new TerraformDir(dir);
  try {
    const plan = terraform.planJson(vars);
    const file = path.join(tempDir('topology-plan-'), 'plan.json');
    fs.writeFileSync(file, JSON.stringify(plan));
    return { file, plan };
  } finally {
    terraform.dispose();
  }
}

/**
 * A plan of `dir` as a user keeps it beside where it was made: the plan's JSON and the root module's
 * directory with its data directory's module manifest (copied, as the data directory goes with the run),
 * which is what `rehearse up --from` reads the PgBouncer engine's template through.
 */
export function planWithModules(dir: string, vars: Record<string, string> = {}): { file: string; plan: PlanOfResources; terraform: { dir: string; dataDir: string } } {
  const terraform = new TerraformDir(dir);
  try {
    const plan = terraform.planJson(vars);
    const out = tempDir('topology-plan-');
    const file = path.join(out, 'plan.json');
    fs.writeFileSync(file, JSON.stringify(plan));
    const dataDir = path.join(out, 'tf-data');
    fs.mkdirSync(path.join(dataDir, 'modules'), { recursive: true });
    fs.copyFileSync(path.join(terraform.dataDir, 'modules', 'modules.json'), path.join(dataDir, 'modules', 'modules.json'));
    return { file, plan, terraform: { dir, dataDir } };
  } finally {
    terraform.dispose();
  }
}

export const COMPLETE_EXAMPLE = path.join(ROOT, 'modules', 'examples', 'complete');
export const COMPLETE_PGBOUNCER_EXAMPLE = path.join(ROOT, 'modules', 'examples', 'complete-pgbouncer');

/**
 * A root module of a user's own, in a temporary directory: `main.tf` is given the relative path to the
 * kit's modules/ as `@MODULES@` (Terraform wants local module sources to start with ../).
 */
export function userRootModule(mainTf: string): string {
  const dir = tempDir('topology-root-');
  const modules = path.relative(dir, path.join(ROOT, 'modules'));
  const zips = path.relative(dir, path.join(ROOT, 'dist', 'lambda'));
  fs.writeFileSync(path.join(dir, 'main.tf'), mainTf.replace(/@MODULES@/g, modules).replace(/@ZIPS@/g, zips));
  return dir;
}

export function removeFixtures(): void {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}
