/**
 * Runs the consumers' shipped code against the rehearsal in the Lambda runtime they deploy to: each
 * simulated container is one AWS Lambda Runtime Interface Emulator (aws-lambda-rie) running Node.js 24
 * with AWS's runtime interface client (aws-lambda-ric) and the function's bundle (a cdk.out asset
 * directory, or a release zip unpacked), as the nodejs24.x runtime loads it. Its first invocation is the
 * container's cold start (the emulator starts the runtime, which loads the module and connects); later
 * ones are warm, with module-scope state kept. Containers run concurrently, each one invocation at a time.
 * Auth is a password instead of IAM, TLS is verify-full against the rehearsal's CA, exactly as a deployed
 * function verifies RDS Proxy.
 *
 * Each container is driven by a small relay (this Node.js, over IPC) that starts the emulator beside it
 * and POSTs each event to the emulator's invoke endpoint on loopback; with `namespace` (a consumer VPC of
 * network 'namespaces') the relay is started in that namespace (`ip netns exec`), so the emulator and the
 * function are too. Every process is stopped by its pid when the container is discarded.
 */
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENV_VARS, consumerEnvironment, type ConsumerDeployment, type EndpointRole } from '../../lambda/src/environment';
import { RehearsalConfigError } from './errors';
import { findLambdaRuntime, type LambdaRuntime } from './lambda-runtime';
import { hostCommand } from './network/host-command';
import { waitPidsGone } from './processes';
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
  /** Wall time of the invocation as the caller saw it (the POST to the emulator, in the function's network). */
  readonly elapsedMs: number;
  readonly response?: Record<string, unknown>;
  /** A function error as Lambda returns it: errorType as name, errorMessage as message. */
  readonly error?: { readonly name: string; readonly message: string; readonly code?: string };
}

export interface SimulationOptions {
  /** Which of the kit's handlers, when `code` is not given. */
  readonly handler: HandlerName;
  readonly env: Record<string, string>;
  readonly containers: number;
  readonly invocationsPerContainer: number;
  /** The event of each invocation. */
  readonly event: (container: number, invocation: number) => unknown;
  /** Per invocation, and the function's own timeout (AWS_LAMBDA_FUNCTION_TIMEOUT, rounded up to seconds). */
  readonly timeoutMs?: number;
  /** Network namespace the containers run in (ConsumerVpcEndpoints.namespace); default: this process's. */
  readonly namespace?: string;
  /**
   * The function's shipped code: its bundle directory (a cdk.out asset holding index.js) or its release zip.
   * @default the kit's `handler` bundled from lambda/src the way the constructs bundle it at synth
   */
  readonly code?: string;
  /**
   * The function's handler setting (`<file>.<export>`).
   * @default 'index.handler'
   */
  readonly functionHandler?: string;
}

const HANDLER_FILES: Record<HandlerName, 'read-handler' | 'write-handler'> = { read: 'read-handler', write: 'write-handler' };
const DEFAULT_TIMEOUT_MS = 30000;
/** How long an emulator may take to listen, and a container to stop. */
const START_TIMEOUT_MS = 15000;
const STOP_TIMEOUT_MS = 5000;
const INVOKE_PATH = '/2015-03-31/functions/function/invocations';

