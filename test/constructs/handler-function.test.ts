import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { KIT_HANDLERS, PREBUNDLED_HANDLERS_DIR, handlerFunction, prebundledHandler } from '../../lib/private/handler-function';
import { kitError, newStack } from '../helpers/cdk';

/**
 * Where a kit function's code comes from: the package's pre-bundled handlers when present (the npm
 * package; test/integration/package/npm-package.test.ts synthesizes from the installed tarball), else lambda/src.
 */
describe('handlerFunction', () => {
  test('the repository carries no pre-bundled handlers, so its synth always bundles lambda/src', () => {
    expect(fs.existsSync(PREBUNDLED_HANDLERS_DIR)).toBe(false);
    for (const handler of KIT_HANDLERS) expect(prebundledHandler(handler)).toBeUndefined();
  });

  test('a pre-bundled handler is a directory holding index.js', () => {
    // GIVEN a package layout with one handler bundled and one directory left empty
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prebundled-'));
    try {
      fs.mkdirSync(path.join(dir, 'read-handler'));
      fs.writeFileSync(path.join(dir, 'read-handler', 'index.js'), 'exports.handler = async () => 1;\n');
      fs.mkdirSync(path.join(dir, 'write-handler'));
      // THEN
      expect(prebundledHandler('read-handler', dir)).toBe(path.join(dir, 'read-handler'));
      expect(prebundledHandler('write-handler', dir)).toBeUndefined();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('an entry that does not exist fails at synth, naming it', () => {
    const { stack } = newStack();
    expect(() => handlerFunction(stack, 'Fn', { kitHandler: 'read-handler', entry: '/nonexistent/handler.ts', runtime: lambda.Runtime.NODEJS_24_X })).toThrow(
      kitError('Stack', 'entry /nonexistent/handler.ts does not exist: pass the path of a handler source file'),
    );
  });
});
