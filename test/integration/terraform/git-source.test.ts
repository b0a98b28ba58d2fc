import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ARTIFACTS_FILE, CHECKSUMS_FILE, buildLambdaZips, type LambdaArtifact } from '../../../lib/packaging/handler-bundles';
import { KIT_HANDLERS } from '../../../lib/private/handler-function';
import type { PlanOfResources } from '../../../lib/terraform/plan-json';
import { ROOT, TerraformDir, terraformEnv } from '../../terraform/terraform-cli';

/**
 * A Terraform user without Node.js: modules/examples/complete copied into a directory of its own, each
 * module taken by git source at a release tag (`git::<repository>//modules/<name>?ref=<tag>`) from a git
 * repository outside the project that holds the modules as a checkout of the tag would, and the
 * functions' code from the release's zips (make package), first as files on disk, then as S3 objects.
 * Terraform runs with a PATH that has no Node.js, and plans against the offline stand-in
 * provider (applying needs a real account: test/terratest's -tags aws suite).
 */
const TAG = 'v0.0.0-test';
const EXAMPLE_FILES = ['main.tf', 'variables.tf', 'outputs.tf', 'versions.tf'];

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kit-git-source-'));
const kitRepo = path.join(work, 'aurora-proxy-kit');
const release = path.join(work, 'release');
const userConfig = path.join(work, 'user');
const toolsOnly = path.join(work, 'bin');
let artifacts: Record<string, Omit<LambdaArtifact, 'file'>>;
let user: TerraformDir;

/** The modules as a git checkout of the tag holds them: the tree, without anything Terraform wrote into it. */
function tagTheModules(): void {
  fs.cpSync(path.join(ROOT, 'modules'), path.join(kitRepo, 'modules'), {
    recursive: true,
    filter: (src) => !/(^|\/)\.terraform(\/|$)|\.terraform\.lock\.hcl$|\.tfstate/.test(path.relative(ROOT, src)),
  });
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=release', '-c', 'user.email=release@example.com', ...args], { cwd: kitRepo, stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'release');
  git('tag', TAG);
}

/** The example with every relative module source (`../../<module>`) pointed at the tagged repository. */
function userConfiguration(): void {
  fs.mkdirSync(userConfig);
  for (const file of EXAMPLE_FILES) {
    const text = fs.readFileSync(path.join(ROOT, 'modules', 'examples', 'complete', file), 'utf8');
    fs.writeFileSync(path.join(userConfig, file), text.replace(/source = "\.\.\/\.\.\/([a-z/-]+)"/g, (_m, module: string) => `source = "git::file://${kitRepo}//modules/${module}?ref=${TAG}"`));
  }
}

const NODE_PROGRAMS = /^(node|nodejs|npm|npx|corepack)$/;

/** A directory of the system's programs (git and the shell tools git runs) and terraform, but no Node.js. */
function pathWithoutNode(): string {
  fs.mkdirSync(toolsOnly);
  fs.symlinkSync(terraformEnv().TF_BIN!, path.join(toolsOnly, 'terraform'));
  for (const dir of ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'].filter((d) => fs.existsSync(d))) {
    for (const name of fs.readdirSync(dir)) {
      if (NODE_PROGRAMS.test(name) || fs.existsSync(path.join(toolsOnly, name))) continue;
      fs.symlinkSync(path.join(dir, name), path.join(toolsOnly, name));
    }
  }
  return toolsOnly;
}

beforeAll(() => {
  // GIVEN the release's zips, the modules tagged in a repository outside the project, and a user's copy of the example
  buildLambdaZips(release);
  artifacts = JSON.parse(fs.readFileSync(path.join(release, ARTIFACTS_FILE), 'utf8')) as typeof artifacts;
  tagTheModules();
  userConfiguration();
  user = new TerraformDir(userConfig, { PATH: pathWithoutNode() });
  // WHEN terraform init fetches the modules by git
  user.init();
}, 300_000);

afterAll(() => {
  user?.dispose();
  fs.rmSync(work, { recursive: true, force: true });
});

