import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { buildPythonPackage } from '../../../lib/packaging/python-package';
import { ReferenceDeployment } from '../../../lib/reference-app/reference-deployment';
import { readmePythonExample } from '../../helpers/readme';
import { CDK_CONTEXT, ROOT } from './scratch-app';
import { CloudAssemblyIndex } from '../../../lib/cloud-assembly';

/**
 * The Python package as a CDK user gets it (slow: builds the wheel when stale, about 40 s; downloads
 * aws-cdk-lib and the rest from PyPI into .cache/python-wheels on the first run): the wheel
 * jsii-pacmak makes, installed with plain pip beside aws-cdk-lib and constructs (as PyPI resolves the
 * wheel's requirements) into a venv outside the repository. There the README's Python example and
 * test/integration/package/python/reference_app.py (the topology of bin/app.ts) are synthesized, and the latter's
 * template is compared with the TypeScript reference deployment's, synthesized here.
 */
/** The wheels of the wheel's requirements, downloaded once: pip's own cache does not keep PyPI's files here. */
const WHEELHOUSE = path.join(ROOT, '.cache', 'python-wheels');
const REFERENCE_APP = path.join(__dirname, 'python', 'reference_app.py');

interface Resource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
}
interface CfnTemplate {
  readonly Resources: Record<string, Resource>;
  readonly Outputs?: Record<string, { Value: unknown }>;
}

