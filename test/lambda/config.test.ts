import { getConfig, getConfigForRole, loadConfig, setConfigForTests } from '../../lambda/src/config';
import { ConfigError } from '../../lambda/src/errors';
import { validateAtColdStart } from '../../lambda/src/invocation';
import { EndpointRole } from '../../lambda/src/environment';

/** Smallest valid environment for a deployed (IAM) function. */
const BASE: NodeJS.ProcessEnv = {
  DB_HOST: 'proxy-ro.endpoint.proxy-abc.eu-west-1.rds.amazonaws.com',
  DB_NAME: 'app',
  DB_USER: 'app_reader',
  DB_ENDPOINT_ROLE: 'READ_ONLY',
  AWS_REGION: 'eu-west-1',
};
const LOCAL: NodeJS.ProcessEnv = { ...BASE, DB_AUTH: 'password', DB_PASSWORD: 'secret' };

function configError(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected loadConfig to throw ConfigError');
}

describe('loadConfig', () => {

  const SECRET_ENV: NodeJS.ProcessEnv = { ...BASE, DB_AUTH: 'secret', DB_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:consumer-AbC123' };
  const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----';

  test('GIVEN DB_AUTH=secret with a secret ARN and an inline CA WHEN loaded THEN both are taken', () => {
    const config = loadConfig({ ...SECRET_ENV, DB_TLS_CA: PEM });
    expect(config.auth).toEqual({ kind: 'secret', secretArn: SECRET_ENV.DB_SECRET_ARN });
    expect(config.tls).toEqual({ mode: 'verify-full', ca: PEM });
  });

  test.each([
    ['DB_SECRET_ARN missing', { DB_SECRET_ARN: undefined }, /DB_SECRET_ARN=\(unset\) is invalid: required/],
    ['DB_SECRET_ARN not an ARN', { DB_SECRET_ARN: 'consumer-secret' }, /DB_SECRET_ARN="consumer-secret" is invalid: is not a Secrets Manager secret ARN/],
    ['unverified TLS with a secret', { DB_TLS: 'require' }, /DB_TLS="require" is invalid: only verify-full or verify-proxy-domain is allowed with DB_AUTH=secret/],
    ['DB_TLS_CA with verify-proxy-domain', { DB_TLS: 'verify-proxy-domain', DB_TLS_SERVER_NAME: 'p.proxy-abc.eu-west-1.rds.amazonaws.com', DB_TLS_CA: PEM }, /DB_TLS_CA=.* is invalid: only used with DB_TLS=verify-full/],
    ['DB_TLS_CA and DB_TLS_CA_FILE', { DB_TLS_CA: PEM, DB_TLS_CA_FILE: '/opt/ca.pem' }, /DB_TLS_CA=.* is invalid: and DB_TLS_CA_FILE=\/opt\/ca.pem are both set/],
    ['DB_TLS_CA not PEM', { DB_TLS_CA: 'not a certificate' }, /DB_TLS_CA="not a certificate" is invalid: is not a PEM certificate/],
  ])('GIVEN DB_AUTH=secret and %s WHEN loaded THEN a ConfigError names the variable, the value and the fix', (_case, overrides, message) => {
    expect(configError({ ...SECRET_ENV, ...overrides }).message).toMatch(message);
  });
  test('GIVEN only the required variables WHEN loaded THEN every default is applied', () => {
    // GIVEN / WHEN
    const config = loadConfig(BASE);

    // THEN
    expect(config).toEqual({
      host: BASE.DB_HOST,
      port: 5432,
      database: 'app',
      user: 'app_reader',
      auth: { kind: 'iam', region: 'eu-west-1' },
      tls: { mode: 'verify-full' },
      endpointRole: 'READ_ONLY',
      connectionMode: 'reuse',
      connectTimeoutMs: 5000,
      queryTimeoutMs: 5000,
      maxRetries: 2,
      retryBaseDelayMs: 50,
      applicationName: 'aurora-proxy-kit',
    });
  });

  test('GIVEN every variable set WHEN loaded THEN each is honoured', () => {
    // GIVEN
    const env = {
      ...LOCAL,
      DB_PORT: '6432',
      DB_TLS: 'verify-full',
      DB_TLS_CA_FILE: '/opt/ca.pem',
      DB_ENDPOINT_ROLE: 'READ_WRITE',
      CONNECTION_MODE: 'per-invocation',
      CONNECT_TIMEOUT_MS: '1500',
      QUERY_TIMEOUT_MS: '2500',
      MAX_RETRIES: '0',
      RETRY_BASE_DELAY_MS: '5',
      AWS_LAMBDA_FUNCTION_NAME: 'kit-writer',
    };

    // WHEN
    const config = loadConfig(env);

    // THEN
    expect(config).toMatchObject({
      port: 6432,
      auth: { kind: 'password', password: 'secret' },
      tls: { mode: 'verify-full', caFile: '/opt/ca.pem' },
      endpointRole: 'READ_WRITE',
      connectionMode: 'per-invocation',
      connectTimeoutMs: 1500,
      queryTimeoutMs: 2500,
      maxRetries: 0,
      retryBaseDelayMs: 5,
      applicationName: 'kit-writer',
    });
  });

  test('GIVEN DB_AUTH=password WHEN DB_TLS is require or disable THEN both are accepted (local use)', () => {
    expect(loadConfig({ ...LOCAL, DB_TLS: 'require' }).tls).toEqual({ mode: 'require' });
    expect(loadConfig({ ...LOCAL, DB_TLS: 'disable' }).tls).toEqual({ mode: 'disable' });
  });

  test('GIVEN empty-string variables WHEN loaded THEN they count as unset and defaults apply', () => {
    const config = loadConfig({ ...BASE, DB_PORT: '', CONNECTION_MODE: ' ', DB_TLS_CA_FILE: '' });
    expect(config.port).toBe(5432);
    expect(config.connectionMode).toBe('reuse');
    expect(config.tls).toEqual({ mode: 'verify-full' });
  });

  // Each row: the environment, the variable that must be named, the value
  // that must appear in the message ('(unset)' for missing variables).
  test.each<[string, NodeJS.ProcessEnv, string, string]>([
    ['DB_HOST missing', { ...BASE, DB_HOST: undefined }, 'DB_HOST', '(unset)'],
    ['DB_HOST blank', { ...BASE, DB_HOST: '  ' }, 'DB_HOST', '"  "'],
    ['DB_NAME missing', { ...BASE, DB_NAME: undefined }, 'DB_NAME', '(unset)'],
    ['DB_USER missing', { ...BASE, DB_USER: undefined }, 'DB_USER', '(unset)'],
    ['DB_PORT not a number', { ...BASE, DB_PORT: 'postgres' }, 'DB_PORT', '"postgres"'],
    ['DB_PORT zero', { ...BASE, DB_PORT: '0' }, 'DB_PORT', '"0"'],
    ['DB_PORT too large', { ...BASE, DB_PORT: '65536' }, 'DB_PORT', '"65536"'],
    ['DB_PORT fractional', { ...BASE, DB_PORT: '5432.5' }, 'DB_PORT', '"5432.5"'],
    ['DB_PORT negative', { ...BASE, DB_PORT: '-1' }, 'DB_PORT', '"-1"'],
    ['DB_AUTH unknown', { ...BASE, DB_AUTH: 'kerberos' }, 'DB_AUTH', '"kerberos"'],
    ['DB_AUTH=iam without AWS_REGION', { ...BASE, AWS_REGION: undefined }, 'AWS_REGION', '(unset)'],
    ['DB_AUTH=password without DB_PASSWORD', { ...BASE, DB_AUTH: 'password' }, 'DB_PASSWORD', '(unset)'],
    ['DB_TLS unknown', { ...LOCAL, DB_TLS: 'prefer' }, 'DB_TLS', '"prefer"'],
    ['DB_TLS=require with IAM', { ...BASE, DB_TLS: 'require' }, 'DB_TLS', '"require"'],
    ['DB_TLS=disable with IAM', { ...BASE, DB_TLS: 'disable' }, 'DB_TLS', '"disable"'],
    ['DB_TLS_CA_FILE without verify-full', { ...LOCAL, DB_TLS: 'require', DB_TLS_CA_FILE: '/ca.pem' }, 'DB_TLS_CA_FILE', '"/ca.pem"'],
    ['DB_ENDPOINT_ROLE missing', { ...BASE, DB_ENDPOINT_ROLE: undefined }, 'DB_ENDPOINT_ROLE', '(unset)'],
    ['DB_ENDPOINT_ROLE unknown', { ...BASE, DB_ENDPOINT_ROLE: 'read_only' }, 'DB_ENDPOINT_ROLE', '"read_only"'],
    ['CONNECTION_MODE unknown', { ...BASE, CONNECTION_MODE: 'pooled' }, 'CONNECTION_MODE', '"pooled"'],
    ['CONNECT_TIMEOUT_MS not a number', { ...BASE, CONNECT_TIMEOUT_MS: '5s' }, 'CONNECT_TIMEOUT_MS', '"5s"'],
    ['CONNECT_TIMEOUT_MS too small', { ...BASE, CONNECT_TIMEOUT_MS: '10' }, 'CONNECT_TIMEOUT_MS', '"10"'],
    ['QUERY_TIMEOUT_MS not a number', { ...BASE, QUERY_TIMEOUT_MS: '1e4' }, 'QUERY_TIMEOUT_MS', '"1e4"'],
    ['MAX_RETRIES above 5', { ...BASE, MAX_RETRIES: '6' }, 'MAX_RETRIES', '"6"'],
    ['MAX_RETRIES negative', { ...BASE, MAX_RETRIES: '-1' }, 'MAX_RETRIES', '"-1"'],
    ['RETRY_BASE_DELAY_MS fractional', { ...BASE, RETRY_BASE_DELAY_MS: '1.5' }, 'RETRY_BASE_DELAY_MS', '"1.5"'],
  ])('GIVEN %s WHEN loaded THEN ConfigError names the variable and the value', (_case, env, variable, shownValue) => {
    // WHEN
    const err = configError(env);

    // THEN
    expect(err.variable).toBe(variable);
    expect(err.message.startsWith(`${variable}=${shownValue} is invalid:`)).toBe(true);
    expect(err.hint.length).toBeGreaterThan(10); // says how to fix it
  });
});

describe('getConfig / getConfigForRole', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
    setConfigForTests(undefined);
  });

  test('GIVEN process.env WHEN getConfig is called twice THEN it is read once and memoised', () => {
    // GIVEN
    process.env = { ...saved, ...LOCAL };
    setConfigForTests(undefined);

    // WHEN
    const first = getConfig();
    process.env.DB_HOST = 'changed-after-cold-start';
    const second = getConfig();

    // THEN
    expect(second).toBe(first);
    expect(second.host).toBe(LOCAL.DB_HOST);
  });

  test('GIVEN a READ_ONLY function WHEN a READ_WRITE handler asks for its config THEN ConfigError names DB_ENDPOINT_ROLE', () => {
    // GIVEN
    setConfigForTests(loadConfig(LOCAL));

    // WHEN / THEN
    expect(getConfigForRole(EndpointRole.READ_ONLY).endpointRole).toBe('READ_ONLY');
    expect(() => getConfigForRole(EndpointRole.READ_WRITE)).toThrow(ConfigError);
    expect(() => getConfigForRole(EndpointRole.READ_WRITE)).toThrow(/^DB_ENDPOINT_ROLE="READ_ONLY" is invalid: .*READ_WRITE/);
  });
});

