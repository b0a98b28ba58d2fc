import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { readmeUsageExample } from '../../helpers/readme';
import { CDK_CONTEXT, ROOT, ScratchApp, packTarball } from './scratch-app';
import { CloudAssemblyIndex } from '../../../lib/cloud-assembly';

/**
 * The npm package as a CDK user gets it (slow: packs, installs aws-cdk-lib into a temporary app; about a
 * minute with npm's cache warm, bounded by the timeouts below): `npm pack` of the repository, then a
 * CDK app outside the repository that installs the tarball with plain `npm install`, beside the peers
 * at the versions the repository locks, compiles the README's usage example with TypeScript against the
 * installed package, and synthesizes it with cdk-nag's AwsSolutions checks.
 */
const PACKAGE_DIR = 'node_modules/aurora-proxy-kit';

/** The example, then what a user adds to run cdk-nag: the plugin, and the synth the CLI would do. */
function exampleWithCdkNag(example = readmeUsageExample()): string {
  return [
    "import { Validations } from 'aws-cdk-lib';",
    "import { AwsSolutionsChecks } from 'cdk-nag';",
    example,
    'Validations.of(app).addPlugins(new AwsSolutionsChecks(app));',
    'app.synth();',
    '',
  ].join('\n');
}

interface Report {
  pluginReports: Array<{
    pluginName: string;
    violations: Array<{ ruleName: string; severity: string; violatingConstructs: Array<{ constructPath: string }> }>;
  }>;
}

const readReport = (outdir: string) => JSON.parse(fs.readFileSync(path.join(outdir, 'validation-report.json'), 'utf8')) as Report;
const errorsOf = (report: Report) =>
  report.pluginReports.flatMap((r) =>
    r.violations.filter((v) => v.severity.toLowerCase() === 'error').flatMap((v) => v.violatingConstructs.map((c) => `${r.pluginName} ${v.ruleName} ${c.constructPath}`)),
  );

