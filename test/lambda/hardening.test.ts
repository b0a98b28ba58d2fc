/**
 * Bad input a probe of the handlers found: authentication failures that poolers report as 08P01,
 * and events that are too deep, too large or carry NUL characters. Each must fail at once as a
 * typed error naming what is wrong; none may escape as a RangeError or reach the database.
 */
import { DatabaseError as PgDatabaseError } from 'pg';
import { ValidationError, isAuthenticationFailure, isTransientError, toDatabaseError } from '../../lambda/src/errors';
import { MAX_PAYLOAD_BYTES, MAX_PAYLOAD_DEPTH, parseWriteEvent } from '../../lambda/src/validation';

/** A FATAL server error exactly as pg produces it from an ErrorResponse. */
function fatal(code: string, message: string): PgDatabaseError {
  const err = new PgDatabaseError(message, 0, 'error');
  err.code = code;
  err.severity = 'FATAL';
  return err;
}

// AWS fact pooler-authentication-failure-codes (lib/model/aws-facts.ts).
describe('authentication failures', () => {
  test.each<[string, string, string]>([
    ['PgBouncer, wrong password', '08P01', 'password authentication failed'],
    ['PgBouncer, unknown user', '08P01', 'no such user: reporter'],
    ['PgBouncer, SCRAM against an MD5 secret', '08P01', 'SCRAM authentication failed: user has MD5 secret'],
    ['PgBouncer 1.18, wrong password or unknown user (measured)', '08P01', 'SASL authentication failed'],
    ['RDS Proxy, refused IAM token (SQLSTATE undocumented)', '08P01', 'IAM authentication failed for user reporter. Check the IAM token for this user and try again.'],
    ['RDS Proxy, refused IAM token for a role', 'XX000', 'The IAM authentication failed for the role reporter. Check the IAM token for this role and try again.'],
    ['RDS Proxy, no secret for the user', '08P01', 'This RDS proxy has no credentials for the role reporter. Check the credentials for this role and try again.'],
    ['RDS Proxy, IAM without TLS', '08P01', 'IAM is allowed only with SSL connections.'],
    ['PostgreSQL, wrong password', '28P01', 'password authentication failed for user "reporter"'],
    ['PostgreSQL, no pg_hba entry', '28000', 'no pg_hba.conf entry for host "10.0.0.1"'],
  ])('GIVEN %s (%s) WHEN classified THEN it is an authentication failure and not retried', (_case, code, message) => {
    const err = fatal(code, message);
    expect(isAuthenticationFailure(err)).toBe(true);
    expect(isTransientError(err)).toBe(false);
    expect(toDatabaseError(err)).toMatchObject({ name: 'DatabaseError', code, retryable: false });
  });

  test.each<[string, string, string]>([
    ['a dropped pooler connection', '08006', 'connection failure'],
    ['a pooler protocol error that is not about login', '08P01', 'query_wait_timeout'],
    ["PgBouncer's back-off after server login failures", '08P01', 'server login has been failing, try again later (server_login_retry)'],
  ])('GIVEN %s (%s) WHEN classified THEN it stays retryable', (_case, code, message) => {
    const err = fatal(code, message);
    expect(isAuthenticationFailure(err)).toBe(false);
    expect(isTransientError(err)).toBe(true);
  });
});

describe('write event bounds', () => {
  function rejection(event: unknown): ValidationError {
    try {
      parseWriteEvent(event);
    } catch (err) {
      expect(err).toBeInstanceOf(ValidationError);
      return err as ValidationError;
    }
    throw new Error('the event was accepted');
  }

  test('GIVEN a 200,000-deep array WHEN parsed THEN ValidationError naming the field, not RangeError', () => {
    let deep: unknown = [];
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const err = rejection({ id: 1, payload: { deep } });
    expect(err.field).toBe(`payload.deep${'[0]'.repeat(MAX_PAYLOAD_DEPTH - 1)}`);
    expect(err.message).toMatch(new RegExp(`nests deeper than ${MAX_PAYLOAD_DEPTH} levels`));
  });

  test('GIVEN a payload exactly at the depth limit WHEN parsed THEN it is accepted', () => {
    let nested: Record<string, unknown> = {};
    for (let i = 1; i < MAX_PAYLOAD_DEPTH; i++) nested = { n: nested };
    expect(parseWriteEvent({ id: 1, payload: nested }).payload).toBe(nested);
  });

  test('GIVEN a 50 MB payload WHEN parsed THEN ValidationError with its size and the limit', () => {
    const err = rejection({ id: 1, payload: { blob: 'x'.repeat(50 * 1024 * 1024) } });
    expect(err.field).toBe('payload');
    expect(err.message).toMatch(new RegExp(`larger than ${MAX_PAYLOAD_BYTES} bytes`));
  });

  test('GIVEN a payload one byte over the limit WHEN parsed THEN rejected; at the limit THEN accepted', () => {
    const overhead = JSON.stringify({ blob: '' }).length;
    expect(() => parseWriteEvent({ id: 1, payload: { blob: 'x'.repeat(MAX_PAYLOAD_BYTES - overhead) } })).not.toThrow();
    expect(rejection({ id: 1, payload: { blob: 'x'.repeat(MAX_PAYLOAD_BYTES - overhead + 1) } }).field).toBe('payload');
  });

  test.each<[string, Record<string, unknown>, string]>([
    ['a NUL in a string value', { note: 'a\u0000b' }, 'payload.note'],
    ['a NUL in a nested array item', { items: ['ok', { name: '\u0000' }] }, 'payload.items[1].name'],
    ['a NUL in a key', { nested: { 'k\u0000': 1 } }, 'payload.nested'],
  ])('GIVEN %s WHEN parsed THEN ValidationError naming %s', (_case, payload, field) => {
    const err = rejection({ id: 1, payload });
    expect(err.field).toBe(field);
    expect(err.message).toMatch(/NUL character/);
  });
});
