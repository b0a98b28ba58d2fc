import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';
import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { readmeUsageExample } from '../helpers/readme';

/**
 * The README's usage example is real code: this test extracts it, type-checks it against the
 * library with the project's compiler options, runs it, and asserts on what it synthesizes. A change
 * to the API that breaks the README breaks this test.
 */
const ROOT = path.join(__dirname, '..', '..');
const GENERATED_DIR = path.join(__dirname, '.generated');
const GENERATED_FILE = path.join(GENERATED_DIR, 'readme-example.ts');

function writeRunnableExample(code: string): void {
  fs.mkdirSync(GENERATED_DIR, { recursive: true });
  const libPath = path.relative(GENERATED_DIR, path.join(ROOT, 'lib')).split(path.sep).join('/');
  const body = code.replace(/from 'aurora-proxy-kit'/g, `from '${libPath}'`);
  // Export what the example builds so the test can inspect it.
  fs.writeFileSync(GENERATED_FILE, `${body}\nexport { app, stack, database };\n`);
}

describe('README usage example', () => {
  beforeAll(() => writeRunnableExample(readmeUsageExample()));
  afterAll(() => fs.rmSync(GENERATED_DIR, { recursive: true, force: true }));

  test('type-checks against the library', () => {
    // GIVEN the project's compiler options
    const config = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile);
    const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
    // WHEN the example is compiled on its own
    const program = ts.createProgram([GENERATED_FILE], { ...parsed.options, noEmit: true });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    // THEN it has no errors
    expect(diagnostics).toEqual([]);
  });

  test('synthesizes the topology it describes', () => {
    // GIVEN the example, run as written (its console.log captured)
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const example = require(GENERATED_FILE) as { stack: Stack; database: { sizing: unknown } };
    const printed = log.mock.calls.map((args) => args[0]);
    log.mockRestore();

    // WHEN it is synthesized
    const template = Template.fromStack(example.stack);

    // THEN it has an r8gd cluster, a read-only endpoint, a consumer and a dashboard
    template.resourcePropertiesCountIs('AWS::RDS::DBInstance', { DBInstanceClass: 'db.r8gd.2xlarge' }, 3);
    template.hasResourceProperties('AWS::RDS::DBProxyEndpoint', { TargetRole: 'READ_ONLY' });
    template.hasResourceProperties('AWS::RDS::DBProxyTargetGroup', {
      ConnectionPoolConfigurationInfo: Match.objectLike({ MaxConnectionsPercent: 80 }),
    });
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    // and the sizing it prints is the construct's own
    expect(printed).toContainEqual(example.database.sizing);
  });
});
