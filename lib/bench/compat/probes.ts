/**
 * The compatibility probes: one per class of session feature an application may rely on. Each does
 * what an application does (its own statements, on its own connection, each statement its own
 * transaction unless said otherwise) and returns what it saw, which is compared with what PostgreSQL
 * itself does (`expected`). A target then passes, fails (the client got an error the server alone
 * does not give, or another one) or silently differs (no error, another result).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { Client, type ClientConfig } from 'pg';
import { clientConfig, findPostgres15BinDir, query, sleep, waitFor, type CompatTarget, type Target } from '../../rehearsal';

/** What a probe saw: a result, or the error the client got (SQLSTATE and message). */
export type Observation = { readonly value: string } | { readonly error: string; readonly message: string };

export interface ProbeContext {
  /** Which target the probe runs on (a tag in shared tables). */
  readonly target: CompatTarget;
  /** The application's login on that target. */
  readonly app: Target;
  /** The superuser, directly on the server, to observe or act on what the client's server connection does. */
  readonly admin: Target;
}

/** Feature classes, as the matrix groups them and RDS Proxy's documentation names them. */
export type CompatFeature = 'set' | 'startup' | 'prepared-sql' | 'prepared-protocol' | 'temp-table' | 'advisory-lock' | 'cursor-with-hold' | 'sequence' | 'listen-notify' | 'copy' | 'cancel' | 'lost-connection' | 'authentication';

export interface CompatProbe {
  readonly id: string;
  readonly feature: CompatFeature;
  /** What the probe does, as the matrix shows it. */
  readonly does: string;
  /** What PostgreSQL does when the client talks to it directly. */
  readonly expected: Observation;
  readonly run: (ctx: ProbeContext) => Promise<string>;
}

const NOTIFY_WAIT_MS = 1000;

/** A connection of the probe's own; errors after connect are left to the queries that see them. */
async function connected(target: Target, extra: Partial<ClientConfig> = {}): Promise<Client> {
  const client = new Client({ ...clientConfig(target, 5000), application_name: 'compat-probe', ...extra });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** Runs `body` on a fresh connection and closes it whatever happens. */
async function withClient<T>(target: Target, body: (c: Client) => Promise<T>, extra: Partial<ClientConfig> = {}): Promise<T> {
  const client = await connected(target, extra);
  try {
    return await body(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function one(c: Client, sql: string): Promise<string> {
  const rows = (await c.query<Record<string, unknown>>(sql)).rows;
  return rows.map((r) => Object.values(r).map(String).join('|')).join(',');
}

/** The key PgBouncer or PostgreSQL gave the client in BackendKeyData (node-postgres keeps it untyped). */
export function cancelKey(client: Client): { processID: number; secretKey: number } {
  const c = client as unknown as { processID: number; secretKey: number };
  return { processID: c.processID, secretKey: c.secretKey };
}

/** A CancelRequest as libpq sends it to a server that requires TLS: SSLRequest, verified TLS, then the key. */
export function sendCancel(target: Target, key: { processID: number; secretKey: number }, timeoutMs = 5000): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect({ host: target.host, port: target.port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('cancel request timed out'));
    }, timeoutMs);
    const fail = (err: Error): void => {
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    };
    socket.once('error', fail);
    socket.once('connect', () => {
      const sslRequest = Buffer.alloc(8);
      sslRequest.writeInt32BE(8, 0);
      sslRequest.writeInt32BE(80877103, 4);
      socket.write(sslRequest);
    });
    socket.once('data', (answer) => {
      if (answer[0] !== 0x53) return fail(new Error(`TLS refused for the cancel request: ${answer.toString()}`));
      const tls = tlsConnect({ socket, ca: readFileSync(target.caFile, 'utf8'), host: target.host });
      tls.once('error', fail);
      tls.once('secureConnect', () => {
        const cancel = Buffer.alloc(16);
        cancel.writeInt32BE(16, 0);
        cancel.writeInt32BE(80877102, 4);
        cancel.writeInt32BE(key.processID, 8);
        cancel.writeInt32BE(key.secretKey, 12);
        tls.end(cancel);
      });
      tls.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  });
}

/** Waits until a statement carrying `marker` runs on the server (seen by the superuser, directly). */
async function runningOnServer(admin: Target, marker: string): Promise<number> {
  return waitFor(`a statement marked ${marker} to run`, 5000, async () => {
    const rows = await query<{ pid: number }>(admin, "SELECT pid FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1 AND pid <> pg_backend_pid()", [`%${marker}%`]);
    return rows[0]?.pid;
  }, 20);
}

/** A long statement, and `act` once it runs; resolves with what the client got. */
async function interrupted(ctx: ProbeContext, marker: string, act: (client: Client, pid: number) => Promise<void>): Promise<string> {
  return withClient(ctx.app, async (c) => {
    const running = c.query(`SELECT pg_sleep(10) /* ${marker} */`);
    // Settled here so a rejection before `act` finishes is not unhandled.
    const outcome = running.then(() => 'finished', (err: unknown) => err);
    await act(c, await runningOnServer(ctx.admin, marker));
    const result = await outcome;
    if (result instanceof Error) throw result;
    return String(result);
  });
}

/** psql, a libpq client, with the target's TLS (verify-full) and password; stdin given, stdout returned. */
function psql(target: Target, sql: string, stdin = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', PGHOST: target.host, PGPORT: String(target.port), PGUSER: target.user, PGPASSWORD: target.password, PGDATABASE: target.database, PGSSLMODE: 'verify-full', PGSSLROOTCERT: target.caFile, PGCONNECT_TIMEOUT: '5' };
    const child = execFile(join(findPostgres15BinDir(), 'psql'), ['-X', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-c', sql], { env, timeout: 10000 }, (err, stdout, stderr) => {
      if (err) {
        // psql prints "ERROR:  <message>" (VERBOSITY default): the message is what a client shows.
        const message = (/(?:ERROR|FATAL):\s+(.*)/.exec(stderr)?.[1] ?? stderr.trim()) || err.message;
        reject(Object.assign(new Error(message), { code: 'psql' }));
        return;
      }
      resolve(stdout.trim());
    });
    child.stdin?.end(stdin);
  });
}