// The relay, one per container (argv: the task root, then the emulator's command). It takes free loopback
// ports, starts the emulator on it in the task root, says `ready` with the emulator's pid once it listens,
// then POSTs each event it is sent and replies with the status, body and time taken. It exits when the
// emulator does; if its parent goes away or stops it (SIGTERM) it kills the emulator and the runtime under it first.
const RELAY_SOURCE = `
const { spawn } = require('node:child_process');
const { readFileSync } = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const [taskRoot, emulator, ...rest] = process.argv.slice(1);
let rie; let port; let stderr = '';
const children = (pid) => { try { return readFileSync('/proc/' + pid + '/task/' + pid + '/children', 'utf8').split(' ').filter(Boolean).map(Number); } catch { return []; } };
const tree = (pid) => children(pid).flatMap((c) => [...tree(c), c]);
const killAll = () => { if (!rie) return; for (const pid of [...tree(rie.pid), rie.pid]) { try { process.kill(pid, 'SIGKILL'); } catch {} } };
const send = (m) => { if (process.connected) process.send(m); };
const waitListening = (deadline) => {
  const s = net.connect(port, '127.0.0.1');
  s.once('connect', () => { s.destroy(); send({ ready: rie.pid }); });
  s.once('error', () => { s.destroy(); if (Date.now() < deadline) setTimeout(() => waitListening(deadline), 20); else { send({ failed: 'the emulator did not listen within ' + ${START_TIMEOUT_MS} + ' ms' }); killAll(); } });
};
// Two free loopback ports: the invoke endpoint, and the Runtime API the runtime polls (the emulator's 9001
// would collide between containers of one namespace).
const freePort = () => new Promise((resolve) => { const s = net.createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); }); });
Promise.all([freePort(), freePort()]).then(([invokePort, runtimeApiPort]) => {
  port = invokePort;
  const args = ['--runtime-interface-emulator-address', '127.0.0.1:' + port, '--runtime-api-address', '127.0.0.1:' + runtimeApiPort, '--log-level', 'error', ...rest];
  rie = spawn(emulator, args, { cwd: taskRoot, env: process.env, stdio: ['ignore', 'ignore', 'pipe'] });
  rie.stderr.on('data', (d) => { stderr = (stderr + d).slice(-4000); });
  rie.on('error', (err) => send({ failed: String(err.message) }));
  rie.on('exit', (code, signal) => { send({ exited: { code, signal, stderr } }); process.exit(0); });
  waitListening(Date.now() + ${START_TIMEOUT_MS});
});
process.on('message', ({ event }) => {
  const body = JSON.stringify(event === undefined ? {} : event);
  const started = performance.now();
  const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '${INVOKE_PATH}', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
    let data = '';
    res.setEncoding('utf8');
    res.on('data', (c) => (data += c));
    res.on('end', () => send({ status: res.statusCode, body: data, elapsedMs: performance.now() - started }));
  });
  req.on('error', (err) => send({ status: 0, body: String(err.message), elapsedMs: performance.now() - started }));
  req.end(body);
});
process.on('disconnect', () => { killAll(); process.exit(0); });
process.on('SIGTERM', () => { killAll(); process.exit(0); });
`;

type RelayMessage =
  | { ready: number }
  | { failed: string }
  | { exited: { code: number | null; signal: string | null; stderr: string } }
  | { status: number; body: string; elapsedMs: number };

type Reply = { response?: Record<string, unknown>; error?: InvocationOutcome['error']; elapsedMs: number };

/** A simulated container: its emulator, the function's runtime under it, and the relay driving it. */
interface Container {
  /** Sends one event; resolves with the reply, rejects when the container fails, exits or takes longer than timeoutMs. */
  readonly invoke: (event: unknown, label: string, timeoutMs: number) => Promise<Reply>;
  readonly terminate: () => Promise<void>;
}

/** The function's shipped code, ready to run: a task root with the handler's file in it. */
interface TaskRoot {
  readonly dir: string;
  readonly functionHandler: string;
  readonly cleanup: () => void;
}

/** `<file>.<export>` → the file the runtime loads (index.handler → index.js, .mjs or .cjs). */
function handlerFileExists(dir: string, functionHandler: string): boolean {
  const file = functionHandler.slice(0, functionHandler.lastIndexOf('.'));
  return ['.js', '.mjs', '.cjs'].some((ext) => existsSync(join(dir, `${file}${ext}`)));
}

