/**
 * Helpers shared by the Lambda consumer suites: the environment a function
 * would get when pointed at a LocalPostgres, and a one-call reset of all
 * module-scope state (what a fresh Lambda container would have).
 */
import { loadConfig, setConfigForTests, type Config } from '../../lambda/src/config';
import { resetConnectionForTests } from '../../lambda/src/db';
import { resetSchemaState } from '../../lambda/src/schema';
import type { LocalPostgres } from '../support/local-postgres';

/** Lambda environment for a local server, with password auth and no TLS unless overridden. */
export function lambdaEnv(server: LocalPostgres, overrides: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    DB_HOST: server.host,
    DB_PORT: String(server.port),
    DB_NAME: 'postgres',
    DB_USER: server.superuser,
    DB_AUTH: 'password',
    DB_PASSWORD: server.password,
    DB_TLS: 'disable',
    DB_ENDPOINT_ROLE: 'READ_ONLY',
    RETRY_BASE_DELAY_MS: '10',
    ...overrides,
  };
}

/** Simulates a fresh container configured with `env`; returns the validated config. */
export async function coldStart(env: NodeJS.ProcessEnv): Promise<Config> {
  await resetConnectionForTests();
  resetSchemaState();
  const config = loadConfig(env);
  setConfigForTests(config);
  return config;
}
