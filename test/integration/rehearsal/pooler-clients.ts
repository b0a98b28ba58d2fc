/**
 * Clients the pooler suites drive an endpoint with: a cancel request sent the way libpq sends it over
 * TLS (on a connection of its own, which the kernel may hand to any of the endpoint's processes),
 * looping clients that count their errors and reconnect, and a prober that opens fresh connections.
 */
import { Client } from 'pg';
import { clientConfig, type Endpoint } from '../../../lib/rehearsal';

// The cancel request as libpq sends it over TLS: the compatibility probes' own (lib/bench/compat/probes.ts).
export { cancelKey, sendCancel } from '../../../lib/bench/compat/probes';

export async function connected(endpoint: Endpoint, timeoutMs = 10000): Promise<Client> {
  const client = new Client(clientConfig(endpoint, timeoutMs));
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

export interface LoopFigures {
  readonly transactions: number;
  readonly errors: number;
  /** When each error happened (ms since epoch). */
  readonly errorTimes: ReadonlyArray<number>;
  readonly errorSamples: ReadonlyArray<string>;
}

/** `clients` connections looping `sql` until stopped; a client that fails counts it and reconnects. */
export class LoopingClients {
  private running = true;
  private transactions = 0;
  private readonly errorTimes: number[] = [];
  private readonly samples = new Set<string>();
  private readonly loops: Array<Promise<void>>;

  constructor(endpoint: Endpoint, clients: number, sql: string, pauseMs = 5) {
    this.loops = Array.from({ length: clients }, () => this.loop(endpoint, sql, pauseMs));
  }

  private async loop(endpoint: Endpoint, sql: string, pauseMs: number): Promise<void> {
    let client: Client | undefined;
    while (this.running) {
      try {
        client ??= await connected(endpoint, 5000);
        await client.query(sql);
        this.transactions++;
      } catch (err) {
        this.errorTimes.push(Date.now());
        this.samples.add((err as Error).message);
        await client?.end().catch(() => undefined);
        client = undefined;
      }
      await new Promise((r) => setTimeout(r, pauseMs));
    }
    await client?.end().catch(() => undefined);
  }

  get figures(): LoopFigures {
    return { transactions: this.transactions, errors: this.errorTimes.length, errorTimes: [...this.errorTimes], errorSamples: [...this.samples].slice(0, 5) };
  }

  async stop(): Promise<LoopFigures> {
    this.running = false;
    await Promise.all(this.loops);
    return this.figures;
  }
}

export interface ProbeFigures {
  readonly attempts: number;
  readonly failures: number;
  readonly failureTimes: ReadonlyArray<number>;
  /** When each failed attempt began: one begun before a kill may have been on the killed process. */
  readonly failureStarts: ReadonlyArray<number>;
}

/** Opens a fresh connection and runs one query every `everyMs`, recording which attempts failed. */
export class FreshConnectionProber {
  private running = true;
  private attempts = 0;
  private readonly failureTimes: number[] = [];
  private readonly failureStarts: number[] = [];
  private readonly loop: Promise<void>;

  constructor(endpoint: Endpoint, everyMs = 20) {
    this.loop = (async () => {
      while (this.running) {
        this.attempts++;
        const startedAt = Date.now();
        const client = new Client(clientConfig(endpoint, 3000));
        client.on('error', () => undefined);
        try {
          await client.connect();
          await client.query('SELECT 1');
        } catch {
          this.failureTimes.push(Date.now());
          this.failureStarts.push(startedAt);
        } finally {
          await client.end().catch(() => undefined);
        }
        await new Promise((r) => setTimeout(r, everyMs));
      }
    })();
  }

  async stop(): Promise<ProbeFigures> {
    this.running = false;
    await this.loop;
    return { attempts: this.attempts, failures: this.failureTimes.length, failureTimes: [...this.failureTimes], failureStarts: [...this.failureStarts] };
  }
}

/** What fresh clients found of the statements earlier clients prepared (preparedStatementIsolation). */
export interface PreparedIsolationFigures {
  /** Server connections on which a client ran SQL PREPARE, and on which one used a named protocol-level statement. */
  readonly preparedOn: number;
  readonly namedOn: number;
  /** The first clients' PREPAREs that failed because the name already existed on their server connection. */
  readonly collisions: number;
  readonly fresh: number;
  /** Fresh clients whose transaction ran on a server connection where another client had run PREPARE. */
  readonly onPrepared: number;
  /** Fresh clients that saw an SQL-level statement in pg_prepared_statements (the first few: pid and names), and that could EXECUTE leak_probe. */
  readonly saw: number;
  readonly sawSamples: ReadonlyArray<string>;
  readonly executed: number;
  /** Why each EXECUTE failed (SQLSTATE), counted. */
  readonly executeErrors: Readonly<Record<string, number>>;
  /** Fresh clients on a server connection where the named statement had run, and of those, how many found PgBouncer's statement still there. */
  readonly onNamed: number;
  readonly keptNamed: number;
  /** The first clients' named statement run again afterwards: executions that worked. */
  readonly namedAgain: number;
}

const NAMED_PROBE = { name: 'isolation_named_probe', text: 'SELECT pg_backend_pid() AS pid, pg_sleep(0.2), $1::int + 1 AS n' };

/**
 * `preparers` clients (enough to occupy every server connection of the endpoint: each holds one for
 * 0.2 s) each run SQL `PREPARE leak_probe` and a named protocol-level statement (node-postgres
 * `{ name }`, which PgBouncer prepares on the server as PGBOUNCER_<n>). Then `fresh` new clients,
 * `batch` at a time, each look in one transaction (one server connection) for SQL-level statements
 * and for PgBouncer's, and try to EXECUTE leak_probe. Last the first clients run their named statement
 * again, on whatever server connection they get.
 */
export async function preparedStatementIsolation(connect: () => Promise<Client>, o: { preparers: number; fresh: number; batch: number }): Promise<PreparedIsolationFigures> {
  const preparers = await Promise.all(Array.from({ length: o.preparers }, () => connect()));
  const preparedOn = new Set<number>();
  const namedOn = new Set<number>();
  const saw: string[] = [];
  let collisions = 0;
  let executed = 0;
  let onPrepared = 0;
  let onNamed = 0;
  let keptNamed = 0;
  let namedAgain = 0;
  const executeErrors: Record<string, number> = {};
  try {
    await Promise.all(
      preparers.map(async (c, i) => {
        // One simple query, one transaction: the PREPARE and the pid are of the same server connection.
        // "already exists" means another client's PREPARE was left on this one: a leak too.
        const res = (await c.query("PREPARE leak_probe AS SELECT 'leaked' AS v; SELECT pg_backend_pid() AS pid, pg_sleep(0.2)").catch((err: { code?: string }) => {
          if (err.code !== '42P05') throw err;
          collisions++;
          return undefined;
        })) as unknown as Array<{ rows: Array<{ pid: number }> }> | undefined;
        if (res !== undefined) preparedOn.add(res[1]!.rows[0]!.pid);
        namedOn.add((await c.query<{ pid: number }>({ ...NAMED_PROBE, values: [i] })).rows[0]!.pid);
      }),
    );
    for (let done = 0; done < o.fresh; done += o.batch) {
      await Promise.all(
        Array.from({ length: Math.min(o.batch, o.fresh - done) }, async () => {
          const c = await connect();
          try {
            await c.query('BEGIN');
            const row = (await c.query<{ pid: number; from_sql: string[]; pooler: string[] }>("SELECT pg_backend_pid() AS pid, array(SELECT name FROM pg_prepared_statements WHERE from_sql ORDER BY name) AS from_sql, array(SELECT name FROM pg_prepared_statements WHERE NOT from_sql AND name LIKE 'PGBOUNCER\\_%') AS pooler")).rows[0]!;
            if (preparedOn.has(row.pid)) onPrepared++;
            if (namedOn.has(row.pid)) {
              onNamed++;
              if (row.pooler.length > 0) keptNamed++;
            }
            if (row.from_sql.length > 0) saw.push(`${row.pid}: ${row.from_sql.join(',')}`);
            await c.query('SAVEPOINT probe');
            try {
              await c.query('EXECUTE leak_probe');
              executed++;
            } catch (err) {
              const code = (err as { code?: string }).code ?? (err as Error).message;
              executeErrors[code] = (executeErrors[code] ?? 0) + 1;
              await c.query('ROLLBACK TO SAVEPOINT probe');
            }
            await c.query('COMMIT');
          } finally {
            await c.end();
          }
        }),
      );
    }
    for (const [i, c] of preparers.entries()) {
      if ((await c.query<{ n: number }>({ ...NAMED_PROBE, values: [i] })).rows[0]?.n === i + 1) namedAgain++;
    }
  } finally {
    await Promise.all(preparers.map((c) => c.end().catch(() => undefined)));
  }
  return { preparedOn: preparedOn.size, namedOn: namedOn.size, collisions, fresh: o.fresh, onPrepared, saw: saw.length, sawSamples: saw.slice(0, 5), executed, executeErrors, onNamed, keptNamed, namedAgain };
}

/** One message of a hand-driven pipeline: a named Parse, a Bind + Execute of a statement, or a simple query. */
export type PipelineStep = { readonly parse: string; readonly text: string } | { readonly run: string } | { readonly query: string };

/**
 * A connection whose wire is driven by hand after node-postgres logged it in (TLS, SCRAM): its own
 * handlers are taken off, so Parse/Bind/Execute can be pipelined before one Sync, as pgx and JDBC send
 * them. `send` writes the steps (and a Sync after extended-protocol ones) at once and resolves with what
 * came back up to ReadyForQuery, each message as a word: parseComplete, `error <SQLSTATE>`,
 * `readyForQuery <status>`, `end` when the connection closed.
 */
export async function pipelined(endpoint: Endpoint): Promise<{ send(steps: ReadonlyArray<PipelineStep>): Promise<string[]>; close(): void }> {
  const client = await connected(endpoint);
  const con = (client as unknown as { connection: PgConnection }).connection;
  con.removeAllListeners();
  // What node-postgres's own 'newListener' hook (removed with the rest) would set for a 'message' listener.
  con._emitMessage = true;
  let replies: string[] = [];
  let done: ((r: string[]) => void) | undefined;
  const finish = (): void => {
    const resolve = done;
    done = undefined;
    resolve?.(replies);
  };
  con.on('message', (m: { name: string; code?: string; status?: string; fields?: unknown[] }) => {
    replies.push(m.name === 'error' ? `error ${m.code}` : m.name === 'readyForQuery' ? `readyForQuery ${m.status}` : m.name === 'dataRow' ? `dataRow ${JSON.stringify(m.fields)}` : m.name);
    if (m.name === 'readyForQuery') finish();
  });
  con.on('error', () => undefined);
  con.on('end', () => {
    replies.push('end');
    finish();
  });
  return {
    send: (steps) =>
      new Promise((resolve, reject) => {
        // A simple query ends in its own ReadyForQuery: it goes alone.
        if (steps.length > 1 && steps.some((s) => 'query' in s)) throw new Error('pipelined: send a simple query on its own');
        replies = [];
        const timer = setTimeout(() => reject(new Error(`no ReadyForQuery in 10 s: ${replies.join(', ')}`)), 10000);
        done = (r) => {
          clearTimeout(timer);
          resolve(r);
        };
        for (const s of steps) {
          if ('parse' in s) con.parse({ name: s.parse, text: s.text, types: [] });
          else if ('run' in s) {
            con.bind({ statement: s.run, values: [] });
            con.execute({});
          } else con.query(s.query);
        }
        if (!steps.some((s) => 'query' in s)) con.sync();
      }),
    close: () => con.stream.destroy(),
  };
}

interface PgConnection {
  _emitMessage: boolean;
  removeAllListeners(): void;
  on(event: string, listener: (...args: never[]) => void): void;
  parse(q: { name: string; text: string; types: unknown[] }): void;
  bind(b: { statement: string; values: unknown[] }): void;
  execute(e: object): void;
  query(text: string): void;
  sync(): void;
  readonly stream: { destroy(): void };
}