function prepareTaskRoot(options: SimulationOptions): TaskRoot {
  const functionHandler = options.functionHandler ?? 'index.handler';
  if (!/^[\w./-]+\.[\w$]+$/.test(functionHandler)) throw new RehearsalConfigError([`functionHandler '${functionHandler}' is not a Lambda handler setting: give <file>.<export>, e.g. index.handler`]);
  const scratch = mkdtempSync(join(tmpdir(), 'rehearsal-lambda-'));
  const cleanup = (): void => rmSync(scratch, { recursive: true, force: true });
  try {
    let dir: string;
    if (options.code === undefined) {
      // The repository's own handler, bundled as the constructs bundle it (loaded lazily: esbuild is a build tool).
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { bundleHandler } = require('../packaging/handler-bundles') as typeof import('../packaging/handler-bundles');
      dir = bundleHandler(HANDLER_FILES[options.handler], scratch);
    } else if (!existsSync(options.code)) {
      throw new RehearsalConfigError([`the function's code ${options.code} does not exist: synthesize the app again (\`cdk synth\`) for a cdk.out asset, or build the release zips with \`make lambda-zip\``]);
    } else if (statSync(options.code).isDirectory()) {
      dir = options.code;
    } else if (options.code.endsWith('.zip')) {
      dir = join(scratch, 'task');
      execFileSync('unzip', ['-q', options.code, '-d', dir], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 60000 });
    } else {
      throw new RehearsalConfigError([`the function's code ${options.code} is neither a bundle directory nor a .zip: give the cdk.out asset directory or the release zip`]);
    }
    if (!handlerFileExists(dir, functionHandler)) throw new RehearsalConfigError([`the function's code ${options.code ?? dir} has no file for handler ${functionHandler}: give the bundle the function deploys (its cdk.out asset, or the release zip from \`make lambda-zip\`)`]);
    return { dir, functionHandler, cleanup };
  } catch (err) {
    cleanup();
    throw err;
  }
}

