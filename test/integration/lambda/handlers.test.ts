/**
 * The read and write handlers against a REAL PostgreSQL 15: a primary (the
 * READ_WRITE endpoint stand-in) and a streaming hot standby made with
 * pg_basebackup -R (the READ_ONLY endpoint stand-in).
 */
import type { Context } from 'aws-lambda';
import { setConfigForTests } from '../../../lambda/src/config';
import { resetConnectionForTests, withClient } from '../../../lambda/src/db';
import { ConfigError, DatabaseError, EndpointRoleError, ValidationError } from '../../../lambda/src/errors';
import { logger } from '../../../lambda/src/logger';
import { handler as readHandler } from '../../../lambda/src/read-handler';
import { handler as writeHandler } from '../../../lambda/src/write-handler';
import { findFreePort, LocalPostgres } from '../support/local-postgres';
import { coldStart, lambdaEnv } from './lambda-env';

let primary: LocalPostgres;
let standby: LocalPostgres;

beforeAll(async () => {
  logger.setLogLevel('SILENT');
  primary = await LocalPostgres.start();
  standby = await primary.startStandby();
}, 60000);

afterAll(async () => {
  await resetConnectionForTests();
  await standby?.stop();
  await primary?.stop();
}, 30000);

afterEach(() => jest.restoreAllMocks());

const reader = (overrides: NodeJS.ProcessEnv = {}) => coldStart(lambdaEnv(standby, { DB_ENDPOINT_ROLE: 'READ_ONLY', ...overrides }));
const writer = (overrides: NodeJS.ProcessEnv = {}) => coldStart(lambdaEnv(primary, { DB_ENDPOINT_ROLE: 'READ_WRITE', ...overrides }));

describe('before the first write', () => {
  test('GIVEN kit_events does not exist WHEN reading an id THEN event is null rather than an error', async () => {
    // GIVEN
    await reader();
    expect(await standby.query("SELECT to_regclass('kit_events') AS t")).toEqual([{ t: null }]);

    // WHEN
    const res = await readHandler({ id: 1 });

    // THEN
    expect(res.event).toBeNull();
    expect(res.served_by).toMatchObject({ address: '127.0.0.1', port: standby.port, in_recovery: true });
  });
});

describe('write then read', () => {
  test('GIVEN a fresh container WHEN writing THEN the table is created and the row inserted on the writer', async () => {
    // GIVEN
    await writer();

    // WHEN
    const res = await writeHandler({ id: 1, payload: { hello: 'world', n: [1, 2] } });

    // THEN
    expect(res).toMatchObject({
      id: 1,
      inserted: true,
      served_by: { address: '127.0.0.1', port: primary.port, in_recovery: false },
      connection: { reused: false, mode: 'reuse', attempts: 1 },
    });
    expect(res.duration_ms).toBeGreaterThan(0);
    expect(await primary.query('SELECT id::int, payload FROM kit_events')).toEqual([{ id: 1, payload: { hello: 'world', n: [1, 2] } }]);
  });

  test('GIVEN the id exists WHEN writing it again THEN inserted=false and the first payload is kept', async () => {
    // WHEN
    const res = await writeHandler({ id: 1, payload: { second: true } });

    // THEN
    expect(res.inserted).toBe(false);
    expect(await primary.query('SELECT payload FROM kit_events WHERE id = 1')).toEqual([{ payload: { hello: 'world', n: [1, 2] } }]);
  });

  test('GIVEN no payload WHEN writing THEN payload defaults to {}', async () => {
    const res = await writeHandler({ id: 2 });
    expect(res.inserted).toBe(true);
    expect(await primary.query('SELECT payload FROM kit_events WHERE id = 2')).toEqual([{ payload: {} }]);
  });

  test('GIVEN the rows replicated WHEN reading through the READ_ONLY side THEN the row comes from the standby', async () => {
    // GIVEN
    await standby.waitForReplay();
    await reader();

    // WHEN
    const res = await readHandler({ id: 1 });

    // THEN
    expect(res.event).toEqual({ id: 1, payload: { hello: 'world', n: [1, 2] }, created_at: expect.any(String) });
    expect(new Date(res.event?.created_at ?? '').toISOString()).toBe(res.event?.created_at);
    expect(res.served_by).toEqual({ address: '127.0.0.1', port: standby.port, in_recovery: true, backend_pid: expect.any(Number) });
  });

  test('GIVEN a missing id WHEN reading THEN event is null', async () => {
    const res = await readHandler({ id: 999 });
    expect(res.event).toBeNull();
    expect(res.served_by.in_recovery).toBe(true);
  });

  test('GIVEN no id WHEN reading THEN only served_by is reported', async () => {
    const res = await readHandler({});
    expect(res.event).toBeNull();
    expect(res.served_by.port).toBe(standby.port);
  });

  test('GIVEN an invocation WHEN it succeeds THEN exactly one structured log line is emitted', async () => {
    // GIVEN
    const info = jest.spyOn(logger, 'info');

    // WHEN
    await readHandler({ id: 1 });

    // THEN
    expect(info).toHaveBeenCalledTimes(1);
    expect(info).toHaveBeenCalledWith('read invocation', expect.objectContaining({
      mode: 'reuse',
      reused: expect.any(Boolean),
      duration_ms: expect.any(Number),
      served_by: expect.objectContaining({ in_recovery: true }),
    }));
  });
});

