/**
 * iproute2 as the network code calls it: one `ip` invocation per change, each bounded in time, its
 * failure reported with the command line and what `ip` said. Reads use `ip -j` (JSON).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { IsolationSetupError, IsolationUnavailableError } from '../errors';

const SYSTEM_DIRS = ['/usr/sbin', '/sbin', '/usr/bin', '/bin'];

/** A program from the system directories or PATH, or undefined. */
export function systemProgram(name: string): string | undefined {
  const dirs = [...SYSTEM_DIRS, ...(process.env.PATH ?? '').split(':').filter((d) => d !== '')];
  return dirs.map((d) => join(d, name)).find((p) => existsSync(p));
}

let ipPath: string | undefined;

/** The `ip` program; IsolationUnavailableError when iproute2 is missing. */
export function ipProgram(): string {
  ipPath ??= systemProgram('ip');
  if (ipPath === undefined) throw new IsolationUnavailableError('network namespaces', 'iproute2 is not installed: `apt-get install -y iproute2`');
  return ipPath;
}

/** Runs `ip <args>`; rejects with IsolationSetupError carrying the command and its stderr. */
export function ip(args: ReadonlyArray<string>, timeoutMs = 10000): Promise<string> {
  const program = ipProgram();
  return new Promise((resolve, reject) => {
    execFile(program, [...args], { timeout: timeoutMs, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err === null) return resolve(stdout);
      const said = (stderr || err.message).trim();
      reject(new IsolationSetupError(`\`ip ${args.join(' ')}\` failed: ${said}`, [], { cause: err }));
    });
  });
}

/** Names of the network namespaces `ip netns` knows (the files of /run/netns). */
export async function listNamespaces(): Promise<string[]> {
  const out = (await ip(['-j', 'netns', 'list'])).trim();
  if (out === '') return [];
  return (JSON.parse(out) as Array<{ name: string }>).map((n) => n.name);
}

/** Pids of the processes inside namespace `ns`. */
export async function namespacePids(ns: string): Promise<number[]> {
  const out = await ip(['netns', 'pids', ns]);
  return out.split('\n').filter((l) => /^\d+$/.test(l.trim())).map((l) => Number(l.trim()));
}

/** True when the root namespace has a link of that name. */
export function rootLinkExists(name: string): boolean {
  return existsSync(join('/sys/class/net', name));
}

export interface Route {
  readonly dst: string;
  readonly type?: string;
  readonly dev?: string;
  readonly gateway?: string;
}

/** The root namespace's main routing table. */
export async function rootRoutes(): Promise<Route[]> {
  const out = (await ip(['-j', 'route', 'show', 'table', 'main'])).trim();
  return out === '' ? [] : (JSON.parse(out) as Route[]);
}
