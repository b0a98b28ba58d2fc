import { App } from 'aws-cdk-lib';
import { ProxyEngine } from '../pooling-tier';
import { ReferenceDeploymentProps } from './reference-deployment';

/** The CDK context keys bin/app.ts reads, with their types. */
export const CONTEXT_KEYS = {
  stackName: 'string',
  instanceClass: 'string',
  engineVersion: 'string',
  readers: 'integer',
  maxConnectionsPercent: 'integer',
  readOnlyEndpoints: 'integer',
  deletionProtection: 'boolean',
  proxyEngine: 'engine',
} as const;

/** `-c proxyEngine=` values and the engine each selects. */
export const PROXY_ENGINE_CONTEXT_VALUES: Readonly<Record<string, ProxyEngine>> = {
  'rds-proxy': ProxyEngine.RDS_PROXY,
  pgbouncer: ProxyEngine.PGBOUNCER,
};

/** A CDK context value that does not parse. */
export class ContextError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ContextError';
  }
}

export interface DeploymentContext extends ReferenceDeploymentProps {
  readonly stackName: string;
}

/**
 * Reads the deployment settings from CDK context. Values given with `-c key=value` arrive as strings;
 * a value that does not parse fails here with the key, the value and the expected form.
 */
export function readDeploymentContext(app: App): DeploymentContext {
  const values: Record<string, unknown> = {};
  for (const [key, type] of Object.entries(CONTEXT_KEYS)) {
    const raw = app.node.tryGetContext(key);
    if (raw === undefined || raw === null || raw === '') continue;
    values[key] = parseContextValue(key, raw, type);
  }
  return { stackName: 'AuroraProxyKit', ...values } as DeploymentContext;
}

function parseContextValue(key: string, raw: unknown, type: string): unknown {
  const text = String(raw).trim();
  switch (type) {
    case 'integer':
      if (!/^-?\d+$/.test(text)) throw new ContextError(`context ${key}=${text} is not an integer: pass e.g. -c ${key}=2`);
      return Number(text);
    case 'engine': {
      const engine = PROXY_ENGINE_CONTEXT_VALUES[text];
      if (engine === undefined) throw new ContextError(`context ${key}=${text} is not an engine: pass -c ${key}=${Object.keys(PROXY_ENGINE_CONTEXT_VALUES).join(' or -c ' + key + '=')}`);
      return engine;
    }
    case 'boolean':
      if (text !== 'true' && text !== 'false') throw new ContextError(`context ${key}=${text} is not a boolean: pass -c ${key}=true or -c ${key}=false`);
      return text === 'true';
    default:
      return text;
  }
}
