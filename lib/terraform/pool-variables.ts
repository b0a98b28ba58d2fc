import { DEFAULT_POOL_SETTINGS, type PoolSettings } from '../model/sizing';
import { hclString } from './hcl';
import type { Region } from './regions';

/**
 * The pool settings both proxies take: the same variables, types and defaults (DEFAULT_POOL_SETTINGS) in
 * rds-proxy (RDS Proxy) and pgbouncer-proxy (the PgBouncer fleet), declared once here, each module's
 * copy worded for its engine. The generator writes them whole, their rules' validations inside.
 */
export const POOL_VARIABLES: Readonly<Record<keyof PoolSettings, string>> = {
  maxConnectionsPercent: 'max_connections_percent',
  maxIdleConnectionsPercent: 'max_idle_connections_percent',
  connectionBorrowTimeoutSeconds: 'connection_borrow_timeout_seconds',
};

/** How each engine's module speaks of who opens the connections. */
interface EngineWording {
  /** Who opens a target's connections, as the subject of "may open". */
  readonly opener: string;
  /** What the engine does about the connections Aurora reserves. */
  readonly reserve: string;
  /** "kept open while idle", said of the engine. */
  readonly idle: string;
}

const WORDING: Readonly<Record<string, EngineWording>> = {
  'rds-proxy': {
    opener: 'the proxy',
    reserve: 'the proxy is given at most the share that leaves the reserved connections (99 on every catalog class)',
    idle: 'kept open while idle',
  },
  'pgbouncer-proxy': {
    opener: 'the whole fleet',
    reserve: 'the fleet never takes the reserved connections',
    idle: 'the fleet keeps open while idle',
  },
};

/** The modules that declare the pool variables. */
export const POOL_SETTINGS_MODULES: ReadonlyArray<string> = Object.keys(WORDING);

const DESCRIPTIONS: Readonly<Record<keyof PoolSettings, (w: EngineWording) => string>> = {
  maxConnectionsPercent: (w) => `Share of each target's max_connections ${w.opener} may open (bounds: the max-connections-percent rule; see the Rules column of the module README); ${w.reserve}.`,
  maxIdleConnectionsPercent: (w) => `Share of max_connections ${w.idle} (0..max_connections_percent).`,
  connectionBorrowTimeoutSeconds: () => 'Seconds a client waits to borrow a pooled connection (bounds: the borrow-timeout rule; see the Rules column of the module README).',
};

/**
 * The region declaring `module`'s pool variables whole; `validations(variable)` gives the lines of the
 * validation blocks the module's rules put in that variable.
 */
export function poolSettingsRegion(module: string, validations: (variable: string) => string[]): Region {
  const wording = WORDING[module];
  if (wording === undefined) throw new Error(`${module} declares no pool variables`);
  const settings = Object.keys(POOL_VARIABLES) as Array<keyof PoolSettings>;
  return {
    module,
    file: 'variables.tf',
    id: 'pool-settings',
    source: 'lib/terraform/pool-variables.ts and lib/model (DEFAULT_POOL_SETTINGS, rules.ts)',
    lines: settings.flatMap((setting, i) => [
      ...(i === 0 ? [] : ['']),
      `variable "${POOL_VARIABLES[setting]}" {`,
      `  description = ${hclString(DESCRIPTIONS[setting](wording))}`,
      '  type        = number',
      `  default     = ${DEFAULT_POOL_SETTINGS[setting]}`,
      '  nullable    = false',
      ...validations(POOL_VARIABLES[setting]),
      '}',
    ]),
  };
}
