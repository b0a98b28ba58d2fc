/**
 * Background processes of the rehearsal, tracked by pid. Each is spawned detached (its own session
 * and process group, pgid = pid) so it outlives the CLI that started it, and so stopping it can also
 * reach its children (PostgreSQL backends, pgpool children) through the group. One table lists them all
 * (WorkDirLayout.processesFile): `down` and `status` run in other processes and find every pid there.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { hostCommand } from './network/host-command';
import type { OsUser } from './os-user';
import { readJsonFile, writeAtomic } from './state';

export type ProcessKind = 'postgres' | 'pgbouncer' | 'haproxy' | 'pgpool' | 'health-supervisor' | 'host-agent' | 'host' | 'imds' | 'aws-emulator';

export interface TrackedProcess {
  /** Unique within a rehearsal: writer, replica1, pgbouncer-rw, ... */
  readonly name: string;
  readonly kind: ProcessKind;
  readonly pid: number;
  /** Executable path, checked against /proc before signalling so a reused pid is never hit. */
  readonly program: string;
  readonly logFile: string;
  /** A PgBouncer process of the RDS Proxy stand-in: where it sits (poolers.ts). */
  readonly pooler?: PoolerPlacement;
}

export type PoolerEndpoint = 'readWrite' | 'readOnly';

export interface PoolerPlacement {
  readonly endpoint: PoolerEndpoint;
  readonly peerId: number;
  /** The server the process pools for. */
  readonly host: string;
  /** Its place in the host's group: which share of the budget it has. */
  readonly slot: number;
}

/** The table's processes, in start order; killed ones stay listed (their pid is simply gone). */
export function readProcesses(file: string): TrackedProcess[] {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { processes: TrackedProcess[] }).processes : [];
}

const LOCK_TIMEOUT_MS = 5000;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Saves what `change` makes of the table under its lock, as the CLI, the checker and the supervisor all write it:
 * a file made with O_EXCL naming its owner (taken over once the owner is gone), held for a read, a spawn at most,
 * and a rename. Returns the processes as they were.
 */
export function updateProcesses(file: string, change: (processes: TrackedProcess[]) => TrackedProcess[]): TrackedProcess[] {
  const lock = `${file}.lock`;
  const deadline = Date.now() + LOCK_TIMEOUT_MS;
  for (;;) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx', mode: 0o644 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // 0 while it is being written or once released: wait and try again.
      const owner = readJsonFile<number>(lock) ?? 0;
      if (owner > 0 && !isAlive(owner)) rmSync(lock, { force: true });
      else if (Date.now() > deadline) throw new Error(`the process table ${file} stayed locked by pid ${owner} for ${LOCK_TIMEOUT_MS} ms`);
      else Atomics.wait(pause, 0, 0, 2);
    }
  }
  try {
    const before = readProcesses(file);
    writeAtomic(file, `${JSON.stringify({ processes: change([...before]) }, null, 2)}\n`, 0o644);
    return before;
  } finally {
    rmSync(lock, { force: true });
  }
}

export interface SpawnOptions {
  readonly name: string;
  readonly kind: ProcessKind;
  readonly program: string;
  readonly args: ReadonlyArray<string>;
  readonly logFile: string;
  readonly cwd: string;
  readonly user?: OsUser;
  readonly env?: NodeJS.ProcessEnv;
  /** Network namespace to run in (`ip netns exec`, then `setpriv` to `user`; the pid stays the program's). */
  readonly namespace?: string;
  /** cgroup.procs files the program joins before it runs (a CPU budget; cpu-budgets.ts). */
  readonly cgroupProcsFiles?: ReadonlyArray<string>;
}

/** A minimal environment, so the caller's PG* variables cannot leak into the servers. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C', LANG: 'C', TZ: 'UTC', ...extra };
}

export function spawnDaemon(options: SpawnOptions): TrackedProcess {
  const logFd = openSync(options.logFile, 'a');
  try {
    const command = hostCommand({ program: options.program, args: options.args, user: options.user, namespace: options.namespace, cgroupProcsFiles: options.cgroupProcsFiles });
    const child = spawn(command.program, [...command.args], {
      cwd: options.cwd,
      env: options.env ?? cleanEnv(),
      stdio: ['ignore', logFd, logFd],
      detached: true,
      ...(command.spawnAs ?? {}),
    });
    // Reaped by libuv while this process lives; adopted by init once it exits.
    child.on('error', () => undefined);
    child.unref();
    if (child.pid === undefined) throw new Error(`could not spawn ${options.program}`);
    return { name: options.name, kind: options.kind, pid: child.pid, program: options.program, logFile: options.logFile };
  } finally {
    closeSync(logFd);
  }
}

/** /proc/<pid>/stat fields we need: state and process group. */
function procStat(pid: number): { state: string; pgid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is parenthesised and may contain spaces; fields follow the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: rest[0] ?? '?', pgid: Number(rest[2]) };
  } catch {
    return undefined;
  }
}

