/**
 * Runs the real Lambda consumer handlers (lambda/src) against the rehearsal, the way Lambda would:
 * each simulated container is a worker thread with its own module instance (so its first invocation
 * is a cold start, with fresh module-scope state and a new connection) and runs its invocations one at
 * a time; containers run concurrently. Auth is a password instead of IAM, TLS is verify-full against
 * the rehearsal's CA, exactly as a deployed function verifies RDS Proxy.
 */
import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ENV_VARS, consumerEnvironment, type ConsumerDeployment, type EndpointRole } from '../../lambda/src/environment';
import type { Endpoint } from './types';

export type HandlerName = 'read' | 'write';

/**
 * The environment a consumer function gets when wired to a rehearsal endpoint, built by the consumers'
 * own contract (lambda/src/environment.ts) as the CDK construct builds it, with a password in place of
 * an IAM token and the rehearsal's CA beside the public roots.
 */
export function lambdaEnvironment(endpoint: Endpoint, role: EndpointRole, overrides: Partial<ConsumerDeployment> = {}): Record<string, string> {
  return {
    ...consumerEnvironment({
      host: endpoint.host,
      port: endpoint.port,
      database: endpoint.database,
      user: endpoint.user,
      endpointRole: role,
      auth: { kind: 'password', password: endpoint.password },
      tls: { mode: 'verify-full', caFile: endpoint.caFile },
      logLevel: 'SILENT',
      ...overrides,
    }),
    [ENV_VARS.functionName]: `rehearsal-${role === 'READ_ONLY' ? 'reader' : 'writer'}`,
  };
}

export interface InvocationOutcome {
  readonly container: number;
  /** 0 = the container's cold start. */
  readonly invocation: number;
  readonly cold: boolean;
  /** Wall time of the invocation as the caller saw it. */
  readonly elapsedMs: number;
  readonly response?: Record<string, unknown>;
  readonly error?: { readonly name: string; readonly message: string; readonly code?: string };
}

export interface SimulationOptions {
  readonly handler: HandlerName;
  readonly env: Record<string, string>;
  readonly containers: number;
  readonly invocationsPerContainer: number;
  /** The event of each invocation. */
  readonly event: (container: number, invocation: number) => unknown;
  readonly timeoutMs?: number;
}

const HANDLER_FILES: Record<HandlerName, string> = { read: 'read-handler', write: 'write-handler' };

// Runs inside each worker: load the handler (through ts-node when it is TypeScript), then invoke it
// once per message. process.env is the worker's own copy, set from the `env` option.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
if (workerData.tsconfig) require('ts-node').register({ project: workerData.tsconfig, transpileOnly: true });
const { handler } = require(workerData.handlerPath);
parentPort.on('message', async (event) => {
  const started = performance.now();
  try {
    const response = await handler(event);
    parentPort.postMessage({ response, elapsedMs: performance.now() - started });
  } catch (err) {
    parentPort.postMessage({ error: { name: err && err.name, message: String(err && err.message), code: err && err.code }, elapsedMs: performance.now() - started });
  }
});
`;

function handlerPath(handler: HandlerName): { path: string; tsconfig?: string } {
  const root = join(__dirname, '..', '..');
  const ts = extname(__filename) === '.ts';
  const path = join(root, 'lambda', 'src', `${HANDLER_FILES[handler]}${ts ? '.ts' : '.js'}`);
  return ts ? { path, tsconfig: join(root, 'tsconfig.json') } : { path };
}

async function runContainer(index: number, options: SimulationOptions): Promise<InvocationOutcome[]> {
  const { path, tsconfig } = handlerPath(options.handler);
  const worker = new Worker(WORKER_SOURCE, { eval: true, env: { PATH: process.env.PATH ?? '', TZ: 'UTC', ...options.env }, workerData: { handlerPath: path, tsconfig } });
  const outcomes: InvocationOutcome[] = [];
  try {
    for (let i = 0; i < options.invocationsPerContainer; i++) {
      const reply = await new Promise<{ response?: Record<string, unknown>; error?: InvocationOutcome['error']; elapsedMs: number }>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`container ${index} invocation ${i} timed out`)), options.timeoutMs ?? 30000);
        const done = (fn: () => void): void => {
          clearTimeout(timer);
          worker.off('message', onMessage);
          worker.off('error', onError);
          fn();
        };
        const onMessage = (m: { response?: Record<string, unknown>; error?: InvocationOutcome['error']; elapsedMs: number }): void => done(() => resolve(m));
        const onError = (err: Error): void => done(() => reject(err));
        worker.on('message', onMessage);
        worker.on('error', onError);
        worker.postMessage(options.event(index, i));
      });
      outcomes.push({ container: index, invocation: i, cold: i === 0, elapsedMs: reply.elapsedMs, ...(reply.response ? { response: reply.response } : {}), ...(reply.error ? { error: reply.error } : {}) });
    }
  } finally {
    // Lambda freezes and eventually discards a container; terminating closes its connection.
    await worker.terminate();
  }
  return outcomes;
}

/** Runs `containers` simulated containers concurrently, each doing its invocations in sequence. */
export async function simulateInvocations(options: SimulationOptions): Promise<InvocationOutcome[]> {
  const results = await Promise.all(Array.from({ length: options.containers }, (_, c) => runContainer(c, options)));
  return results.flat();
}
