import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as ts from 'typescript';
import { ROOT } from '../../lib/terraform';

/**
 * The README's CDK Terrain example is real code: extracted, type-checked against packages/cdktn with the
 * project's compiler options, run, and its cdk.tf.json read back.
 */
const CDKTN_DIR = path.join(ROOT, 'packages', 'cdktn');

function extractExample(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const match = /```ts\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('## CDK Terrain (cdktn)')));
  if (!match) throw new Error('README.md has no ```ts block under "## CDK Terrain (cdktn)"');
  return match[1];
}

describe('README CDK Terrain example', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdktn-readme-'));
  const file = path.join(dir, 'readme-example.ts');
  const outdir = path.join(dir, 'cdktf.out');

  beforeAll(() => {
    // The package's own cdktn (constructs 10.7) and sources, by absolute path from the scratch directory.
    const code = extractExample()
      .replace(/from 'cdktn'/g, `from '${path.join(CDKTN_DIR, 'node_modules', 'cdktn')}'`)
      .replace(/from 'aurora-proxy-kit-cdktn'/g, `from '${path.join(CDKTN_DIR, 'src')}'`);
    fs.writeFileSync(file, code);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('GIVEN the example THEN it type-checks against the package', () => {
    const config = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile);
    const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
    const program = ts.createProgram([file], { ...parsed.options, noEmit: true });
    expect(ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);
  });

  test('GIVEN the example run as written THEN its stack calls the three modules with the README\'s settings', () => {
    const previous = process.env.CDKTF_OUTDIR;
    process.env.CDKTF_OUTDIR = outdir;
    try {
      jest.isolateModules(() => {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        require(file);
      });
    } finally {
      if (previous === undefined) delete process.env.CDKTF_OUTDIR;
      else process.env.CDKTF_OUTDIR = previous;
    }
    const config = JSON.parse(fs.readFileSync(path.join(outdir, 'stacks', 'reporting', 'cdk.tf.json'), 'utf8')) as {
      module: Record<string, Record<string, unknown>>;
      variable: Record<string, unknown>;
    };
    expect(Object.keys(config.module).sort()).toEqual(['database', 'proxy', 'report_reader']);
    expect(config.module.database).toMatchObject({ instance_class: 'db.r8gd.2xlarge', readers: 2, vpc_id: '${var.data_vpc_id}' });
    expect(config.module.proxy).toMatchObject({ max_connections_percent: 80, endpoints: { 'reporting-ro': { target_role: 'READ_ONLY' } } });
    expect(config.module.report_reader).toMatchObject({ endpoint: '${module.proxy.endpoints["reporting-ro"]}', source: expect.stringMatching(/^git::https:\/\/github\.com\/.*\/\/modules\/lambda-consumer\?ref=v/) });
    expect(Object.keys(config.variable).sort()).toEqual(['data_subnet_ids', 'data_vpc_id', 'reporting_subnet_ids', 'reporting_vpc_id']);
  });
});