/** Alive = exists and is not a zombie (a zombie holds a pid but runs nothing). */
export function isAlive(pid: number): boolean {
  const stat = procStat(pid);
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
}

/** Live processes of the group led by `pgid` (the leader's children: backends, walsenders, ...). */
export function groupMembers(pgid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (stat !== undefined && stat.pgid === pgid && stat.state !== 'Z' && stat.state !== 'X') pids.push(Number(entry));
  }
  return pids;
}

/** True when `pid` still runs the program it was started as (guards against pid reuse). */
export function isOurs(proc: TrackedProcess): boolean {
  if (!isAlive(proc.pid)) return false;
  try {
    // The executable, not argv: PostgreSQL and pgpool rewrite their argv for ps.
    return realpathSync(readlinkSync(`/proc/${proc.pid}/exe`)) === realpathSync(proc.program);
  } catch {
    return false;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // Group already empty.
  }
}

/** Polls `done` until it holds (true) or `timeoutMs` has passed (false). */
async function pollUntil(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (done()) return true;
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
}

function waitGone(pgid: number, timeoutMs: number): Promise<boolean> {
  return pollUntil(() => !isAlive(pgid) && groupMembers(pgid).length === 0, timeoutMs);
}

/**
 * Resolves once none of `pids` is alive (true), or after `timeoutMs` (false): a signalled process takes a while
 * to be torn down on a busy machine.
 */
export function waitPidsGone(pids: ReadonlyArray<number>, timeoutMs: number): Promise<boolean> {
  return pollUntil(() => !pids.some(isAlive), timeoutMs);
}

/**
 * The signal that asks each program for a quick clean stop. SIGTERM waits for every client to leave
 * in postgres (smart shutdown) and in PgBouncer 1.23+ (WAIT_FOR_CLIENTS); SIGINT stops them once the
 * transactions in flight are done.
 */
function stopSignal(kind: ProcessKind): NodeJS.Signals {
  return kind === 'postgres' || kind === 'pgbouncer' ? 'SIGINT' : 'SIGTERM';
}

/**
 * Stops a tracked process and everything in its group: the polite signal to the leader, a wait,
 * then SIGKILL to the whole group. Returns the pids still alive afterwards (empty on success).
 */
export async function stopProcess(proc: TrackedProcess, graceMs = proc.kind === 'host' ? 30_000 : 10_000): Promise<number[]> {
  // A booted host's systemd is in a PID namespace (and session) of its own, outside nspawn's group.
  const leader = proc.kind === 'host' ? containerLeader(proc.pid) : undefined;
  const left = await stopGroup(proc, graceMs);
  if (leader !== undefined && isAlive(leader)) {
    // nspawn gone (killed from outside) with its container still running: end the container, all of it.
    killPid(leader);
    await waitGone(leader, 10_000);
    if (isAlive(leader)) left.push(leader);
  }
  return left;
}

function killPid(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Children of `pid` (all its threads'), from /proc. */
function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((t) => readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter((c) => c !== '').map(Number));
  } catch {
    return [];
  }
}

function comm(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/**
 * A container's PID 1 (its systemd) under systemd-nspawn `nspawnPid`: nspawn forks once into the
 * container's namespaces, and that child starts the container's init (or is replaced by it).
 */
export function containerLeader(nspawnPid: number): number | undefined {
  for (const child of childrenOf(nspawnPid)) {
    if (comm(child) === 'systemd') return child;
    const init = childrenOf(child).find((g) => comm(g) === 'systemd');
    if (init !== undefined) return init;
  }
  return undefined;
}

/**
 * Kills a booted host at once, as a host that fails dies: SIGKILL to its systemd ends every process of
 * its PID namespace (SIGKILL to nspawn alone would leave them running, orphaned), then nspawn exits.
 */
export async function killHost(proc: TrackedProcess): Promise<void> {
  const leader = containerLeader(proc.pid);
  if (leader !== undefined) killPid(leader);
  await stopProcess(proc);
}

async function stopGroup(proc: TrackedProcess, graceMs: number): Promise<number[]> {
  if (isOurs(proc)) {
    try {
      process.kill(proc.pid, stopSignal(proc.kind));
    } catch {
      // Exited in between.
    }
    if (await waitGone(proc.pid, graceMs)) return [];
  } else if (groupMembers(proc.pid).length === 0) {
    return [];
  }
  signalGroup(proc.pid, 'SIGKILL');
  await waitGone(proc.pid, 5000);
  return [proc.pid, ...groupMembers(proc.pid)].filter((p) => isAlive(p) && (p !== proc.pid || isOurs(proc)));
}

/** Simulates a host crash: SIGKILL to the whole group at once, then waits until it is gone. */
export async function killProcess(proc: TrackedProcess): Promise<void> {
  signalGroup(proc.pid, 'SIGKILL');
  await waitGone(proc.pid, 5000);
}

/** Last lines of a log file, for error messages. */
export function logTail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