/** Runs a command, failing with its output when it fails. */
function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeout: number }): string {
  const r = spawnSync(command, args, { ...options, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
  return `${r.stdout}${r.stderr}`;
}

const countByType = (t: CfnTemplate) =>
  Object.values(t.Resources).reduce<Record<string, number>>((counts, r) => ({ ...counts, [r.Type]: (counts[r.Type] ?? 0) + 1 }), {});
const ofType = (t: CfnTemplate, type: string) =>
  Object.fromEntries(Object.entries(t.Resources).filter(([, r]) => r.Type === type).map(([id, r]) => [id, r.Properties ?? {}]));
/** What decides a function's behaviour, not where its code is uploaded. */
const functionsOf = (t: CfnTemplate) =>
  Object.fromEntries(
    Object.entries(ofType(t, 'AWS::Lambda::Function')).map(([id, p]) => {
      const variables = (p.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
      return [id, { Runtime: p.Runtime, Architectures: p.Architectures, Handler: p.Handler, MemorySize: p.MemorySize, Timeout: p.Timeout, Description: p.Description, environment: Object.keys(variables).sort() }];
    }),
  );

/**
 * `pip install <wheel>` from the wheelhouse, offline; when it lacks a requirement, the requirements are
 * downloaded from PyPI into it first (then the newest aws-cdk-lib PyPI has within the wheel's range).
 */
function installWheel(venvPython: string, wheel: string, cwd: string): void {
  const install = () => run(venvPython, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-compile', '--no-index', '--find-links', WHEELHOUSE, wheel], { cwd, timeout: 300_000 });
  try {
    install();
  } catch {
    run(venvPython, ['-m', 'pip', 'download', '--quiet', '--disable-pip-version-check', '--dest', WHEELHOUSE, wheel], { cwd, timeout: 600_000 });
    // The wheelhouse holds what the wheel requires, never a copy of the wheel itself.
    for (const f of fs.readdirSync(WHEELHOUSE).filter((f) => f.startsWith('aurora_proxy_kit-'))) fs.rmSync(path.join(WHEELHOUSE, f));
    install();
  }
}

describe('Python package', () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'aurora-proxy-kit-python-'));
  const venvPython = path.join(work, 'venv', 'bin', 'python');
  let wheel: string;
  let python: CfnTemplate;
  let typescript: CfnTemplate;
  let readme: { output: string; template: CfnTemplate; outdir: string };

  /** `python <file>` in the venv, as the CDK CLI runs an app; the template of `stack`. */
  function synth(name: string, source: string, stack: string): { output: string; template: CfnTemplate; outdir: string } {
    const file = path.join(work, `${name}.py`);
    fs.writeFileSync(file, source);
    const outdir = path.join(work, `cdk.out.${name}`);
    const output = run(venvPython, [file], {
      cwd: work,
      env: { ...process.env, CDK_OUTDIR: outdir, CDK_CONTEXT_JSON: JSON.stringify(CDK_CONTEXT), JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION: process.versions.node.split('.')[0] },
      timeout: 300_000,
    });
    const synthesized = CloudAssemblyIndex.read(outdir).stack(stack);
    return { output, outdir, template: { Resources: synthesized.resources, Outputs: synthesized.outputs } as CfnTemplate };
  }

  beforeAll(() => {
    // GIVEN the wheel, installed with plain pip into a venv outside the repository
    wheel = buildPythonPackage();
    if (!path.relative(ROOT, work).startsWith('..')) throw new Error(`${work} is inside the repository`);
    run('python3', ['-m', 'venv', path.join(work, 'venv')], { cwd: work, timeout: 120_000 });
    installWheel(venvPython, wheel, work);
    // WHEN the README's example and the reference topology are synthesized there
    readme = synth('readme_example', readmePythonExample(), 'Reporting');
    python = synth('reference_app', fs.readFileSync(REFERENCE_APP, 'utf8'), 'AuroraProxyKit').template;
    // and the TypeScript reference deployment here
    const app = new App({ context: CDK_CONTEXT });
    typescript = Template.fromStack(new ReferenceDeployment(app, 'AuroraProxyKit')).toJSON() as CfnTemplate;
  }, 900_000);

  afterAll(() => {
    // KEEP_SCRATCH=1 leaves the venv and the apps in place to look at.
    if (!process.env.KEEP_SCRATCH) fs.rmSync(work, { recursive: true, force: true });
  });

  test('the wheel requires an aws-cdk-lib that PyPI has, and pip installed it', () => {
    const installed = run(venvPython, ['-m', 'pip', 'list', '--format', 'json', '--disable-pip-version-check'], { cwd: work, timeout: 60_000 });
    const versions = Object.fromEntries((JSON.parse(installed) as Array<{ name: string; version: string }>).map((p) => [p.name, p.version]));
    expect(versions).toMatchObject({ 'aurora-proxy-kit': '0.1.0', 'aws-cdk-lib': expect.stringMatching(/^2\./), constructs: expect.stringMatching(/^10\./) });
  });

  test('has the resources of the TypeScript reference deployment, type for type', () => {
    expect(countByType(python)).toEqual(countByType(typescript));
    expect(Object.keys(python.Resources).sort()).toEqual(Object.keys(typescript.Resources).sort());
  });

  test.each([
    'AWS::RDS::DBCluster',
    'AWS::RDS::DBInstance',
    'AWS::RDS::DBClusterParameterGroup',
    'AWS::RDS::DBProxy',
    'AWS::RDS::DBProxyTargetGroup',
    'AWS::RDS::DBProxyEndpoint',
    'AWS::CloudWatch::Alarm',
    'Custom::DatabaseRoles',
  ])('%s: the same properties as the TypeScript app\'s', (type) => {
    expect(Object.keys(ofType(typescript, type)).length).toBeGreaterThan(0);
    expect(ofType(python, type)).toEqual(ofType(typescript, type));
  });

  test('the Lambda functions: runtime, architecture, handler, sizes and environment keys as in the TypeScript app', () => {
    expect(functionsOf(python)).toEqual(functionsOf(typescript));
  });

  test('the same outputs\' values, sizing figures included', () => {
    const values = (t: CfnTemplate) => Object.fromEntries(Object.entries(t.Outputs ?? {}).map(([id, o]) => [id, o.Value]));
    expect(Object.keys(values(typescript)).length).toBeGreaterThan(0);
    expect(values(python)).toEqual(values(typescript));
  });

  test('the README example synthesizes, with its threshold, and its functions run the handlers the wheel carries', () => {
    // THEN the example's resources
    expect(countByType(readme.template)).toMatchObject({ 'AWS::RDS::DBCluster': 1, 'AWS::RDS::DBInstance': 3, 'AWS::RDS::DBProxy': 1, 'AWS::RDS::DBProxyEndpoint': 1, 'Custom::DatabaseRoles': 1 });
    const cpuAlarms = Object.values(ofType(readme.template, 'AWS::CloudWatch::Alarm')).filter((p) => p.MetricName === 'CPUUtilization');
    expect(cpuAlarms.map((p) => p.Threshold)).toEqual([70, 70, 70]);
    // and each kit function deploys a pre-bundled handler from the wheel's npm tarball, not a new bundle
    const kitFunctions = Object.values(ofType(readme.template, 'AWS::Lambda::Function')).filter((p) => String(p.Description ?? '').startsWith('aurora-proxy-kit '));
    expect(kitFunctions.map((p) => p.Description).sort()).toEqual(['aurora-proxy-kit READ_ONLY consumer', 'aurora-proxy-kit database role bootstrap']);
    const bundled = ['read-handler', 'role-bootstrap'].map((h) => fs.readFileSync(path.join(ROOT, 'dist', 'cdk', 'assets', 'lambda', h, 'index.js'), 'utf8'));
    for (const fn of kitFunctions) {
      const asset = path.join(readme.outdir, `asset.${String((fn.Code as { S3Key: string }).S3Key).replace(/\.zip$/, '')}`, 'index.js');
      expect(bundled).toContain(fs.readFileSync(asset, 'utf8'));
    }
    expect(readme.output).not.toMatch(/Bundling asset/);
  });

  test('a validation error reaches Python with the construct path, the prop, the value and the fix', () => {
    const bad = readmePythonExample().replace('instance_class="db.r8gd.2xlarge"', 'instance_class="db.r6g.xlarge"');
    expect(bad).not.toEqual(readmePythonExample());
    expect(() => synth('readme_bad_class', bad, 'Reporting')).toThrow('Reporting/Database: instanceClass db.r6g.xlarge has no local NVMe');
  });
});