/** What the emulator answered, as Lambda's Invoke API reports it: a payload, or a function error. */
function replyOf(status: number, body: string, elapsedMs: number): Reply {
  let parsed: unknown;
  try {
    parsed = body === '' ? undefined : JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  const object = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  // The runtime interface client reports a thrown error as { errorType, errorMessage, trace }.
  if (object !== undefined && typeof object.errorType === 'string' && typeof object.errorMessage === 'string') {
    return { elapsedMs, error: { name: object.errorType, message: object.errorMessage, ...(typeof object.code === 'string' ? { code: object.code } : {}) } };
  }
  if (status !== 200) return { elapsedMs, error: { name: status === 0 ? 'EmulatorUnreachable' : `Emulator${status}`, message: body.trim() } };
  return { elapsedMs, ...(object !== undefined ? { response: object } : {}) };
}

function descendants(pid: number): number[] {
  let kids: number[] = [];
  try {
    kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter((p) => p !== '').map(Number);
  } catch {
    return [];
  }
  return kids.flatMap((k) => [...descendants(k), k]);
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

async function startContainer(options: SimulationOptions, runtime: LambdaRuntime, task: TaskRoot): Promise<Container> {
  const timeoutS = Math.max(1, Math.ceil((options.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000));
  const env = {
    PATH: process.env.PATH ?? '',
    TZ: 'UTC',
    ...options.env,
    // What the nodejs24.x runtime sets: the task root the handler is resolved in, the handler, the timeout.
    LAMBDA_TASK_ROOT: task.dir,
    _HANDLER: task.functionHandler,
    AWS_LAMBDA_FUNCTION_TIMEOUT: String(timeoutS),
  };
  const command = hostCommand({
    program: process.execPath,
    args: ['-e', RELAY_SOURCE, task.dir, runtime.emulator, runtime.node, runtime.client, task.functionHandler],
    ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
  });
  const relay = spawn(command.program, [...command.args], { env, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  let relayStderr = '';
  relay.stderr!.on('data', (d: Buffer) => (relayStderr = (relayStderr + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => relay.once('exit', () => resolve()));
  let emulatorStderr = '';
  relay.on('message', (m: RelayMessage) => {
    if ('exited' in m) emulatorStderr = m.exited.stderr;
  });
  const lastWords = (): string => {
    const words = `${emulatorStderr}\n${relayStderr}`.trim();
    return words === '' ? '' : `: ${words}`;
  };

  let emulatorPid: number | undefined;
  const terminate = async (): Promise<void> => {
    // The runtime first (the emulator reaps it), then the emulator (the relay reaps it and exits), then the relay.
    const killed = emulatorPid === undefined ? [] : [...descendants(emulatorPid), emulatorPid];
    for (const pid of killed) kill(pid, 'SIGKILL');
    if (relay.exitCode === null && relay.signalCode === null) {
      const timer = setTimeout(() => relay.kill('SIGKILL'), STOP_TIMEOUT_MS);
      if (emulatorPid === undefined) relay.kill('SIGTERM');
      await exited;
      clearTimeout(timer);
    }
    // Stopped means gone, not only signalled.
    await waitPidsGone(killed, STOP_TIMEOUT_MS);
  };

  const next = (label: string, timeoutMs: number): Promise<RelayMessage> =>
    new Promise<RelayMessage>((resolve, reject) => {
      const finish = (fn: () => void): void => {
        clearTimeout(timer);
        relay.off('message', onMessage);
        relay.off('error', onError);
        relay.off('exit', onExit);
        fn();
      };
      const timer = setTimeout(() => finish(() => reject(new Error(`${label} timed out after ${timeoutMs} ms${lastWords()}`))), timeoutMs);
      const onMessage = (m: RelayMessage): void => finish(() => ('exited' in m ? reject(new Error(`${label}: the emulator exited (${m.exited.code ?? m.exited.signal}) before replying${lastWords()}`)) : 'failed' in m ? reject(new Error(`${label}: ${m.failed}${lastWords()}`)) : resolve(m)));
      const onError = (err: Error): void => finish(() => reject(err));
      const onExit = (code: number | null): void => finish(() => reject(new Error(`${label}: the container exited (${code}) before replying${lastWords()}`)));
      relay.on('message', onMessage);
      relay.on('error', onError);
      relay.on('exit', onExit);
    });

  try {
    const ready = await next('starting the Lambda runtime emulator', START_TIMEOUT_MS);
    if (!('ready' in ready)) throw new Error(`starting the Lambda runtime emulator: unexpected ${JSON.stringify(ready)}`);
    emulatorPid = ready.ready;
  } catch (err) {
    await terminate();
    throw err;
  }
  return {
    invoke: async (event, label, timeoutMs) => {
      const replied = next(label, timeoutMs);
      relay.send({ event });
      const m = await replied;
      if (!('status' in m)) throw new Error(`${label}: unexpected ${JSON.stringify(m)}`);
      return replyOf(m.status, m.body, m.elapsedMs);
    },
    terminate,
  };
}

async function runContainer(index: number, options: SimulationOptions, runtime: LambdaRuntime, task: TaskRoot): Promise<InvocationOutcome[]> {
  const container = await startContainer(options, runtime, task);
  const outcomes: InvocationOutcome[] = [];
  try {
    for (let i = 0; i < options.invocationsPerContainer; i++) {
      const reply = await container.invoke(options.event(index, i), `container ${index} invocation ${i}`, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
      outcomes.push({ container: index, invocation: i, cold: i === 0, elapsedMs: reply.elapsedMs, ...(reply.response ? { response: reply.response } : {}), ...(reply.error ? { error: reply.error } : {}) });
    }
  } finally {
    // Lambda freezes and eventually discards a container; stopping it closes its connection.
    await container.terminate();
  }
  return outcomes;
}

/** Runs `containers` simulated containers concurrently, each doing its invocations in sequence. */
export async function simulateInvocations(options: SimulationOptions): Promise<InvocationOutcome[]> {
  const runtime = findLambdaRuntime();
  const task = prepareTaskRoot(options);
  try {
    const results = await Promise.allSettled(Array.from({ length: options.containers }, (_, c) => runContainer(c, options, runtime, task)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    return results.flatMap((r) => (r.status === 'fulfilled' ? r.value : []));
  } finally {
    task.cleanup();
  }
}
