/**
 * Shared by the namespace and cgroup suites: small real programs (node) started on a simulated host
 * through hostCommand, each bounded in time by itself and stopped by the test, by pid.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { hostCommand, networkNamespacesUnavailable, type HostCommandOptions } from '../../../lib/rehearsal';

/** Why the live suites cannot run here (not root, no iproute2), or undefined. */
export const liveUnavailable = networkNamespacesUnavailable();

export interface Started {
  readonly pid: number;
  readonly output: () => string;
  /** SIGTERM by pid, then waits for the exit. */
  readonly stop: () => Promise<void>;
}

type Options = Omit<HostCommandOptions, 'program'> & { readonly env?: NodeJS.ProcessEnv };

/** Starts `node <args>` as hostCommand builds it and waits for `ready` on its stdout. */
export function startNode(options: Options, ready: RegExp, timeoutMs = 10000): Promise<Started> {
  const cmd = hostCommand({ ...options, program: process.execPath });
  const child = spawn(cmd.program, [...cmd.args], { stdio: ['ignore', 'pipe', 'pipe'], env: options.env ?? { PATH: process.env.PATH ?? '' }, ...(cmd.spawnAs ?? {}) });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const started: Started = {
    pid: child.pid!,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGTERM');
      await exited;
    },
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => started.stop().then(() => reject(new Error(`not ready in ${timeoutMs} ms: ${output}`))), timeoutMs);
    const check = (): void => {
      if (!ready.test(output)) return;
      clearTimeout(timer);
      resolve(started);
    };
    child.stdout.on('data', check);
    child.once('exit', () => {
      clearTimeout(timer);
      reject(new Error(`exited before ready: ${output}`));
    });
  });
}

/** Runs `node <args>` to completion (bounded), returning its stdout parsed as JSON. */
export function runNode<T>(options: Options, timeoutMs = 20000): Promise<T> {
  const cmd = hostCommand({ ...options, program: process.execPath });
  return new Promise((resolve, reject) => {
    const child = spawn(cmd.program, [...cmd.args], { stdio: ['ignore', 'pipe', 'pipe'], env: options.env ?? { PATH: process.env.PATH ?? '' }, timeout: timeoutMs, ...(cmd.spawnAs ?? {}) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => {
      try {
        resolve(JSON.parse(stdout) as T);
      } catch {
        reject(new Error(`exit ${code}, no JSON on stdout: ${stdout}${stderr}`));
      }
    });
  });
}

/**
 * A TCP server on each `address:port` given as arguments: greets with its local address and hangs up.
 * It exits by itself after 60 s, in case the test that started it never gets to stop it.
 */
export const GREETING_SERVER = `
const net = require('node:net');
setTimeout(() => process.exit(0), 60000).unref();
process.on('SIGTERM', () => process.exit(0));
const targets = process.argv.slice(1);
let listening = 0;
for (const target of targets) {
  const [host, port] = target.split(':');
  net.createServer((s) => s.end('hello from ' + s.localAddress)).listen(Number(port), host, () => {
    if (++listening === targets.length) console.log('listening');
  });
}
setInterval(() => undefined, 1000);
`;

/** Connects to each `host:port` argument; prints {target: greeting or error code} as JSON. */
export const CONNECT_PROBE = `
const net = require('node:net');
const targets = process.argv.slice(1);
const results = {};
let left = targets.length;
for (const target of targets) {
  const [host, port] = target.split(':');
  const s = net.connect({ host, port: Number(port), timeout: 3000 });
  let data = '';
  const done = (r) => { if (results[target] === undefined) { results[target] = r; s.destroy(); if (--left === 0) console.log(JSON.stringify(results)); } };
  s.on('data', (d) => (data += d));
  s.on('end', () => done(data));
  s.on('timeout', () => done('timeout'));
  s.on('error', (e) => done(e.code || e.message));
}
`;

/** Resolves each name argument with the system resolver (getaddrinfo: /etc/hosts); prints {name: address or error code}. */
export const RESOLVE_PROBE = `
const dns = require('node:dns');
const names = process.argv.slice(1);
Promise.all(names.map((n) => dns.promises.lookup(n, { family: 4 }).then((a) => a.address, (e) => e.code))).then((r) =>
  console.log(JSON.stringify(Object.fromEntries(names.map((n, i) => [n, r[i]])))));
`;

/** ts-node for a TypeScript fixture run as a child process (its tsconfig found from the repository). */
export function tsNodeArgs(script: string): { args: string[]; env: Record<string, string> } {
  const root = join(__dirname, '..', '..', '..');
  return {
    args: ['-r', require.resolve('ts-node/register/transpile-only'), script],
    env: { TS_NODE_PROJECT: join(root, 'tsconfig.json'), TS_NODE_TRANSPILE_ONLY: 'true' },
  };
}