export const COMPAT_PROBES: ReadonlyArray<CompatProbe> = [
  {
    id: 'set-session',
    feature: 'set',
    does: '`SET work_mem = \'7MB\'`, then `SHOW work_mem`',
    expected: { value: '7MB' },
    run: ({ app }) => withClient(app, async (c) => {
      await c.query("SET work_mem = '7MB'");
      return one(c, 'SHOW work_mem');
    }),
  },
  {
    id: 'startup-options-untracked',
    feature: 'startup',
    does: 'connect with `options=-c work_mem=7MB`, then `SHOW work_mem`',
    expected: { value: '7MB' },
    run: ({ app }) => withClient(app, (c) => one(c, 'SHOW work_mem'), { options: '-c work_mem=7MB' }),
  },
  {
    id: 'startup-options-tracked',
    feature: 'startup',
    does: 'connect with `options=-c TimeZone=Asia/Tokyo`, then `SHOW TimeZone`',
    expected: { value: 'Asia/Tokyo' },
    run: ({ app }) => withClient(app, (c) => one(c, 'SHOW TimeZone'), { options: '-c TimeZone=Asia/Tokyo' }),
  },
  {
    id: 'startup-statement-timeout',
    feature: 'startup',
    does: 'connect with the startup parameter `statement_timeout=4321` (node-postgres `statement_timeout`), then `SHOW statement_timeout`',
    expected: { value: '4321ms' },
    run: ({ app }) => withClient(app, (c) => one(c, 'SHOW statement_timeout'), { statement_timeout: 4321 }),
  },
  {
    id: 'prepare-sql',
    feature: 'prepared-sql',
    does: '`PREPARE compat_p AS SELECT 42`, then `EXECUTE compat_p`',
    expected: { value: '42' },
    run: ({ app }) => withClient(app, async (c) => {
      await c.query('PREPARE compat_p AS SELECT 42');
      return one(c, 'EXECUTE compat_p');
    }),
  },
  {
    id: 'prepare-protocol',
    feature: 'prepared-protocol',
    does: 'a named protocol-level statement (Parse/Bind/Execute), executed twice',
    expected: { value: '2,3' },
    run: ({ app }) => withClient(app, async (c) => {
      const q = (n: number): Promise<string> => c.query<{ n: number }>({ name: 'compat_named', text: 'SELECT $1::int + 1 AS n', values: [n] }).then((r) => String(r.rows[0]?.n));
      return [await q(1), await q(2)].join(',');
    }),
  },
  {
    id: 'prepare-protocol-failed-parse',
    feature: 'prepared-protocol',
    does: 'Parse of a name with invalid SQL (rejected: 42601), then Parse of the same name with valid SQL, executed',
    expected: { value: '42601 then 1' },
    run: ({ app }) => withClient(app, async (c) => {
      const first = await c.query({ name: 'compat_reparse', text: 'SELEC 1' }).then(() => 'accepted', (err: { code?: string }) => err.code ?? 'no SQLSTATE');
      const second = await c.query<{ n: number }>({ name: 'compat_reparse', text: 'SELECT 1 AS n' });
      return `${first} then ${second.rows[0]?.n}`;
    }),
  },
  {
    id: 'temp-table',
    feature: 'temp-table',
    does: '`CREATE TEMP TABLE compat_tmp (n int)`, then `INSERT INTO compat_tmp VALUES (1) RETURNING n`',
    expected: { value: '1' },
    run: ({ app }) => withClient(app, async (c) => {
      await c.query('CREATE TEMP TABLE compat_tmp (n int)');
      return one(c, 'INSERT INTO compat_tmp VALUES (1) RETURNING n');
    }),
  },
  {
    id: 'advisory-lock',
    feature: 'advisory-lock',
    does: '`SELECT pg_advisory_lock(4242)`, then a second client of the same endpoint tries `pg_try_advisory_lock(4242)`',
    expected: { value: 'held: second client refused' },
    run: ({ app }) => withClient(app, async (holder) => {
      await holder.query('SELECT pg_advisory_lock(4242)');
      const taken = await withClient(app, (other) => one(other, 'SELECT pg_try_advisory_lock(4242)'));
      return taken === 'false' ? 'held: second client refused' : 'not held: second client took it';
    }),
  },
  {
    id: 'cursor-with-hold',
    feature: 'cursor-with-hold',
    does: '`DECLARE compat_c CURSOR WITH HOLD FOR SELECT generate_series(1, 3)`, then `FETCH 2 FROM compat_c`',
    expected: { value: '1,2' },
    run: ({ app }) => withClient(app, async (c) => {
      await c.query('DECLARE compat_c CURSOR WITH HOLD FOR SELECT generate_series(1, 3)');
      return one(c, 'FETCH 2 FROM compat_c');
    }),
  },
  {
    id: 'currval',
    feature: 'sequence',
    does: '`SELECT nextval(\'compat_seq\')`, then `SELECT currval(\'compat_seq\')`',
    expected: { value: 'currval = nextval' },
    run: ({ app }) => withClient(app, async (c) => {
      const next = await one(c, "SELECT nextval('compat_seq')");
      const current = await one(c, "SELECT currval('compat_seq')");
      return current === next ? 'currval = nextval' : `currval ${current} after nextval ${next}`;
    }),
  },
  {
    id: 'listen-notify',
    feature: 'listen-notify',
    does: `\`LISTEN compat_channel\`, then a second client of the same endpoint \`NOTIFY\`s it; waits ${NOTIFY_WAIT_MS} ms`,
    expected: { value: 'notified' },
    run: ({ app }) => withClient(app, async (listener) => {
      let got: string | undefined;
      listener.on('notification', (n) => (got = n.payload));
      await listener.query('LISTEN compat_channel');
      await withClient(app, (other) => other.query("NOTIFY compat_channel, 'compat'"));
      for (let waited = 0; got === undefined && waited < NOTIFY_WAIT_MS; waited += 50) await sleep(50);
      return got === 'compat' ? 'notified' : `no notification in ${NOTIFY_WAIT_MS} ms`;
    }),
  },
  {
    id: 'copy',
    feature: 'copy',
    does: '`COPY compat_copy FROM STDIN` (3 rows, psql), then `COPY (SELECT ...) TO STDOUT`',
    expected: { value: '1,2,3' },
    run: async ({ app, target }) => {
      await psql(app, `DELETE FROM compat_copy WHERE target = '${target}'`);
      await psql(app, 'COPY compat_copy FROM STDIN', `${target}\t1\n${target}\t2\n${target}\t3\n`);
      return (await psql(app, `COPY (SELECT n FROM compat_copy WHERE target = '${target}' ORDER BY n) TO STDOUT`)).split('\n').join(',');
    },
  },
  {
    id: 'cancel',
    feature: 'cancel',
    does: '`SELECT pg_sleep(10)`, cancelled by a CancelRequest (over TLS, the key the client got at login)',
    expected: { error: '57014', message: 'canceling statement due to user request' },
    run: (ctx) => interrupted(ctx, 'compat_cancel_probe', (c) => sendCancel(ctx.app, cancelKey(c))),
  },
  {
    id: 'lost-server-connection',
    feature: 'lost-connection',
    does: '`SELECT pg_sleep(10)` whose server process is ended (`pg_terminate_backend`)',
    expected: { error: '57P01', message: 'terminating connection due to administrator command' },
    run: (ctx) => interrupted(ctx, 'compat_lost_probe', async (_c, pid) => {
      await query(ctx.admin, 'SELECT pg_terminate_backend($1)', [pid]);
    }),
  },
  {
    id: 'lost-server-connection-idle',
    feature: 'lost-connection',
    does: 'an idle client whose server processes end (`pg_terminate_backend` of every idle one of the application, as a restart does), then `SELECT 1`',
    expected: { error: '57P01', message: 'terminating connection due to administrator command' },
    run: ({ app, admin }) => withClient(app, async (c) => {
      // What the client is told, whenever: an error while idle, or the next statement's.
      let told: Error | undefined;
      c.on('error', (err: Error) => (told ??= err));
      await c.query('SELECT 1');
      const ended = await query<{ pid: number }>(admin, "SELECT pid FROM pg_stat_activity WHERE usename = $1 AND state = 'idle' AND pg_terminate_backend(pid)", [app.user]);
      if (ended.length === 0) throw new Error('no idle server process of the application to end');
      await waitFor('the ended server processes to exit', 5000, async () => ((await query(admin, 'SELECT 1 FROM pg_stat_activity WHERE pid = ANY($1)', [ended.map((e) => e.pid)])).length === 0 ? true : undefined), 20);
      // The client or its pooler reads the server's goodbye on its own time.
      await sleep(200);
      const next = await one(c, 'SELECT 1').catch((err: Error) => err);
      if (told !== undefined) throw told;
      if (next instanceof Error) throw next;
      return next;
    }),
  },
  {
    id: 'wrong-password',
    feature: 'authentication',
    does: 'log in with a wrong password',
    expected: { error: '28P01', message: 'password authentication failed for user "kit_app"' },
    run: ({ app }) => withClient({ ...app, password: `${app.password}-wrong` }, async () => 'logged in'),
  },
];

/** Runs a probe, catching the client's error as the observation. */
export async function observe(probe: CompatProbe, ctx: ProbeContext): Promise<Observation> {
  try {
    return { value: await probe.run(ctx) };
  } catch (err) {
    const e = err as { code?: string; message?: string };
    return { error: e.code ?? 'no SQLSTATE', message: e.message ?? String(err) };
  }
}

export type ProbeStatus = 'passes' | 'fails' | 'differs';

/** passes: as directly; fails: an error the server alone does not give; differs: no error, another result. */
export function classify(expected: Observation, observed: Observation): ProbeStatus {
  if ('error' in observed) return 'error' in expected && expected.error === observed.error && expected.message === observed.message ? 'passes' : 'fails';
  if ('error' in expected) return 'differs';
  return expected.value === observed.value ? 'passes' : 'differs';
}
