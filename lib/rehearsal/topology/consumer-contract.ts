/**
 * A consumer's environment read through the consumers' contract (lambda/src/environment.ts): which
 * functions are consumers, which variables belong to the contract, and the typed connection they
 * describe, with the contract's defaults for what is left out. Both readers (CDK, Terraform) use it.
 */
import {
  CONNECTION_MODES,
  DB_AUTH_KINDS,
  DB_TLS_MODES,
  ENDPOINT_ROLES,
  ENV_VARS,
  INTEGER_SETTINGS,
  ConnectionMode,
  type DbAuth,
  type DbTlsMode,
  type EndpointRole,
} from '../../../lambda/src/environment';
import { TopologyInputError } from './errors';
import type { ConsumerConnection, ConsumerTopology, EnvValue, ProxyEndpointTopology } from './types';

/** Set by the Lambda runtime, never by a deployment. */
const RUNTIME_VARIABLES: ReadonlySet<string> = new Set([ENV_VARS.region, ENV_VARS.functionName]);

/** The variables a deployment sets for a consumer. */
export const CONTRACT_VARIABLES: ReadonlyArray<string> = Object.values(ENV_VARS).filter((name) => !RUNTIME_VARIABLES.has(name));

/** A function is a consumer when its environment names its endpoint role, which every consumer must. */
export function isConsumerEnvironment(variableNames: Iterable<string>): boolean {
  return [...variableNames].includes(ENV_VARS.endpointRole);
}

/** Keeps the contract's variables, in the contract's order. */
export function contractEnvironment(all: Readonly<Record<string, EnvValue>>): Record<string, EnvValue> {
  return Object.fromEntries(CONTRACT_VARIABLES.filter((name) => all[name] !== undefined).map((name) => [name, all[name]!]));
}

export interface ConsumerWhere {
  readonly file: string;
  readonly consumer: string;
}

/** The typed connection, and notes on values that are not literals where the contract expects one. */
export function consumerConnection(env: Readonly<Record<string, EnvValue>>, where: ConsumerWhere): { connection: ConsumerConnection; notes: string[] } {
  const notes: string[] = [];
  const literal = (name: string): string | undefined => {
    const value = env[name];
    if (value === undefined) return undefined;
    if (value.kind === 'literal') return value.value;
    notes.push(`consumer ${where.consumer}: ${name} is not known before deployment (${describeEnvValue(value)}); the contract's default is shown`);
    return undefined;
  };
  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T | undefined): T => {
    const value = literal(name);
    if (value === undefined && fallback !== undefined) return fallback;
    if (value === undefined || !(allowed as readonly string[]).includes(value)) {
      throw new TopologyInputError(where.file, `consumer ${where.consumer} has ${name}=${value ?? '(unset)'}`, `the consumers' contract needs one of ${allowed.join(', ')}`);
    }
    return value as T;
  };
  const integer = (setting: keyof typeof INTEGER_SETTINGS): number => {
    const name = ENV_VARS[setting];
    const value = literal(name);
    if (value === undefined) return INTEGER_SETTINGS[setting].defaultValue;
    if (!/^\d+$/.test(value)) throw new TopologyInputError(where.file, `consumer ${where.consumer} has ${name}=${value}`, 'the consumers\' contract needs a whole number');
    return Number(value);
  };
  const host = env[ENV_VARS.host];
  if (host === undefined) throw new TopologyInputError(where.file, `consumer ${where.consumer} sets no ${ENV_VARS.host}`, 'a consumer needs the host name of its proxy endpoint');
  const serverName = env[ENV_VARS.tlsServerName];
  const connection: ConsumerConnection = {
    host,
    port: integer('port'),
    database: literal(ENV_VARS.database),
    user: literal(ENV_VARS.user),
    endpointRole: oneOf<EndpointRole>(ENV_VARS.endpointRole, ENDPOINT_ROLES, undefined),
    auth: oneOf<DbAuth>(ENV_VARS.auth, DB_AUTH_KINDS, 'iam'),
    tls: { mode: oneOf<DbTlsMode>(ENV_VARS.tls, DB_TLS_MODES, 'verify-full'), ...(serverName !== undefined ? { serverName } : {}) },
    connectionMode: oneOf<ConnectionMode>(ENV_VARS.connectionMode, CONNECTION_MODES, ConnectionMode.REUSE),
    connectTimeoutMs: integer('connectTimeoutMs'),
    queryTimeoutMs: integer('queryTimeoutMs'),
    maxRetries: integer('maxRetries'),
    retryBaseDelayMs: integer('retryBaseDelayMs'),
  };
  return { connection, notes };
}

export function describeEnvValue(value: EnvValue): string {
  switch (value.kind) {
    case 'literal':
      return value.value;
    case 'endpoint-host':
      return `host of ${value.endpoint}`;
    case 'unknown':
      return value.detail;
  }
}

/**
 * Wiring the consumers' own checks would refuse at cold start: a DB_ENDPOINT_ROLE other than its
 * endpoint's role, or a TLS mode other than the one the engine's endpoints give: consumerEndpointTls's for
 * RDS Proxy, verify-full on every endpoint of the PgBouncer engine (its listeners' certificate names them all).
 */
export function consumerWiringNotes(consumers: ReadonlyArray<ConsumerTopology>, endpoints: ReadonlyArray<ProxyEndpointTopology>, engine: 'rds-proxy' | 'pgbouncer'): string[] {
  return consumers.flatMap((c) => {
    const endpoint = endpoints.find((e) => e.id === c.endpoint);
    if (!endpoint) return [];
    const notes: string[] = [];
    if (endpoint.role !== c.connection.endpointRole) {
      notes.push(`consumer ${c.id}: ${ENV_VARS.endpointRole}=${c.connection.endpointRole} but its endpoint ${endpoint.id} is ${endpoint.role}; its handler refuses that at cold start`);
    }
    const expected: DbTlsMode = endpoint.isDefault || engine === 'pgbouncer' ? 'verify-full' : 'verify-proxy-domain';
    if (c.connection.tls.mode !== expected) {
      notes.push(`consumer ${c.id}: ${ENV_VARS.tls}=${c.connection.tls.mode} on ${endpoint.isDefault ? 'the proxy\'s default endpoint' : 'an endpoint beside the default one'}, where the kit uses ${expected}`);
    }
    return notes;
  });
}
