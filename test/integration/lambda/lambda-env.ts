/**
 * Helpers shared by the Lambda consumer suites: the environment a function
 * would get when pointed at a LocalPostgres, and a one-call reset of all
 * module-scope state (what a fresh Lambda container would have).
 */
import { loadConfig, setConfigForTests, type Config } from '../../../lambda/src/config';
import { resetConnectionForTests } from '../../../lambda/src/db';
import { consumerEnvironment } from '../../../lambda/src/environment';
import { resetSchemaState } from '../../../lambda/src/schema';
import type { LocalPostgres } from '../support/local-postgres';
import { EndpointRole } from '../../../lambda/src/environment';

/**
 * Lambda environment for a local server, built by the consumers' contract, with password auth and no
 * TLS; `overrides` may set or unset (undefined) any variable.
 */
export function lambdaEnv(server: LocalPostgres, overrides: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...consumerEnvironment({
      host: server.host,
      port: server.port,
      database: 'postgres',
      user: server.superuser,
      endpointRole: EndpointRole.READ_ONLY,
      auth: { kind: 'password', password: server.password },
      tls: { mode: 'disable' },
      retryBaseDelayMs: 10,
    }),
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