describe('npm package', () => {
  const packDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aurora-proxy-kit-pack-'));
  const app = new ScratchApp();
  let files: string[];
  let compileErrors: string[];
  let run: ReturnType<ScratchApp['run']>;
  let control: ReturnType<ScratchApp['run']>;

  beforeAll(() => {
    // GIVEN the packed tarball, installed with its peers into an app outside the repository
    const packed = packTarball(packDir);
    files = packed.files;
    app.installKit(packed.tarball, ['aws-cdk-lib', 'constructs', 'cdk-nag', '@types/node']);
    // WHEN the README's example is compiled there and run as `cdk synth` would
    compileErrors = app.compile('app', exampleWithCdkNag());
    run = app.run('app', CDK_CONTEXT);
    // and, to show cdk-nag runs and fails there, the example without its VPCs' flow logs
    const withoutFlowLogs = readmeUsageExample().replace(/,? *flowLogs: \{ all: \{\} \},?/g, '');
    if (withoutFlowLogs === readmeUsageExample()) throw new Error('the README example no longer gives its VPCs flow logs: update the control run');
    app.transpile('control', exampleWithCdkNag(withoutFlowLogs));
    control = app.run('control', CDK_CONTEXT);
  }, 480_000);

  afterAll(() => {
    // KEEP_SCRATCH=1 leaves the app (and its cdk.out) in place to look at.
    if (process.env.KEEP_SCRATCH) return;
    app.dispose();
    fs.rmSync(packDir, { recursive: true, force: true });
  });

  test('holds the compiled library, its types and the pre-bundled handlers, and nothing of the repository\'s tooling', () => {
    expect(files).toEqual(expect.arrayContaining([
      'package.json',
      'README.md',
      'LICENSE',
      'dist/cdk/lib/index.js',
      'dist/cdk/lib/index.d.ts',
      '.jsii',
      'dist/cdk/lambda/src/environment.js',
      ...['read-handler', 'write-handler', 'role-bootstrap'].map((h) => `dist/cdk/assets/lambda/${h}/index.js`),
      'bin/aurora-proxy-kit.js',
      'dist/cdk/cli/index.js',
      // The PgBouncer engine's hosts' software, which the construct embeds in the user data.
      'host/bootstrap.sh',
      'host/apk_aws.py',
      'host/apk-pgbouncer@.service',
    ]));
    // No TypeScript sources, tests, rehearsal, bench, Terraform, reference app or entry points other than the command line's.
    const unexpected = files.filter((f) => /\.ts$/.test(f) && !f.endsWith('.d.ts') || (/^(test|bin|modules|lambda|lib)\//.test(f) && f !== 'bin/aurora-proxy-kit.js') || /\/(rehearsal|bench|terraform|reference-app|packaging)\//.test(f));
    expect(unexpected).toEqual([]);
  });

  test('declares aws-cdk-lib and constructs as peers and depends on nothing else', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(app.dir, PACKAGE_DIR, 'package.json'), 'utf8')) as Record<string, unknown>;
    // The oldest aws-cdk-lib the library compiles against (manageMasterUserPassword on DatabaseCluster), so
    // that the Python wheel's requirement admits what PyPI has when npm is a release ahead.
    expect(manifest.peerDependencies).toEqual({ 'aws-cdk-lib': '^2.261.0', constructs: expect.stringMatching(/^\^10\./) });
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.private).toBeUndefined();
    expect(manifest.bin).toEqual({ 'aurora-proxy-kit': 'bin/aurora-proxy-kit.js' });
  });

  test('installs the aurora-proxy-kit command: its help, and the README\'s synth summary of the user\'s cdk.out', () => {
    // WHEN the user runs the installed command
    const help = app.npx('aurora-proxy-kit', ['--help']);
    // THEN its help lists the commands
    expect([help.status, help.stdout]).toEqual([0, expect.stringMatching(/^Usage: aurora-proxy-kit <command> \[options\]\n[\s\S]*\n {2}synth summary \[cdk\.out\][\s\S]*\n {2}plan summary \[plan\.json\]/)]);
    // and the README's snippet summarizes the app synthesized above
    const snippet = /^npx aurora-proxy-kit (synth summary) cdk\.out/m.exec(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
    expect(snippet).not.toBeNull();
    const summary = app.npx('aurora-proxy-kit', [...snippet![1]!.split(' '), path.basename(run.outdir)]);
    expect([summary.status, summary.stdout]).toEqual([0, expect.stringMatching(/^Stack Reporting \(Reporting\.template\.json\): \d+ resources$/m)]);
  });

  test('the installed command reads a plan, and says the rehearsal runs from the repository (exit 2; 0 for its help)', () => {
    const plan = app.npx('aurora-proxy-kit', ['plan', 'summary', path.join(ROOT, 'test', 'cli', 'fixtures', 'plan.json')]);
    expect([plan.status, plan.stdout]).toEqual([0, expect.stringMatching(/^the plan creates 6 resources/)]);
    for (const command of [['rehearse', 'up'], ['bench'], ['demo']]) {
      const r = app.npx('aurora-proxy-kit', command);
      expect([command, r.status, r.stderr]).toEqual([command, 2, expect.stringContaining(`aurora-proxy-kit ${command[0]}: ${command[0]} runs from the kit's repository, not from the npm package`)]);
      expect(r.stderr).toMatch(/git clone https:\/\/github\.com\/aurora-proxy-kit\/aurora-proxy-kit\.git && cd aurora-proxy-kit && make deps/);
    }
    // Asked for, their help is where they run (exit 0).
    for (const command of [['rehearse', '--help'], ['rehearse', 'up', '--help'], ['bench', '--help'], ['demo', '-h']]) {
      const r = app.npx('aurora-proxy-kit', command);
      expect([command, r.status, r.stdout]).toEqual([command, 0, expect.stringContaining(`${command[0]} runs from the kit's repository, not from the npm package`)]);
    }
  });

  test('the user\'s app needs neither esbuild nor the handlers\' own dependencies', () => {
    for (const name of ['esbuild', 'pg', '@aws-sdk/rds-signer', '@aws-lambda-powertools/logger']) expect([name, app.resolves(name)]).toEqual([name, false]);
  });

  test('the README example type-checks against the installed package', () => {
    expect(compileErrors).toEqual([]);
  });

  test('synthesizes, with no cdk-nag AwsSolutions error', () => {
    // THEN the synth succeeded (an unacknowledged error fails it) and the report lists no error
    expect([run.status, run.stderr]).toEqual([0, expect.any(String)]);
    expect(errorsOf(readReport(run.outdir))).toEqual([]);
  });

  test('cdk-nag does run there: without flow logs, the user\'s two VPCs fail synth, and nothing of the kit does', () => {
    expect(control.status).not.toBe(0);
    expect(control.stderr).toContain('AwsSolutions-VPC7');
    const errors = errorsOf(readReport(control.outdir));
    expect(errors).toEqual(['AwsSolutions AwsSolutions-VPC7 Reporting/DataVpc/Resource', 'AwsSolutions AwsSolutions-VPC7 Reporting/ReportingVpc/Resource']);
  });

  test('the functions deploy the package\'s pre-bundled handlers, with the runtime, architecture and handler of the repository\'s synth', () => {
    // GIVEN
    const resources = CloudAssemblyIndex.read(run.outdir).stack('Reporting').resources;
    const kitFunctions = Object.values(resources).filter(
      (r) => r.Type === 'AWS::Lambda::Function' && String(r.Properties?.Description ?? '').startsWith('aurora-proxy-kit '),
    );
    // THEN the consumer and the role bootstrap
    expect(kitFunctions.map((f) => f.Properties?.Description).sort()).toEqual(['aurora-proxy-kit READ_ONLY consumer', 'aurora-proxy-kit database role bootstrap']);
    for (const fn of kitFunctions) {
      expect(fn.Properties).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'], Handler: 'index.handler' });
      // and each asset is a copy of a pre-bundled handler of the installed package, not a new bundle
      const assetHash = String((fn.Properties?.Code as { S3Key: string }).S3Key).replace(/\.zip$/, '');
      const asset = path.join(run.outdir, `asset.${assetHash}`, 'index.js');
      const bundled = ['read-handler', 'role-bootstrap'].map((h) => fs.readFileSync(path.join(app.dir, PACKAGE_DIR, 'dist/cdk/assets/lambda', h, 'index.js'), 'utf8'));
      expect(bundled).toContain(fs.readFileSync(asset, 'utf8'));
    }
    expect(run.stdout + run.stderr).not.toMatch(/Bundling asset/);
  });
});