describe('validateAtColdStart', () => {
  afterEach(() => setConfigForTests(undefined));

  test('GIVEN the Lambda runtime WHEN the function is wired to the other role THEN init fails with ConfigError', () => {
    setConfigForTests(loadConfig(LOCAL));
    expect(() => validateAtColdStart(EndpointRole.READ_WRITE, { AWS_LAMBDA_RUNTIME_API: '127.0.0.1:9001' })).toThrow(/^DB_ENDPOINT_ROLE=/);
  });

  test('GIVEN the Lambda runtime WHEN DB_TLS_CA_FILE cannot be read THEN init fails with ConfigError', () => {
    setConfigForTests(loadConfig({ ...LOCAL, DB_TLS_CA_FILE: '/nonexistent/ca.pem' }));
    expect(() => validateAtColdStart(EndpointRole.READ_ONLY, { AWS_LAMBDA_RUNTIME_API: '127.0.0.1:9001' })).toThrow(/^DB_TLS_CA_FILE="\/nonexistent\/ca.pem" is invalid: cannot be read/);
  });

  test('GIVEN tests or local scripts (no runtime API) WHEN importing a handler THEN nothing is validated yet', () => {
    setConfigForTests(loadConfig(LOCAL));
    expect(() => validateAtColdStart(EndpointRole.READ_WRITE, {})).not.toThrow();
  });
});
