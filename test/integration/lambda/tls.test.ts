/**
 * DB_TLS against a REAL PostgreSQL serving TLS with a certificate from a
 * throwaway CA (SAN IP:127.0.0.1, DNS:localhost), plus a second server whose
 * certificate names another host, to prove hostname verification is on.
 */
import type { ClientBase } from 'pg';
import { readFileSync } from 'node:fs';
import { resetConnectionForTests, withClient } from '../../../lambda/src/db';
import { setSecretReaderForTests } from '../../../lambda/src/secret-credentials';
import { DatabaseError } from '../../../lambda/src/errors';
import { logger } from '../../../lambda/src/logger';
import { handler as writeHandler } from '../../../lambda/src/write-handler';
import { LocalPostgres } from '../support/local-postgres';
import { coldStart, lambdaEnv } from './lambda-env';

let server: LocalPostgres;
let wrongName: LocalPostgres;

beforeAll(async () => {
  logger.setLogLevel('SILENT');
  [server, wrongName] = await Promise.all([LocalPostgres.start(), LocalPostgres.start({ names: ['db.example.internal'] })]);
}, 60000);

afterAll(async () => {
  await resetConnectionForTests();
  await Promise.all([server?.stop(), wrongName?.stop()]);
}, 30000);

afterEach(() => jest.restoreAllMocks());

/** Whether the session running `client` is encrypted, as the server sees it. */
async function sessionSsl(client: ClientBase): Promise<boolean> {
  const { rows } = await client.query<{ ssl: boolean }>('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
  return rows[0].ssl;
}

describe('DB_TLS', () => {
  test('GIVEN verify-full with DB_TLS_CA_FILE = the server CA WHEN connecting to 127.0.0.1 THEN the session is encrypted and verified', async () => {
    // GIVEN
    const config = await coldStart(lambdaEnv(server, { DB_TLS: 'verify-full', DB_TLS_CA_FILE: server.caFile }));

    // WHEN
    const { result } = await withClient(config, sessionSsl);

    // THEN
    expect(result).toBe(true);
  });

  test('GIVEN verify-full with the CA WHEN the write handler runs THEN it succeeds end to end', async () => {
    await coldStart(lambdaEnv(server, { DB_ENDPOINT_ROLE: 'READ_WRITE', DB_TLS: 'verify-full', DB_TLS_CA_FILE: server.caFile }));
    const res = await writeHandler({ id: 1, payload: { tls: true } });
    expect(res).toMatchObject({ id: 1, inserted: true, served_by: { port: server.port, in_recovery: false } });
  });

  test('GIVEN verify-full WITHOUT the CA file WHEN connecting THEN a certificate error fails at once, not retried', async () => {
    // GIVEN only Node's default roots, which do not know the throwaway CA
    const config = await coldStart(lambdaEnv(server, { DB_TLS: 'verify-full', MAX_RETRIES: '5' }));
    const warn = jest.spyOn(logger, 'warn');

    // WHEN
    const started = Date.now();
    const attempt = withClient(config, sessionSsl);

    // THEN
    await expect(attempt).rejects.toBeInstanceOf(DatabaseError);
    await expect(attempt).rejects.toMatchObject({ retryable: false, code: expect.stringMatching(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT/) });
    expect(warn).not.toHaveBeenCalledWith('transient database error, retrying', expect.anything());
    expect(Date.now() - started).toBeLessThan(3000);
  });

  test('GIVEN verify-full with the right CA WHEN the certificate names another host THEN the hostname check fails, not retried', async () => {
    // GIVEN
    const config = await coldStart(lambdaEnv(wrongName, { DB_TLS: 'verify-full', DB_TLS_CA_FILE: wrongName.caFile, MAX_RETRIES: '5' }));

    // WHEN / THEN
    await expect(withClient(config, sessionSsl)).rejects.toMatchObject({ name: 'DatabaseError', code: 'ERR_TLS_CERT_ALTNAME_INVALID', retryable: false });
  });

  test('GIVEN verify-full with ANOTHER server\'s CA WHEN connecting THEN verification fails', async () => {
    const config = await coldStart(lambdaEnv(server, { DB_TLS: 'verify-full', DB_TLS_CA_FILE: wrongName.caFile }));
    await expect(withClient(config, sessionSsl)).rejects.toMatchObject({ name: 'DatabaseError', retryable: false });
  });

  test('GIVEN verify-full with DB_TLS_CA = the server CA (inline, the only CA) WHEN connecting THEN the session is verified; with another CA inline it fails', async () => {
    const config = await coldStart(lambdaEnv(server, { DB_TLS: 'verify-full', DB_TLS_CA: readFileSync(server.caFile, 'utf8').trim() }));
    expect((await withClient(config, sessionSsl)).result).toBe(true);

    const other = await coldStart(lambdaEnv(server, { DB_TLS: 'verify-full', DB_TLS_CA: readFileSync(wrongName.caFile, 'utf8').trim() }));
    await expect(withClient(other, sessionSsl)).rejects.toMatchObject({ name: 'DatabaseError', retryable: false });
  });

  test('GIVEN require (local only) WHEN connecting without any CA THEN the session is encrypted but unverified', async () => {
    const config = await coldStart(lambdaEnv(wrongName, { DB_TLS: 'require' }));
    const { result } = await withClient(config, sessionSsl);
    expect(result).toBe(true);
  });

  test('GIVEN disable WHEN connecting to the TLS-capable server THEN the session is plaintext', async () => {
    const config = await coldStart(lambdaEnv(server, { DB_TLS: 'disable' }));
    const { result } = await withClient(config, sessionSsl);
    expect(result).toBe(false);
  });
});

describe('DB_AUTH=secret', () => {
  const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:consumer-abc123';
  // Secrets Manager cannot run here: the hook stands in for GetSecretValue, the login is PostgreSQL's own.
  afterEach(() => setSecretReaderForTests(undefined));

  test('GIVEN the password in a secret WHEN connecting over verify-full THEN the consumer logs in with it, reading the secret once per period', async () => {
    const reads: string[] = [];
    setSecretReaderForTests(async (arn) => {
      reads.push(arn);
      return JSON.stringify({ username: server.superuser, password: server.password });
    });
    const env = lambdaEnv(server, { DB_AUTH: 'secret', DB_PASSWORD: undefined, DB_SECRET_ARN: SECRET_ARN, DB_TLS: 'verify-full', DB_TLS_CA_FILE: server.caFile, CONNECTION_MODE: 'per-invocation' });
    const config = await coldStart(env);
    expect((await withClient(config, sessionSsl)).result).toBe(true);
    expect((await withClient(config, sessionSsl)).result).toBe(true);
    expect(reads).toEqual([SECRET_ARN]);
  });

  test('GIVEN a secret for another user WHEN connecting THEN a ConfigError names DB_USER, not retried', async () => {
    let reads = 0;
    setSecretReaderForTests(async () => {
      reads++;
      return JSON.stringify({ username: 'someone_else', password: server.password });
    });
    const config = await coldStart(lambdaEnv(server, { DB_AUTH: 'secret', DB_PASSWORD: undefined, DB_SECRET_ARN: SECRET_ARN, DB_TLS: 'verify-full', DB_TLS_CA_FILE: server.caFile, MAX_RETRIES: '3' }));
    await expect(withClient(config, sessionSsl)).rejects.toThrow(/DB_USER=.* does not match the username someone_else of the secret/);
    expect(reads).toBe(1);
  });
});
