import { loadConfig } from '../../lambda/src/config';
import * as contract from '../../lambda/src/environment';
import { POSTGRES_PORT } from '../../lib/model';
import { ConnectionMode, EndpointRole } from '../../lambda/src/environment';

describe('consumerEnvironment', () => {
  test('GIVEN a deployed function WHEN its environment is read back THEN the consumer sees the spec, with IAM and verified TLS', () => {
    // GIVEN
    const env = contract.consumerEnvironment({
      host: 'kit-ro.endpoint.proxy-x.eu-west-1.rds.amazonaws.com',
      port: POSTGRES_PORT,
      database: 'app',
      user: 'app_reader',
      endpointRole: EndpointRole.READ_ONLY,
    });
    // WHEN (the runtime adds AWS_REGION)
    const config = loadConfig({ ...env, AWS_REGION: 'eu-west-1' });
    // THEN auth, TLS and the connection mode are written out, the rest is the spec
    expect(env).toMatchObject({ DB_AUTH: 'iam', DB_TLS: 'verify-full', CONNECTION_MODE: 'reuse' });
    expect(config).toMatchObject({
      host: 'kit-ro.endpoint.proxy-x.eu-west-1.rds.amazonaws.com',
      port: POSTGRES_PORT,
      auth: { kind: 'iam', region: 'eu-west-1' },
      tls: { mode: 'verify-full' },
      endpointRole: 'READ_ONLY',
    });
  });

  test('GIVEN a local consumer with a password, a CA file and every setting WHEN read back THEN each is honoured', () => {
    // GIVEN
    const env = contract.consumerEnvironment({
      host: '127.0.10.101',
      port: 6432,
      database: 'kit',
      user: 'kit',
      endpointRole: EndpointRole.READ_WRITE,
      auth: { kind: 'password', password: 'two words' },
      tls: { mode: 'verify-full', caFile: '/tmp/ca.pem' },
      connectionMode: ConnectionMode.PER_INVOCATION,
      connectTimeoutMs: 1000,
      queryTimeoutMs: 2000,
      maxRetries: 0,
      retryBaseDelayMs: 10,
      logLevel: 'SILENT',
    });
    // WHEN
    const config = loadConfig(env);
    // THEN
    expect(env).toMatchObject({ DB_PASSWORD: 'two words', DB_TLS_CA_FILE: '/tmp/ca.pem', MAX_RETRIES: '0', POWERTOOLS_LOG_LEVEL: 'SILENT' });
    expect(config).toEqual({
      host: '127.0.10.101',
      port: 6432,
      database: 'kit',
      user: 'kit',
      auth: { kind: 'password', password: 'two words' },
      tls: { mode: 'verify-full', caFile: '/tmp/ca.pem' },
      endpointRole: 'READ_WRITE',
      connectionMode: 'per-invocation',
      connectTimeoutMs: 1000,
      queryTimeoutMs: 2000,
      maxRetries: 0,
      retryBaseDelayMs: 10,
      applicationName: 'aurora-proxy-kit',
    });
  });

  test('GIVEN settings left out WHEN read back THEN the contract\'s defaults apply', () => {
    // GIVEN
    const env = contract.consumerEnvironment({ host: 'h', port: 5432, database: 'd', user: 'u', endpointRole: EndpointRole.READ_ONLY, auth: { kind: 'password', password: 'p' }, tls: { mode: 'disable' } });
    // WHEN
    const config = loadConfig(env);
    // THEN
    expect(Object.keys(env)).not.toContain('DB_TLS_CA_FILE');
    expect(config).toMatchObject({
      connectTimeoutMs: contract.INTEGER_SETTINGS.connectTimeoutMs.defaultValue,
      queryTimeoutMs: contract.INTEGER_SETTINGS.queryTimeoutMs.defaultValue,
      maxRetries: contract.INTEGER_SETTINGS.maxRetries.defaultValue,
      retryBaseDelayMs: contract.INTEGER_SETTINGS.retryBaseDelayMs.defaultValue,
    });
  });
});
