/**
 * Pure pieces of the consumer code: error classification, backoff, event
 * validation, pg client options. No database needed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { DatabaseError as PgDatabaseError } from 'pg';
import { loadConfig } from '../../lambda/src/config';
import { backoffDelayMs, buildClientConfig } from '../../lambda/src/db';
import { sslOptions } from '../../lambda/src/tls';
import {
  ConfigError,
  DatabaseError,
  EndpointRoleError,
  ValidationError,
  isTransientError,
  sqlStateOf,
  toDatabaseError,
} from '../../lambda/src/errors';
import { assertWritable, type ServedBy } from '../../lambda/src/server-info';
import { parseReadEvent, parseWriteEvent } from '../../lambda/src/validation';

/** A server-reported error exactly as pg produces it. */
function pgError(code: string, message = `server error ${code}`): PgDatabaseError {
  const err = new PgDatabaseError(message, 0, 'error');
  err.code = code;
  err.severity = 'ERROR';
  return err;
}

function systemError(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`connect ${code} 10.0.0.1:5432`), { code });
}

describe('isTransientError', () => {
  test.each<[string, unknown, boolean]>([
    ['ECONNREFUSED (proxy not accepting yet)', systemError('ECONNREFUSED'), true],
    ['ECONNRESET', systemError('ECONNRESET'), true],
    ['ETIMEDOUT', systemError('ETIMEDOUT'), true],
    ['EPIPE (not mistaken for a SQLSTATE)', systemError('EPIPE'), true],
    ['EAI_AGAIN (temporary DNS failure)', systemError('EAI_AGAIN'), true],
    ['ENOTFOUND (wrong host name)', systemError('ENOTFOUND'), false],
    [
      'AggregateError of ECONNREFUSED (happy eyeballs)',
      Object.assign(new AggregateError([systemError('ECONNREFUSED'), systemError('ECONNREFUSED')], 'connect failed'), { code: undefined }),
      true,
    ],
    ['57P01 admin_shutdown (pg_terminate_backend, failover)', pgError('57P01'), true],
    ['57P02 crash_shutdown', pgError('57P02'), true],
    ['57P03 cannot_connect_now', pgError('57P03'), true],
    ['08006 connection_failure', pgError('08006'), true],
    ['08001 sqlclient_unable_to_establish_sqlconnection', pgError('08001'), true],
    ['40001 serialization_failure', pgError('40001'), true],
    ['53300 too_many_connections', pgError('53300'), true],
    ['25006 read_only_sql_transaction', pgError('25006'), false],
    ['28P01 invalid_password', pgError('28P01'), false],
    ['42P01 undefined_table', pgError('42P01'), false],
    ['57014 query_canceled (statement timeout)', pgError('57014'), false],
    ['pg: Connection terminated unexpectedly', new Error('Connection terminated unexpectedly'), true],
    ['pg: connect timeout', new Error('Connection terminated due to connection timeout'), true],
    ['pg: client-side query timeout', new Error('Query read timeout'), false],
    ['TLS: self-signed chain', Object.assign(new Error('self-signed certificate in certificate chain'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' }), false],
    ['TLS: host name mismatch', Object.assign(new Error("Hostname/IP does not match certificate's altnames"), { code: 'ERR_TLS_CERT_ALTNAME_INVALID' }), false],
    ['ConfigError', new ConfigError('DB_HOST', undefined, 'required'), false],
    ['ValidationError', new ValidationError('id', 0, 'bad'), false],
    ['EndpointRoleError', new EndpointRoleError('READ_WRITE', 'in recovery'), false],
    ['not an Error at all', 'boom', false],
  ])('GIVEN %s WHEN classified THEN retryable=%s', (_case, err, expected) => {
    expect(isTransientError(err)).toBe(expected);
  });
});

describe('toDatabaseError', () => {
  test('GIVEN a pg server error WHEN wrapped THEN SQLSTATE, retryable and cause are kept', () => {
    // GIVEN
    const original = pgError('57P01', 'terminating connection due to administrator command');

    // WHEN
    const wrapped = toDatabaseError(original);

    // THEN
    expect(wrapped).toBeInstanceOf(DatabaseError);
    expect(wrapped).toMatchObject({ name: 'DatabaseError', code: '57P01', retryable: true, message: original.message });
    expect((wrapped as DatabaseError).cause).toBe(original);
    expect(sqlStateOf(wrapped)).toBe('57P01');
  });

  test('GIVEN a socket error WHEN wrapped THEN the system code is kept but it is not a SQLSTATE', () => {
    const wrapped = toDatabaseError(systemError('EPIPE')) as DatabaseError;
    expect(wrapped.code).toBe('EPIPE');
    expect(sqlStateOf(wrapped)).toBeUndefined();
  });

  test('GIVEN one of our typed errors WHEN wrapped THEN it passes through unchanged', () => {
    const err = new EndpointRoleError('READ_WRITE', 'in recovery');
    expect(toDatabaseError(err)).toBe(err);
  });
});

describe('backoffDelayMs', () => {
  test('GIVEN successive attempts WHEN computing delays THEN they grow exponentially within [ceiling/2, ceiling] and are capped', () => {
    // GIVEN a base of 50 ms; random() at both extremes
    const low = (attempt: number): number => backoffDelayMs(attempt, 50, () => 0);
    const high = (attempt: number): number => backoffDelayMs(attempt, 50, () => 1);

    // THEN
    expect([1, 2, 3, 4].map(low)).toEqual([25, 50, 100, 200]);
    expect([1, 2, 3, 4].map(high)).toEqual([50, 100, 200, 400]);
    expect(high(20)).toBe(2000); // cap
  });
});

describe('event validation', () => {
  test.each<[string, unknown]>([
    ['id zero', { id: 0 }],
    ['id negative', { id: -3 }],
    ['id fractional', { id: 1.5 }],
    ['id as a string', { id: '7' }],
    ['id null', { id: null }],
    ['id beyond 2^53', { id: 2 ** 53 }],
    ['id NaN', { id: Number.NaN }],
    ['event is an array', [1]],
    ['event is a string', 'id=1'],
  ])('GIVEN a read event with %s WHEN parsed THEN ValidationError', (_case, event) => {
    expect(() => parseReadEvent(event)).toThrow(ValidationError);
  });

  test.each<[string, unknown]>([
    ['no id', { payload: {} }],
    ['no event at all', undefined],
    ['id zero', { id: 0 }],
    ['id as a string', { id: '1' }],
    ['payload an array', { id: 1, payload: [1, 2] }],
    ['payload a string', { id: 1, payload: 'x' }],
    ['payload null', { id: 1, payload: null }],
  ])('GIVEN a write event with %s WHEN parsed THEN ValidationError', (_case, event) => {
    expect(() => parseWriteEvent(event)).toThrow(ValidationError);
  });

  test('GIVEN valid events WHEN parsed THEN id and payload come through, payload defaults to {}', () => {
    expect(parseReadEvent({})).toEqual({});
    expect(parseReadEvent(null)).toEqual({});
    expect(parseReadEvent({ id: 42 })).toEqual({ id: 42 });
    expect(parseWriteEvent({ id: 1 })).toEqual({ id: 1, payload: {} });
    expect(parseWriteEvent({ id: 2, payload: { a: [1] } })).toEqual({ id: 2, payload: { a: [1] } });
  });

  test('GIVEN a bad id WHEN parsed THEN the message names the field and the value', () => {
    expect(() => parseWriteEvent({ id: -1 })).toThrow(/^event\.id=-1 is invalid: must be an integer/);
  });
});

describe('assertWritable', () => {
  const servedBy = (in_recovery: boolean): ServedBy => ({ address: '10.0.1.5', port: 5432, in_recovery, backend_pid: 4242 });

  test('GIVEN the writer WHEN checked THEN passes', () => {
    expect(() => assertWritable(servedBy(false))).not.toThrow();
  });

  test('GIVEN a server in recovery WHEN checked THEN EndpointRoleError naming the server', () => {
    expect(() => assertWritable(servedBy(true))).toThrow(EndpointRoleError);
    expect(() => assertWritable(servedBy(true))).toThrow(/10\.0\.1\.5:5432 is in recovery/);
  });
});

describe('pg client options', () => {
  const LOCAL = { DB_HOST: 'h', DB_NAME: 'd', DB_USER: 'u', DB_ENDPOINT_ROLE: 'READ_ONLY', DB_AUTH: 'password', DB_PASSWORD: 'p' };
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'kit-units-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('GIVEN each DB_TLS mode WHEN building ssl options THEN disable=no TLS, require=unverified, verify-full=verified', () => {
    expect(sslOptions({ mode: 'disable' })).toBe(false);
    expect(sslOptions({ mode: 'require' })).toEqual({ rejectUnauthorized: false });
    expect(sslOptions({ mode: 'verify-full' })).toEqual({ rejectUnauthorized: true });
  });

  test('GIVEN DB_TLS_CA_FILE WHEN building ssl options THEN the bundle is ADDED to the default roots', () => {
    // GIVEN
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const file = join(dir, 'ca.pem');
    writeFileSync(file, pem);

    // WHEN
    const ssl = sslOptions({ mode: 'verify-full', caFile: file });

    // THEN
    expect(ssl).toMatchObject({ rejectUnauthorized: true });
    const ca = (ssl as { ca: string[] }).ca;
    expect(ca).toHaveLength(rootCertificates.length + 1);
    expect(ca[ca.length - 1]).toBe(pem);
  });

  test.each([
    ['a missing file', 'does-not-exist.pem', undefined],
    ['a file without a certificate', 'empty.pem', 'not a certificate'],
  ])('GIVEN DB_TLS_CA_FILE pointing at %s WHEN building ssl options THEN ConfigError', (_case, name, content) => {
    const file = join(dir, name);
    if (content !== undefined) writeFileSync(file, content);
    expect(() => sslOptions({ mode: 'verify-full', caFile: file })).toThrow(ConfigError);
    expect(() => sslOptions({ mode: 'verify-full', caFile: file })).toThrow(/^DB_TLS_CA_FILE=/);
  });

  test('GIVEN the config WHEN building client options THEN timeouts and application_name are set and no statement_timeout startup parameter', () => {
    // GIVEN
    const config = loadConfig({ ...LOCAL, QUERY_TIMEOUT_MS: '1234', CONNECT_TIMEOUT_MS: '777', AWS_LAMBDA_FUNCTION_NAME: 'fn' });

    // WHEN
    const options = buildClientConfig(config);

    // THEN
    expect(options).toMatchObject({ host: 'h', port: 5432, database: 'd', user: 'u', password: 'p', connectionTimeoutMillis: 777, query_timeout: 1234, application_name: 'fn' });
    expect(options.statement_timeout).toBeUndefined();
  });

  test('GIVEN DB_AUTH=iam WHEN pg asks for the password THEN a fresh RDS IAM token is signed for host, port and user', async () => {
    // GIVEN static (fake) credentials for the default provider chain
    const saved = { ...process.env };
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' });
    delete process.env.AWS_PROFILE;
    try {
      const config = loadConfig({ DB_HOST: 'proxy.example.internal', DB_PORT: '5432', DB_NAME: 'd', DB_USER: 'app_reader', DB_ENDPOINT_ROLE: 'READ_ONLY', AWS_REGION: 'eu-west-1' });
      const { password } = buildClientConfig(config);

      // WHEN
      expect(typeof password).toBe('function');
      const token = await (password as () => Promise<string>)();

      // THEN
      expect(token.startsWith('proxy.example.internal:5432/?')).toBe(true);
      expect(token).toContain('Action=connect');
      expect(token).toContain('DBUser=app_reader');
      expect(token).toContain('X-Amz-Signature=');
    } finally {
      process.env = saved;
    }
  });
});