const fn = (plan: PlanOfResources, module: string) => plan.resource_changes.find((r) => r.address === `module.${module}.module.function.aws_lambda_function.this`)!.change.after!;

test('the user\'s copy takes every module by git source at the tag, and is not inside the project', () => {
  const main = fs.readFileSync(path.join(userConfig, 'main.tf'), 'utf8');
  const original = fs.readFileSync(path.join(ROOT, 'modules', 'examples', 'complete', 'main.tf'), 'utf8');
  expect(main).not.toMatch(/source\s*=\s*"\.\.?\//);
  expect(main.match(/source\s*=\s*"git::/g)).toHaveLength(original.match(/source\s*=\s*"\.\.\//g)!.length);
  for (const dir of [kitRepo, userConfig]) expect(path.relative(ROOT, dir).startsWith('..')).toBe(true);
  expect(fs.readdirSync(toolsOnly)).toEqual(expect.arrayContaining(['git', 'terraform', 'sed']));
  expect(fs.readdirSync(toolsOnly).filter((name) => NODE_PROGRAMS.test(name))).toEqual([]);
});

test('the release\'s checksums are the zips\' (sha256sum -c format), and lambda-artifacts.json gives the hashes Terraform compares', () => {
  const sums = fs.readFileSync(path.join(release, CHECKSUMS_FILE), 'utf8').trim().split('\n').map((l) => l.split(/ {2}/));
  expect(sums.map(([, file]) => file)).toEqual(KIT_HANDLERS.map((h) => `${h}.zip`));
  for (const [hex, file] of sums) {
    expect(hex).toBe(artifacts[file].sha256);
    expect(Buffer.from(artifacts[file].base64sha256, 'base64').toString('hex')).toBe(hex);
    expect(artifacts[file]).toMatchObject({ handler: 'index.handler', runtime: 'nodejs24.x', architectures: ['arm64'] });
  }
});

test('plans with the release\'s zips on disk', () => {
  // WHEN
  const plan = user.planJson({ lambda_dir: release, deletion_protection: 'false' });
  // THEN every module call came from the tag
  const calls = plan.configuration.root_module.module_calls ?? {};
  expect(Object.keys(calls).sort()).toEqual(['dashboard', 'database', 'database_roles', 'log_key_policy', 'proxy', 'reader', 'writer']);
  for (const call of Object.values(calls)) expect(call.source).toMatch(new RegExp(`^git::file://.*//modules/[a-z/-]+\\?ref=${TAG}$`));
  // and each function deploys its zip, hashed as the release lists it
  for (const [module, zip] of [['reader', 'read-handler.zip'], ['writer', 'write-handler.zip'], ['database_roles', 'role-bootstrap.zip']]) {
    expect(fn(plan, module)).toMatchObject({ filename: path.join(release, zip), source_code_hash: artifacts[zip].base64sha256, s3_bucket: null, handler: 'index.handler' });
  }
}, 300_000);

test('plans with the zips in S3 and no local copy', () => {
  // GIVEN the zips uploaded by the user, and no copy of them on disk
  fs.rmSync(release, { recursive: true, force: true });
  const hashes = Object.fromEntries(Object.entries(artifacts).map(([zip, a]) => [zip, a.base64sha256]));
  const lambdaS3 = `{ bucket = "kit-artifacts", key_prefix = "aurora-proxy-kit/${TAG}/", source_code_hashes = ${JSON.stringify(hashes).replace(/":/g, '" =')} }`;
  // WHEN
  const plan = user.planJson({ lambda_s3: lambdaS3, deletion_protection: 'false' });
  // THEN
  for (const [module, zip] of [['reader', 'read-handler.zip'], ['writer', 'write-handler.zip'], ['database_roles', 'role-bootstrap.zip']]) {
    expect(fn(plan, module)).toMatchObject({ filename: null, s3_bucket: 'kit-artifacts', s3_key: `aurora-proxy-kit/${TAG}/${zip}`, source_code_hash: artifacts[zip].base64sha256 });
  }
}, 300_000);
