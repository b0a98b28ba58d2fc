/** Public surface of the Lambda consumer code (handlers are bundled from their own files). */
export { handler as readHandler, type KitEvent, type ReadResponse } from './read-handler';
export { handler as writeHandler, type WriteResponse } from './write-handler';
export {
  loadConfig,
  getConfig,
  getConfigForRole,
  setConfigForTests,
  DEFAULT_APPLICATION_NAME,
  type Config,
  type AuthConfig,
  type TlsConfig,
  type DbAuth,
  type DbTlsMode,
  type EndpointRole,
  type ConnectionMode,
} from './config';
export {
  ENV_VARS,
  DB_AUTH_KINDS,
  DB_TLS_MODES,
  ENDPOINT_ROLES,
  CONNECTION_MODES,
  INTEGER_SETTINGS,
  SERVICE_NAME,
  consumerEnvironment,
  type ConsumerAuth,
  type ConsumerDeployment,
  type IntegerSetting,
} from './environment';
export {
  ConfigError,
  ValidationError,
  DatabaseError,
  EndpointRoleError,
  isTransientError,
  toDatabaseError,
  sqlStateOf,
} from './errors';
export {
  withClient,
  buildClientConfig,
  backoffDelayMs,
  resetConnectionForTests,
  type ConnectionInfo,
  type WithClientOptions,
} from './db';
export { logger } from './logger';
export { amazonRootCertificates, proxyDomainOf, sslOptions } from './tls';
export { CREATE_TABLE_SQL, TABLE_NAME, ensureSchema, resetSchemaState } from './schema';
export { assertWritable, queryServedBy, SERVED_BY_SQL, type ServedBy } from './server-info';
export { parseReadEvent, parseWriteEvent, type ReadEvent, type WriteEvent } from './validation';