describe('connection modes', () => {
  test('GIVEN CONNECTION_MODE=reuse WHEN invoked twice THEN the second run reuses the client and its backend', async () => {
    // GIVEN
    await reader({ CONNECTION_MODE: 'reuse', AWS_LAMBDA_FUNCTION_NAME: 'kit-reader-reuse' });

    // WHEN
    const first = await readHandler({ id: 1 });
    const second = await readHandler({ id: 1 });

    // THEN
    expect(first.connection).toEqual({ reused: false, mode: 'reuse', attempts: 1 });
    expect(second.connection).toEqual({ reused: true, mode: 'reuse', attempts: 1 });
    expect(second.served_by.backend_pid).toBe(first.served_by.backend_pid);
    // ...and the session stays open between invocations, named after the function.
    const sessions = await standby.query('SELECT pid FROM pg_stat_activity WHERE application_name = $1', ['kit-reader-reuse']);
    expect(sessions).toEqual([{ pid: first.served_by.backend_pid }]);
  });

  test('GIVEN CONNECTION_MODE=per-invocation WHEN invoked twice THEN each run opens (and closes) its own connection', async () => {
    // GIVEN
    await reader({ CONNECTION_MODE: 'per-invocation', AWS_LAMBDA_FUNCTION_NAME: 'kit-reader-per-invocation' });

    // WHEN
    const first = await readHandler({ id: 1 });
    const second = await readHandler({ id: 1 });

    // THEN
    expect(first.connection).toEqual({ reused: false, mode: 'per-invocation', attempts: 1 });
    expect(second.connection).toEqual({ reused: false, mode: 'per-invocation', attempts: 1 });
    expect(second.served_by.backend_pid).not.toBe(first.served_by.backend_pid);
    await expectNoSessions(standby, 'kit-reader-per-invocation');
  });

  test('GIVEN the config comes from process.env WHEN the handler runs first THEN it reads the environment lazily', async () => {
    // GIVEN a cold container whose env is only in process.env
    const saved = { ...process.env };
    await resetConnectionForTests();
    setConfigForTests(undefined);
    Object.assign(process.env, lambdaEnv(standby, { DB_ENDPOINT_ROLE: 'READ_ONLY', CONNECTION_MODE: 'per-invocation' }));
    try {
      // WHEN
      const res = await readHandler({});

      // THEN
      expect(res.connection.mode).toBe('per-invocation');
      expect(res.served_by.port).toBe(standby.port);
    } finally {
      process.env = saved;
      setConfigForTests(undefined);
    }
  });
});

