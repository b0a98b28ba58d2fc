/**
 * What the PgBouncer engine's drills (this directory, one drill per file) share: a consumer's login and TLS
 * connection to a host or the load balancer stand-in, client loops that count their errors by when the
 * attempt began, and waiting for a condition. Each drill runs clients under load, makes one failure happen
 * as AWS would, and returns what the clients saw; each figure has its bound next to it (a function or constant
 * in the drill's file, from the model's settings): the booted suite and the bench hold the figures to them.
 */
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { sleep } from '../sql';
import type { Rehearsal } from '../rehearsal';

export interface DrillLogin {
  readonly username: string;
  readonly password: string;
}

/**
 * Ends a client's connection. node-postgres' end() can wait for ever on a connection whose startup timed out
 * (a pool holding the client while its server is down): a second, then the socket is dropped.
 */
export async function close(c: Client): Promise<void> {
  const ended = await Promise.race([c.end().then(() => true, () => true), sleep(1000).then(() => false)]);
  if (!ended) (c as unknown as { connection?: { stream?: { destroy: () => void } } }).connection?.stream?.destroy();
}

/** `fn` until it succeeds, every 250 ms for up to `ms`; then its last error. */
export async function retrying<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() >= deadline) throw err;
      await sleep(250);
    }
  }
}

/** A consumer's TLS connection (verify-full against the rehearsal CA) to an address and port. */
export async function connectTo(r: Rehearsal, host: string, port: number, login: DrillLogin): Promise<Client> {
  const c = new Client({ host, port, user: login.username, password: login.password, database: r.endpoints.writer.database, ssl: { ca: readFileSync(r.endpoints.writer.caFile, 'utf8') }, connectionTimeoutMillis: 3000, query_timeout: 5000 });
  c.on('error', () => undefined);
  try {
    await c.connect();
    return c;
  } catch (err) {
    await close(c);
    throw err;
  }
}

/**
 * `clients` loops, each on a connection of its own, reconnecting after an error (100 ms later) and, when
 * `reconnectEvery` is set (or returns a number), after that many of its queries (as a pool's clients open
 * connections now and then). `connections` holds each loop's open connection. An error is counted at the time
 * its attempt began: one begun before a failure may end after it.
 */
export function load(clients: number, connect: () => Promise<Client>, step: (c: Client) => Promise<void>, reconnectEvery?: number | (() => number | undefined)): { errors: number[]; messages: Record<string, number>; connections: ReadonlyArray<Client | undefined>; stop: () => Promise<void> } {
  const errors: number[] = [];
  const messages: Record<string, number> = {};
  const connections: Array<Client | undefined> = Array.from({ length: clients }, () => undefined);
  let stopped = false;
  const drop = async (i: number): Promise<void> => {
    const c = connections[i];
    connections[i] = undefined;
    if (c !== undefined) await close(c);
  };
  const worker = async (i: number): Promise<void> => {
    let n = 0;
    while (!stopped) {
      const attemptAt = Date.now();
      try {
        connections[i] ??= await connect();
        await step(connections[i]!);
        n++;
      } catch (err) {
        errors.push(attemptAt);
        const message = errorKind(err);
        messages[message] = (messages[message] ?? 0) + 1;
        await drop(i);
        await sleep(100);
      }
      const every = typeof reconnectEvery === 'function' ? reconnectEvery() : reconnectEvery;
      if (every !== undefined && n % every === 0) await drop(i);
    }
    await drop(i);
  };
  const workers = Array.from({ length: clients }, (_, i) => worker(i));
  return {
    errors,
    messages,
    connections,
    stop: async () => {
      stopped = true;
      await Promise.all(workers);
    },
  };
}

/** An error's message without what varies from one to the next (addresses, pids), to count errors by kind. */
function errorKind(err: unknown): string {
  return String((err as Error).message ?? err)
    .replace(/\d+(\.\d+){3}(:\d+)?/g, '<address>')
    .replace(/\d+/g, 'N')
    .slice(0, 120);
}

export async function waitUntil(ok: () => boolean | Promise<boolean>, ms: number, every = 100): Promise<number | undefined> {
  const from = Date.now();
  while (!(await ok())) {
    if (Date.now() - from > ms) return undefined;
    await sleep(every);
  }
  return Date.now() - from;
}
