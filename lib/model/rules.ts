import {
  DEPRECATED_ENGINE_VERSIONS,
  OPTIMIZED_READS_MIN_MAJOR,
  compareEngineVersions,
  newestOfferedVersion,
  parseEngineVersion,
  versionFloor,
} from './engine-versions';
import {
  INSTANCE_CLASS_CATALOG,
  OPTIMIZED_READS_FAMILIES,
  findInstanceClass,
  isOptimizedReadsFamily,
  parseInstanceClass,
  sizesOf,
} from './instance-classes';

/**
 * Validation rules, kept as tables: one row per rule, naming the properties it reads. The CDK
 * constructs run these tables at synth time; the Terraform modules restate each rule as a `validation`
 * block with the same wording, and the shared vectors in test/vectors/ prove the two agree.
 *
 * A rule returns undefined when the input is fine, or a message that names the property, the bad
 * value and the fix.
 */
export interface Rule<I> {
  /** Stable id, used by the shared test vectors. */
  readonly id: string;
  /** The properties the rule reads; more than one for rules that span props. */
  readonly properties: ReadonlyArray<keyof I & string>;
  readonly check: (input: I) => string | undefined;
}

/** Runs every rule whose properties are all set and returns the messages of the ones that fail. */
export function runRules<I>(rules: ReadonlyArray<Rule<I>>, input: I): string[] {
  return rules
    .filter((rule) => rule.properties.every((p) => input[p] !== undefined))
    .map((rule) => rule.check(input))
    .filter((message): message is string => message !== undefined);
}

const FAMILY_LIST = Object.keys(OPTIMIZED_READS_FAMILIES).map((f) => `db.${f}`).join(', ');