describe('miswired endpoints', () => {
  test('GIVEN the write function pointed at the standby WHEN writing THEN EndpointRoleError and nothing is retried', async () => {
    // GIVEN
    await coldStart(lambdaEnv(standby, { DB_ENDPOINT_ROLE: 'READ_WRITE' }));
    const warn = jest.spyOn(logger, 'warn');

    // WHEN
    const result = writeHandler({ id: 50 });

    // THEN
    await expect(result).rejects.toBeInstanceOf(EndpointRoleError);
    await expect(result).rejects.toThrow(/is in recovery/);
    expect(warn).not.toHaveBeenCalledWith('transient database error, retrying', expect.anything());
  });

  test('GIVEN a READ_WRITE function WHEN the read handler is invoked THEN ConfigError on DB_ENDPOINT_ROLE', async () => {
    await writer();
    await expect(readHandler({ id: 1 })).rejects.toThrow(ConfigError);
    await expect(readHandler({ id: 1 })).rejects.toThrow(/DB_ENDPOINT_ROLE="READ_WRITE"/);
  });

  test('GIVEN a READ_ONLY function WHEN the write handler is invoked THEN ConfigError on DB_ENDPOINT_ROLE', async () => {
    await reader();
    await expect(writeHandler({ id: 1 })).rejects.toThrow(/DB_ENDPOINT_ROLE="READ_ONLY"/);
  });
});

