/**
 * Runs the real Lambda consumer handlers (lambda/src) against the rehearsal, the way Lambda would:
 * each simulated container is a worker thread with its own module instance (so its first invocation
 * is a cold start, with fresh module-scope state and a new connection) and runs its invocations one at
 * a time; containers run concurrently. Auth is a password instead of IAM, TLS is verify-full against
 * the rehearsal's CA, exactly as a deployed function verifies RDS Proxy.
 *
 * With `namespace` (a consumer VPC of network 'namespaces'), each container is a child process started
 * in that namespace (`ip netns exec`) instead, since a thread cannot change network namespace; it runs
 * the same handler the same way and talks over Node's IPC channel.
 */
import { spawn } from 'node:child_process';
import type { EventEmitter } from 'node:events';
import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ENV_VARS, consumerEnvironment, type ConsumerDeployment, type EndpointRole } from '../../lambda/src/environment';
import { hostCommand } from './network/host-command';
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
  /** Network namespace the containers run in (ConsumerVpcEndpoints.namespace); default: this process's. */
  readonly namespace?: string;
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

// The same, in a child process: the handler's path and tsconfig come as arguments, events over IPC.
const CHILD_SOURCE = `
const [handlerPath, tsconfig] = process.argv.slice(1);
if (tsconfig) require('ts-node').register({ project: tsconfig, transpileOnly: true });
const { handler } = require(handlerPath);
process.on('message', async (event) => {
  const started = performance.now();
  try {
    const response = await handler(event);
    process.send({ response, elapsedMs: performance.now() - started });
  } catch (err) {
    process.send({ error: { name: err && err.name, message: String(err && err.message), code: err && err.code }, elapsedMs: performance.now() - started });
  }
});
`;

type Reply = { response?: Record<string, unknown>; error?: InvocationOutcome['error']; elapsedMs: number };

/** A simulated container: a worker thread, or a child process in a namespace; both take events and reply. */
interface Container {
  /** Sends one event; resolves with the reply, rejects when the container fails, exits or takes longer than timeoutMs. */
  readonly invoke: (event: unknown, label: string, timeoutMs: number) => Promise<Reply>;
  readonly terminate: () => Promise<unknown>;
}

function replyFrom(source: EventEmitter, send: (event: unknown) => void, lastWords: () => string): Container['invoke'] {
  return (event, label, timeoutMs) =>
    new Promise<Reply>((resolve, reject) => {
      const finish = (fn: () => void): void => {
        clearTimeout(timer);
        source.off('message', onMessage);
        source.off('error', onError);
        source.off('exit', onExit);
        fn();
      };
      const timer = setTimeout(() => finish(() => reject(new Error(`${label} timed out`))), timeoutMs);
      const onMessage = (m: Reply): void => finish(() => resolve(m));
      const onError = (err: Error): void => finish(() => reject(err));
      const onExit = (code: number | null): void => finish(() => reject(new Error(`${label}: the container exited (${code}) before replying${lastWords()}`)));
      source.on('message', onMessage);
      source.on('error', onError);
      source.on('exit', onExit);
      send(event);
    });
}

function startContainer(options: SimulationOptions): Container {
  const { path, tsconfig } = handlerPath(options.handler);
  const env = { PATH: process.env.PATH ?? '', TZ: 'UTC', ...options.env };
  if (options.namespace === undefined) {
    const worker = new Worker(WORKER_SOURCE, { eval: true, env, workerData: { handlerPath: path, tsconfig } });
    return { invoke: replyFrom(worker, (event) => worker.postMessage(event), () => ''), terminate: () => worker.terminate() };
  }
  const command = hostCommand({ program: process.execPath, args: ['-e', CHILD_SOURCE, path, tsconfig ?? ''], namespace: options.namespace });
  const child = spawn(command.program, [...command.args], { env, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    invoke: replyFrom(child, (event) => child.send(event as object), () => (stderr.trim() === '' ? '' : `: ${stderr.trim()}`)),
    terminate: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

function handlerPath(handler: HandlerName): { path: string; tsconfig?: string } {
  const root = join(__dirname, '..', '..');
  const ts = extname(__filename) === '.ts';
  const path = join(root, 'lambda', 'src', `${HANDLER_FILES[handler]}${ts ? '.ts' : '.js'}`);
  return ts ? { path, tsconfig: join(root, 'tsconfig.json') } : { path };
}

async function runContainer(index: number, options: SimulationOptions): Promise<InvocationOutcome[]> {
  const container = startContainer(options);
  const outcomes: InvocationOutcome[] = [];
  try {
    for (let i = 0; i < options.invocationsPerContainer; i++) {
      const reply = await container.invoke(options.event(index, i), `container ${index} invocation ${i}`, options.timeoutMs ?? 30000);
      outcomes.push({ container: index, invocation: i, cold: i === 0, elapsedMs: reply.elapsedMs, ...(reply.response ? { response: reply.response } : {}), ...(reply.error ? { error: reply.error } : {}) });
    }
  } finally {
    // Lambda freezes and eventually discards a container; terminating closes its connection.
    await container.terminate();
  }
  return outcomes;
}

/** Runs `containers` simulated containers concurrently, each doing its invocations in sequence. */
export async function simulateInvocations(options: SimulationOptions): Promise<InvocationOutcome[]> {
  const results = await Promise.all(Array.from({ length: options.containers }, (_, c) => runContainer(c, options)));
  return results.flat();
}