/** The range rule every integer setting shares; the message names the property, the value, the fix and the range. */
export function integerInRange(property: string, value: number, min: number, max: number, fix: string): string | undefined {
  if (!Number.isInteger(value) || value < min || value > max) {
    return `${property} ${value} is out of range: ${fix} (an integer from ${min} to ${max})`;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Cluster
// ---------------------------------------------------------------------------------------------

export interface ClusterRuleInput {
  readonly instanceClass?: string;
  /** Extra cluster parameters the user merges over the kit's. */
  readonly parameters?: Readonly<Record<string, string>>;
  readonly engineVersion?: string;
  readonly readers?: number;
  readonly backupRetentionDays?: number;
}

export function checkInstanceClass(instanceClass: string): string | undefined {
  const parsed = parseInstanceClass(instanceClass);
  if (!parsed) {
    return `instanceClass ${instanceClass} is not a DB instance class: use the form db.<family>.<size>, e.g. db.r6gd.xlarge`;
  }
  if (!isOptimizedReadsFamily(parsed.family)) {
    return `instanceClass ${instanceClass} has no local NVMe: Optimized Reads needs ${FAMILY_LIST} (e.g. db.r6gd.xlarge)`;
  }
  if (!findInstanceClass(instanceClass)) {
    return `instanceClass ${instanceClass} is not offered by Aurora PostgreSQL: choose a size of ${parsed.family} from ${sizesOf(parsed.family).join(', ')}`;
  }
  return undefined;
}

export function checkEngineVersion(engineVersion: string, instanceClass?: string): string | undefined {
  const parsed = parseEngineVersion(engineVersion);
  if (!parsed) {
    return `engineVersion ${engineVersion} is not of the form MAJOR.MINOR: use e.g. ${newestOfferedVersion()}`;
  }
  if (parsed.major < OPTIMIZED_READS_MIN_MAJOR) {
    return `engineVersion ${engineVersion} predates Optimized Reads: use ${OPTIMIZED_READS_MIN_MAJOR}.x or later, e.g. ${newestOfferedVersion()}`;
  }
  const spec = instanceClass ? findInstanceClass(instanceClass) : undefined;
  if (spec) {
    const floor = versionFloor(spec.family, parsed.major);
    if (floor && compareEngineVersions(parsed, parseEngineVersion(floor)!) < 0) {
      return `engineVersion ${engineVersion} is below the Optimized Reads floor ${floor} for ${spec.family}: use ${newestOfferedVersion(parsed.major) ?? floor} or later`;
    }
  }
  if (DEPRECATED_ENGINE_VERSIONS.includes(engineVersion)) {
    return `engineVersion ${engineVersion} is deprecated and no longer offered by Amazon RDS: use ${newestOfferedVersion(parsed.major) ?? newestOfferedVersion()}`;
  }
  return undefined;
}

export const CLUSTER_RULES: ReadonlyArray<Rule<ClusterRuleInput>> = [
  { id: 'instance-class', properties: ['instanceClass'], check: (i) => checkInstanceClass(i.instanceClass!) },
  {
    id: 'engine-version',
    properties: ['engineVersion'],
    // The floor depends on the family, so this rule also reads instanceClass when it is valid.
    check: (i) => checkEngineVersion(i.engineVersion!, i.instanceClass),
  },
  {
    id: 'parameters-keep-tls',
    properties: ['parameters'],
    // The kit forces TLS by parameter; an override must not quietly turn that off.
    check: (i) => {
      const forceSsl = i.parameters!['rds.force_ssl'];
      return forceSsl !== undefined && forceSsl !== '1'
        ? `parameters rds.force_ssl=${forceSsl} would let clients connect without TLS: remove it (the kit sets rds.force_ssl=1)`
        : undefined;
    },
  },
  {
    id: 'readers',
    properties: ['readers'],
    check: (i) => integerInRange('readers', i.readers!, 0, 15, 'Aurora allows up to 15 readers per cluster'),
  },
  {
    id: 'backup-retention',
    properties: ['backupRetentionDays'],
    check: (i) => integerInRange('backupRetentionDays', i.backupRetentionDays!, 7, 35, 'keep at least a week of backups; RDS allows at most 35 days'),
  },
];

// ---------------------------------------------------------------------------------------------
// Proxy
// ---------------------------------------------------------------------------------------------

export interface ProxyRuleInput {
  readonly maxConnectionsPercent?: number;
  readonly maxIdleConnectionsPercent?: number;
  readonly connectionBorrowTimeoutSeconds?: number;
  readonly sessionPinningFilters?: ReadonlyArray<string>;
  readonly idleClientTimeoutSeconds?: number;
}

/** RDS Proxy quota: user-defined endpoints per proxy. */
export const MAX_PROXY_ENDPOINTS = 20;

export const PROXY_RULES: ReadonlyArray<Rule<ProxyRuleInput>> = [
  {
    id: 'max-connections-percent',
    properties: ['maxConnectionsPercent'],
    check: (i) => integerInRange('maxConnectionsPercent', i.maxConnectionsPercent!, 1, 100, 'set the share of the target\'s max_connections the proxy may use'),
  },
  {
    id: 'max-idle-connections-percent',
    properties: ['maxIdleConnectionsPercent'],
    check: (i) => integerInRange('maxIdleConnectionsPercent', i.maxIdleConnectionsPercent!, 0, 100, 'set the share of max_connections kept open while idle'),
  },
  {
    id: 'idle-within-max',
    properties: ['maxIdleConnectionsPercent', 'maxConnectionsPercent'],
    check: (i) =>
      i.maxIdleConnectionsPercent! > i.maxConnectionsPercent!
        ? `maxIdleConnectionsPercent ${i.maxIdleConnectionsPercent} exceeds maxConnectionsPercent ${i.maxConnectionsPercent}: set it to ${i.maxConnectionsPercent} or less`
        : undefined,
  },
  {
    id: 'borrow-timeout',
    properties: ['connectionBorrowTimeoutSeconds'],
    check: (i) => integerInRange('connectionBorrowTimeoutSeconds', i.connectionBorrowTimeoutSeconds!, 0, 300, 'a client waits at most 5 minutes for a pooled connection'),
  },
  {
    id: 'idle-client-timeout',
    properties: ['idleClientTimeoutSeconds'],
    check: (i) => integerInRange('idleClientTimeoutSeconds', i.idleClientTimeoutSeconds!, 1, 28800, 'RDS Proxy closes idle client connections after 1 second to 8 hours'),
  },
  {
    id: 'session-pinning-filters',
    properties: ['sessionPinningFilters'],
    check: (i) =>
      i.sessionPinningFilters!.length > 0
        ? `sessionPinningFilters ${i.sessionPinningFilters!.join(',')} is not supported by RDS Proxy for PostgreSQL (MySQL only): remove it`
        : undefined,
  },
];

export function checkEndpointCount(count: number): string | undefined {
  return count > MAX_PROXY_ENDPOINTS
    ? `endpoints ${count} exceeds the RDS Proxy limit of ${MAX_PROXY_ENDPOINTS} endpoints per proxy: use a second proxy or fewer endpoints`
    : undefined;
}

/** DBProxyEndpointName: 1-63 letters, digits and hyphens, starting with a letter, no `--`, no trailing `-`. */
export function checkEndpointName(name: string): string | undefined {
  if (!/^[A-Za-z](?!.*--)[A-Za-z0-9-]{0,62}$/.test(name) || name.endsWith('-')) {
    return `endpointName ${name} is not a valid proxy endpoint name: use 1 to 63 letters, digits and hyphens, starting with a letter, without "--" or a trailing hyphen`;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Consumer function
// ---------------------------------------------------------------------------------------------

export interface FunctionRuleInput {
  readonly memorySizeMb?: number;
  readonly timeoutSeconds?: number;
  readonly reservedConcurrentExecutions?: number;
}

export const FUNCTION_RULES: ReadonlyArray<Rule<FunctionRuleInput>> = [
  {
    id: 'memory-size',
    properties: ['memorySizeMb'],
    check: (i) => integerInRange('memorySize', i.memorySizeMb!, 128, 10240, 'Lambda memory is 128 MB to 10,240 MB'),
  },
  {
    id: 'timeout',
    properties: ['timeoutSeconds'],
    check: (i) => integerInRange('timeout', i.timeoutSeconds!, 1, 900, 'a Lambda function runs at most 15 minutes'),
  },
  {
    id: 'reserved-concurrency',
    properties: ['reservedConcurrentExecutions'],
    check: (i) => integerInRange('reservedConcurrentExecutions', i.reservedConcurrentExecutions!, 1, 900, 'Lambda keeps 100 of the default 1,000 account concurrency unreserved'),
  },
];

// ---------------------------------------------------------------------------------------------
// Dashboard alarm thresholds
// ---------------------------------------------------------------------------------------------

export function checkPercentThreshold(property: string, value: number): string | undefined {
  return value <= 0 || value > 100 || Number.isNaN(value)
    ? `${property} ${value} is not a percentage: use a value above 0 and at most 100`
    : undefined;
}

export function checkNonNegativeThreshold(property: string, value: number): string | undefined {
  if (Number.isNaN(value)) return `${property} ${value} is not a number: use 0 or more`;
  return value < 0 ? `${property} ${value} is negative: use 0 or more` : undefined;
}

/** Catalog classes listed for error messages and docs. */
export const OPTIMIZED_READS_CLASS_NAMES = INSTANCE_CLASS_CATALOG.map((s) => s.instanceClass);