describe('broken connections', () => {
  test('GIVEN a reused client WHEN the server terminates its backend between invocations THEN the next invocation gets a new connection and succeeds', async () => {
    // GIVEN
    await writer({ AWS_LAMBDA_FUNCTION_NAME: 'kit-writer-terminated' });
    const first = await writeHandler({ id: 10 });

    // WHEN another session kills it (what failover / proxy idle-timeout looks like)
    await primary.query('SELECT pg_terminate_backend($1)', [first.served_by.backend_pid]);
    await waitUntil(async () => (await primary.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [first.served_by.backend_pid])).length === 0);
    const second = await writeHandler({ id: 11 });

    // THEN
    expect(second.inserted).toBe(true);
    expect(second.connection.reused).toBe(false);
    expect(second.served_by.backend_pid).not.toBe(first.served_by.backend_pid);
  });

  test('GIVEN a live connection WHEN the server terminates it mid-statement (57P01) THEN the error is retried on a fresh connection', async () => {
    // GIVEN
    const config = await writer({ MAX_RETRIES: '2' });
    const warn = jest.spyOn(logger, 'warn');
    const pids: number[] = [];

    // WHEN the first attempt's backend is killed while it runs a statement
    const { result, connection } = await withClient(config, async (client) => {
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      pids.push(rows[0].pid);
      if (pids.length === 1) await client.query('SELECT pg_terminate_backend(pg_backend_pid())');
      return rows[0].pid;
    });

    // THEN
    expect(connection).toEqual({ reused: false, mode: 'reuse', attempts: 2 });
    expect(result).toBe(pids[1]);
    expect(pids[1]).not.toBe(pids[0]);
    expect(warn).toHaveBeenCalledWith('transient database error, retrying', expect.objectContaining({ attempt: 1, code: '57P01' }));
  });

  test('GIVEN MAX_RETRIES=0 WHEN the backend is terminated mid-statement THEN the retryable DatabaseError surfaces at once', async () => {
    const config = await writer({ MAX_RETRIES: '0' });
    const attempt = withClient(config, (client) => client.query('SELECT pg_terminate_backend(pg_backend_pid())'));
    await expect(attempt).rejects.toBeInstanceOf(DatabaseError);
    await expect(attempt).rejects.toMatchObject({ code: '57P01', retryable: true });
  });

  test('GIVEN QUERY_TIMEOUT_MS WHEN a statement runs longer THEN it fails without retry and the reused client is replaced', async () => {
    // GIVEN
    const config = await writer({ QUERY_TIMEOUT_MS: '200', MAX_RETRIES: '3' });
    const before = await withClient(config, async (client) => (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid);

    // WHEN
    const started = Date.now();
    const slow = withClient(config, (client) => client.query('SELECT pg_sleep(3)'));

    // THEN the client-side timeout fires; a timed-out statement may still be running, so no retry
    await expect(slow).rejects.toMatchObject({ name: 'DatabaseError', message: 'Query read timeout', retryable: false });
    expect(Date.now() - started).toBeLessThan(2000);
    const after = await withClient(config, async (client) => (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid);
    expect(after.connection.reused).toBe(false);
    expect(after.result).not.toBe(before.result);
  });

  test('GIVEN nothing listens on the port WHEN invoked THEN it retries MAX_RETRIES times with backoff and fails with ECONNREFUSED', async () => {
    // GIVEN
    const closedPort = await findFreePort('127.0.0.1');
    await coldStart(lambdaEnv(primary, { DB_ENDPOINT_ROLE: 'READ_WRITE', DB_PORT: String(closedPort), MAX_RETRIES: '2', RETRY_BASE_DELAY_MS: '20' }));
    const warn = jest.spyOn(logger, 'warn');

    // WHEN
    const started = Date.now();
    const result = writeHandler({ id: 20 });

    // THEN
    await expect(result).rejects.toMatchObject({ name: 'DatabaseError', code: 'ECONNREFUSED', retryable: true });
    const retries = warn.mock.calls.filter(([message]) => message === 'transient database error, retrying');
    expect(retries.map(([, attrs]) => (attrs as { attempt: number }).attempt)).toEqual([1, 2]);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  test('GIVEN a Lambda about to time out WHEN a transient error occurs THEN it does not retry past the deadline', async () => {
    // GIVEN
    const closedPort = await findFreePort('127.0.0.1');
    await coldStart(lambdaEnv(primary, { DB_ENDPOINT_ROLE: 'READ_WRITE', DB_PORT: String(closedPort), MAX_RETRIES: '5' }));
    const warn = jest.spyOn(logger, 'warn');
    const context = { getRemainingTimeInMillis: () => 1000 } as unknown as Context;
    jest.spyOn(logger, 'addContext').mockImplementation(() => undefined);

    // WHEN / THEN
    await expect(writeHandler({ id: 21 }, context)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(warn).toHaveBeenCalledWith('not retrying: not enough time left before the Lambda deadline', expect.objectContaining({ attempt: 1 }));
  });
});

describe('event validation', () => {
  beforeAll(() => writer());

  test.each<[string, unknown]>([
    ['id 0', { id: 0 }],
    ['id -1', { id: -1 }],
    ['id 1.5', { id: 1.5 }],
    ["id '1'", { id: '1' }],
    ['missing id', {}],
  ])('GIVEN a write event with %s WHEN invoked THEN ValidationError', async (_case, event) => {
    await expect(writeHandler(event)).rejects.toBeInstanceOf(ValidationError);
  });

  test.each<[string, unknown]>([
    ['id 0', { id: 0 }],
    ['id null', { id: null }],
    ['id "abc"', { id: 'abc' }],
  ])('GIVEN a read event with %s WHEN invoked THEN ValidationError', async (_case, event) => {
    await reader();
    await expect(readHandler(event)).rejects.toBeInstanceOf(ValidationError);
  });

  test('GIVEN a failing invocation WHEN it fails THEN the error is logged with its type', async () => {
    await reader();
    const error = jest.spyOn(logger, 'error');
    await expect(readHandler({ id: -5 })).rejects.toThrow(ValidationError);
    expect(error).toHaveBeenCalledWith('read invocation failed', expect.objectContaining({ error_type: 'ValidationError' }));
  });
});

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function expectNoSessions(server: LocalPostgres, applicationName: string): Promise<void> {
  // end() returns before the backend has fully exited; give it a moment.
  await waitUntil(async () => (await server.query('SELECT 1 FROM pg_stat_activity WHERE application_name = $1', [applicationName])).length === 0);
}
