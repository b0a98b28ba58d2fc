import { checkEngineVersion, checkInstanceClass } from './catalog-checks';
import { OPTIMIZED_READS_MIN_MAJOR } from './engine-versions';
import { INSTANCE_CLASS_CATALOG, OPTIMIZED_READS_FAMILIES } from './instance-classes';
import { ALARM_THRESHOLD_UNITS, type AlarmThresholds } from './metrics';
import { CONNECTION_MODES, ENDPOINT_ROLES } from './vocabulary';
import { type AwsSource, type Rule, custom, integerRange, nonNegative, oneOf, pattern, percentage } from './rule-table';

/**
 * Validation rules, as tables (machinery in rule-table.ts): one row per rule, with its kind, its bounds
 * or values as data, the properties it reads, and where each flavour states it. The CDK constructs run
 * these tables at synth time; bin/generate-terraform.ts renders them into the Terraform modules; the
 * shared vectors in test/vectors/ prove the two agree. A message names the property, the bad value and
 * the fix; CDK names the construct prop, Terraform the module's variable.
 */

/** A Terraform-only rule's reason when the module takes an explicit key switch CDK does not need. */
const KMS_SWITCH_REASON = 'CDK takes an optional key object and creates one when it is absent; Terraform switches by create_kms_key so that a key ARN may be unknown at plan';

/** The KMS precondition of a module that creates its key unless told otherwise. */
function kmsKeyRule<I extends { createKmsKey?: boolean; kmsKeyArn?: string }>(id: string, module: string): Rule<I> {
  return custom<I>({
    id,
    properties: ['createKmsKey'],
    terraform: { module, names: { createKmsKey: 'create_kms_key', kmsKeyArn: 'kms_key_arn' } },
    terraformOnly: KMS_SWITCH_REASON,
    summary: 'kms_key_arn is required when create_kms_key is false (a precondition)',
    check: (i, n) =>
      !i.createKmsKey && i.kmsKeyArn === undefined
        ? `${n('kmsKeyArn')} is not set: pass ${n('kmsKeyArn')} when ${n('createKmsKey')} is false`
        : undefined,
  });
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
  readonly clusterIdentifier?: string;
  /** Seconds between enhanced monitoring samples. */
  readonly monitoringInterval?: number;
  readonly createKmsKey?: boolean;
  readonly kmsKeyArn?: string;
}

const CLUSTER_MODULE = 'aurora-optimized-reads';

export const CLUSTER_RULES: ReadonlyArray<Rule<ClusterRuleInput>> = [
  custom({
    id: 'instance-class',
    properties: ['instanceClass'],
    terraform: { module: CLUSTER_MODULE, names: { instanceClass: 'instance_class' } },
    summary: `one of the catalog's Optimized Reads classes (${Object.keys(OPTIMIZED_READS_FAMILIES).map((f) => `db.${f}.*`).join(', ')})`,
    check: (i, n) => checkInstanceClass(i.instanceClass!, n('instanceClass')),
  }),
  custom({
    id: 'engine-version',
    properties: ['engineVersion'],
    terraform: { module: CLUSTER_MODULE, names: { engineVersion: 'engine_version' } },
    summary: `MAJOR.MINOR, ${OPTIMIZED_READS_MIN_MAJOR} or later, at or above the family's Optimized Reads floor, not deprecated (floor and deprecation are checked by a precondition on the cluster)`,
    // The floor depends on the family, so this rule also reads instanceClass when it is valid.
    check: (i, n) => checkEngineVersion(i.engineVersion!, i.instanceClass, n('engineVersion')),
  }),
  custom({
    id: 'parameters-keep-tls',
    properties: ['parameters'],
    terraform: { module: CLUSTER_MODULE, names: { parameters: 'parameters' } },
    summary: 'rds.force_ssl, if set, must stay 1',
    // The kit forces TLS by parameter; an override must not quietly turn that off.
    check: (i, n) => {
      const forceSsl = i.parameters!['rds.force_ssl'];
      return forceSsl !== undefined && forceSsl !== '1'
        ? `${n('parameters')} rds.force_ssl=${forceSsl} would let clients connect without TLS: remove it (the kit sets rds.force_ssl=1)`
        : undefined;
    },
  }),
  integerRange({
    id: 'readers',
    properties: ['readers'],
    terraform: { module: CLUSTER_MODULE, names: { readers: 'readers' } },
    min: 0,
    max: 15,
    fix: 'Aurora allows up to 15 readers per cluster',
    aws: {
      constraint: 'an Aurora DB cluster has one writer and up to 15 Aurora Replicas',
      sources: ['https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/Aurora.Replication.html'],
    },
  }),
  integerRange({
    id: 'backup-retention',
    properties: ['backupRetentionDays'],
    terraform: { module: CLUSTER_MODULE, names: { backupRetentionDays: 'backup_retention_days' } },
    min: 7,
    max: 35,
    fix: 'keep at least a week of backups; RDS allows at most 35 days',
  }),
  pattern({
    id: 'cluster-identifier',
    properties: ['clusterIdentifier'],
    terraform: { module: CLUSTER_MODULE, names: { clusterIdentifier: 'cluster_identifier' } },
    // 50, not RDS's 63: instance identifiers append -writer and -reader-<n>.
    pattern: '^[a-z][a-z0-9-]{0,49}$',
    noDoubleOrTrailingHyphen: true,
    what: 'cluster identifier',
    use: '1 to 50 lower-case letters, digits and hyphens, starting with a letter, without "--" or a trailing hyphen',
  }),
  oneOf({
    id: 'monitoring-interval',
    properties: ['monitoringInterval'],
    terraform: { module: CLUSTER_MODULE, names: { monitoringInterval: 'monitoring_interval' } },
    values: [1, 5, 10, 15, 30, 60],
    what: 'an enhanced monitoring interval',
    unit: 'seconds',
    aws: {
      constraint: 'MonitoringInterval is 0, 1, 5, 10, 15, 30 or 60 seconds (0 turns enhanced monitoring off, which the kit does not)',
      sources: ['https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_CreateDBCluster.html', 'hashicorp/terraform-provider-aws internal/service/rds/cluster_instance.go (monitoring_interval: validation.IntInSlice)'],
    },
  }),
  kmsKeyRule<ClusterRuleInput>('cluster-kms-key', CLUSTER_MODULE),
];

// ---------------------------------------------------------------------------------------------
// Proxy and its endpoints
// ---------------------------------------------------------------------------------------------

export interface ProxyRuleInput {
  readonly proxyName?: string;
  readonly maxConnectionsPercent?: number;
  readonly maxIdleConnectionsPercent?: number;
  readonly connectionBorrowTimeoutSeconds?: number;
  readonly sessionPinningFilters?: ReadonlyArray<string>;
  readonly idleClientTimeoutSeconds?: number;
  /** How many endpoints the proxy has. */
  readonly endpoints?: number;
  /** Readers of the proxy's cluster, for an endpoint of `targetRole`. */
  readonly readers?: number;
  /** The role of an endpoint being added. */
  readonly targetRole?: string;
}

/**
 * Proxy and proxy endpoint names. The API allows upper case, but the hashicorp/aws provider refuses it at
 * plan, so both flavours keep to what both accept.
 */
const RDS_PROXY_IDENTIFIER: AwsSource = {
  constraint:
    'An RDS Proxy or proxy endpoint name has 1 to 63 letters, digits and hyphens, begins with a letter, and neither ends with a hyphen nor contains two consecutive hyphens; the hashicorp/aws provider (validIdentifier) also requires lower case',
  sources: [
    'https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_CreateDBProxy.html',
    'https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_CreateDBProxyEndpoint.html',
    'hashicorp/terraform-provider-aws internal/service/rds/validate.go validIdentifier',
  ],
};

/** RDS Proxy quota: user-defined endpoints per proxy. */
export const MAX_PROXY_ENDPOINTS = 20;

const PROXY_MODULE = 'pooling-proxy';

export const PROXY_RULES: ReadonlyArray<Rule<ProxyRuleInput>> = [
  integerRange({
    id: 'max-connections-percent',
    properties: ['maxConnectionsPercent'],
    terraform: { module: PROXY_MODULE, names: { maxConnectionsPercent: 'max_connections_percent' } },
    min: 1,
    max: 100,
    fix: 'set the share of the target\'s max_connections the proxy may use',
  }),
  integerRange({
    id: 'max-idle-connections-percent',
    properties: ['maxIdleConnectionsPercent'],
    terraform: { module: PROXY_MODULE, names: { maxIdleConnectionsPercent: 'max_idle_connections_percent' } },
    min: 0,
    max: 100,
    fix: 'set the share of max_connections kept open while idle',
  }),
  custom({
    id: 'idle-within-max',
    properties: ['maxIdleConnectionsPercent', 'maxConnectionsPercent'],
    terraform: { module: PROXY_MODULE, names: { maxIdleConnectionsPercent: 'max_idle_connections_percent', maxConnectionsPercent: 'max_connections_percent' } },
    summary: 'at most max_connections_percent (a precondition of the target group)',
    check: (i, n) =>
      i.maxIdleConnectionsPercent! > i.maxConnectionsPercent!
        ? `${n('maxIdleConnectionsPercent')} ${i.maxIdleConnectionsPercent} exceeds ${n('maxConnectionsPercent')} ${i.maxConnectionsPercent}: set it to ${i.maxConnectionsPercent} or less`
        : undefined,
  }),
  integerRange({
    id: 'borrow-timeout',
    properties: ['connectionBorrowTimeoutSeconds'],
    terraform: { module: PROXY_MODULE, names: { connectionBorrowTimeoutSeconds: 'connection_borrow_timeout_seconds' } },
    min: 0,
    max: 300,
    fix: 'a client waits at most 5 minutes for a pooled connection',
  }),
  integerRange({
    id: 'idle-client-timeout',
    properties: ['idleClientTimeoutSeconds'],
    terraform: { module: PROXY_MODULE, names: { idleClientTimeoutSeconds: 'idle_client_timeout_seconds' } },
    min: 1,
    max: 28800,
    fix: 'RDS Proxy closes idle client connections after 1 second to 8 hours',
    aws: {
      constraint: 'IdleClientTimeout is 1 to 28,800 seconds (8 hours)',
      sources: ['https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_CreateDBProxy.html'],
    },
  }),
  custom({
    id: 'session-pinning-filters',
    properties: ['sessionPinningFilters'],
    terraform: { module: PROXY_MODULE, names: { sessionPinningFilters: 'session_pinning_filters' } },
    summary: 'must be empty (PostgreSQL)',
    aws: {
      constraint: 'session pinning filters (EXCLUDE_VARIABLE_SETS) apply to MySQL only; RDS Proxy for PostgreSQL has none',
      sources: ['https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_ConnectionPoolConfiguration.html'],
    },
    check: (i, n) =>
      i.sessionPinningFilters!.length > 0
        ? `${n('sessionPinningFilters')} ${i.sessionPinningFilters!.join(',')} is not supported by RDS Proxy for PostgreSQL (MySQL only): remove it`
        : undefined,
  }),
  pattern({
    id: 'proxy-name',
    properties: ['proxyName'],
    terraform: { module: PROXY_MODULE, names: { proxyName: 'name' } },
    pattern: '^[a-z][a-z0-9-]{0,59}$',
    noDoubleOrTrailingHyphen: true,
    what: 'proxy name',
    use: '1 to 60 lower-case letters, digits and hyphens, starting with a letter, without "--" or a trailing hyphen',
    aws: RDS_PROXY_IDENTIFIER,
  }),
  custom({
    id: 'endpoint-count',
    properties: ['endpoints'],
    terraform: { module: PROXY_MODULE, names: { endpoints: 'endpoints' } },
    summary: `at most ${MAX_PROXY_ENDPOINTS}`,
    aws: {
      constraint: 'a proxy has at most 20 user-defined endpoints (21 with its default endpoint)',
      sources: ['https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/rds-proxy-endpoints.html'],
    },
    check: (i, n) =>
      i.endpoints! > MAX_PROXY_ENDPOINTS
        ? `${n('endpoints')} ${i.endpoints} exceeds the RDS Proxy limit of ${MAX_PROXY_ENDPOINTS} endpoints per proxy: use a second proxy or fewer endpoints`
        : undefined,
  }),
  custom({
    id: 'read-only-endpoint-readers',
    properties: ['readers', 'targetRole'],
    // CDK picks the role by method; readers is the cluster's prop.
    names: { targetRole: 'addReadOnlyEndpoint' },
    terraform: { module: PROXY_MODULE, names: { readers: 'readers', targetRole: 'endpoints target_role' } },
    summary: 'at least 1 when an endpoint is READ_ONLY (a precondition of the endpoints)',
    aws: {
      constraint: 'RDS Proxy creates a READ_ONLY endpoint only when the Aurora cluster has one or more reader DB instances',
      sources: ['https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/rds-proxy-endpoints.html'],
    },
    check: (i, n) =>
      i.targetRole === 'READ_ONLY' && i.readers === 0
        ? `${n('readers')} 0 leaves a READ_ONLY endpoint (${n('targetRole')}) without a target: RDS Proxy refuses READ_ONLY endpoints for a cluster with only a writer; add a reader or use a READ_WRITE endpoint`
        : undefined,
  }),
];

/** The role of a proxy endpoint; a Terraform-only rule, since CDK types it (EndpointRole). */
function endpointRoleRule<I extends { targetRole?: string }>(id: string, terraform: { module: string; name: string }, terraformOnly: string): Rule<I> {
  return oneOf<I>({
    id,
    properties: ['targetRole'],
    terraform: { module: terraform.module, names: { targetRole: terraform.name } },
    terraformOnly,
    values: ENDPOINT_ROLES,
    what: 'a proxy endpoint role',
  });
}

export interface EndpointRuleInput {
  readonly endpointName?: string;
  readonly targetRole?: string;
}

export const ENDPOINT_RULES: ReadonlyArray<Rule<EndpointRuleInput>> = [
  pattern({
    id: 'endpoint-name',
    properties: ['endpointName'],
    // The module takes endpoints as a map keyed by endpoint name.
    terraform: { module: PROXY_MODULE, names: { endpointName: 'endpoints key' } },
    pattern: '^[a-z][a-z0-9-]{0,62}$',
    noDoubleOrTrailingHyphen: true,
    what: 'proxy endpoint name',
    use: '1 to 63 lower-case letters, digits and hyphens, starting with a letter, without "--" or a trailing hyphen',
    aws: RDS_PROXY_IDENTIFIER,
  }),
  endpointRoleRule(
    'endpoint-target-role',
    { module: PROXY_MODULE, name: 'endpoints target_role' },
    'CDK picks the role by method (addReadOnlyEndpoint, addReadWriteEndpoint), typed EndpointRole',
  ),
];

// ---------------------------------------------------------------------------------------------
// Consumer function
// ---------------------------------------------------------------------------------------------

export interface FunctionRuleInput {
  readonly memorySizeMb?: number;
  readonly timeoutSeconds?: number;
  readonly reservedConcurrentExecutions?: number;
  readonly connectionMode?: string;
  /** The role of the endpoint the function connects through. */
  readonly targetRole?: string;
  /** Whether that endpoint is its proxy's default endpoint (rather than one created beside it). */
  readonly isProxyDefaultEndpoint?: boolean;
  /** Host name of the proxy's default endpoint: the name a custom endpoint's certificate is checked against. */
  readonly proxyDefaultEndpoint?: string | null;
  readonly createKmsKey?: boolean;
  readonly kmsKeyArn?: string;
}

const FUNCTION_MODULE = 'lambda-consumer';

export const FUNCTION_RULES: ReadonlyArray<Rule<FunctionRuleInput>> = [
  integerRange({
    id: 'memory-size',
    properties: ['memorySizeMb'],
    // Messages name the construct prop, whose unit is implied, not the model's unit-suffixed key.
    names: { memorySizeMb: 'memorySize' },
    terraform: { module: FUNCTION_MODULE, names: { memorySizeMb: 'memory_size' } },
    min: 128,
    max: 10240,
    fix: 'Lambda memory is 128 MB to 10,240 MB',
    aws: {
      constraint: 'a function has 128 MB to 10,240 MB of memory',
      sources: ['https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html'],
    },
  }),
  integerRange({
    id: 'timeout',
    properties: ['timeoutSeconds'],
    names: { timeoutSeconds: 'timeout' },
    terraform: { module: FUNCTION_MODULE, names: { timeoutSeconds: 'timeout' } },
    min: 1,
    max: 900,
    fix: 'a Lambda function runs at most 15 minutes',
    aws: {
      constraint: 'a function times out after 1 to 900 seconds',
      sources: ['https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html'],
    },
  }),
  integerRange({
    id: 'reserved-concurrency',
    properties: ['reservedConcurrentExecutions'],
    terraform: { module: FUNCTION_MODULE, names: { reservedConcurrentExecutions: 'reserved_concurrent_executions' }, nullable: true },
    min: 1,
    max: 900,
    fix: 'Lambda keeps 100 of the default 1,000 account concurrency unreserved',
  }),
  oneOf({
    id: 'connection-mode',
    properties: ['connectionMode'],
    terraform: { module: FUNCTION_MODULE, names: { connectionMode: 'connection_mode' } },
    values: CONNECTION_MODES,
    what: 'a connection mode',
  }),
  endpointRoleRule(
    'consumer-target-role',
    { module: FUNCTION_MODULE, name: 'endpoint.target_role' },
    'CDK reads the role from the PoolingProxyEndpoint construct the function is given',
  ),
  custom({
    id: 'consumer-tls-server-name',
    properties: ['isProxyDefaultEndpoint'],
    terraform: {
      module: FUNCTION_MODULE,
      names: { isProxyDefaultEndpoint: 'endpoint.is_proxy_default_endpoint', proxyDefaultEndpoint: 'endpoint.proxy_default_endpoint' },
    },
    terraformOnly: 'CDK reads the proxy\'s default endpoint from the PoolingProxyEndpoint construct the function is given',
    summary: 'a custom endpoint needs the proxy\'s default endpoint, the name its TLS certificate is checked against',
    aws: {
      constraint:
        'RDS Proxy\'s certificate is a wildcard for the proxy\'s domain: VERIFY_IDENTITY (verify-full) works on the proxy\'s default endpoint only, not on endpoints you create, which allow REQUIRED and VERIFY_CA',
      sources: [
        'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/rds-proxy.howitworks.html#rds-proxy-security.tls',
        'https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/rds-proxy-endpoints.html',
      ],
    },
    check: (i, n) =>
      !i.isProxyDefaultEndpoint && (i.proxyDefaultEndpoint ?? undefined) === undefined
        ? `${n('proxyDefaultEndpoint')} is not set: a custom proxy endpoint's certificate names the proxy's default endpoint, not the endpoint, so pass the proxy's default endpoint host name (verify-full works on the default endpoint only)`
        : undefined,
  }),
  kmsKeyRule<FunctionRuleInput>('function-kms-key', FUNCTION_MODULE),
];

// ---------------------------------------------------------------------------------------------
// Dashboard
// ---------------------------------------------------------------------------------------------

export type DashboardRuleInput = Partial<AlarmThresholds> & { readonly instanceIdentifiers?: ReadonlyArray<string> };

const THRESHOLD_NAMES = Object.keys(ALARM_THRESHOLD_UNITS) as Array<keyof AlarmThresholds>;
const PERCENT_THRESHOLD_NAMES = THRESHOLD_NAMES.filter((n) => ALARM_THRESHOLD_UNITS[n] === 'percent');
const OTHER_THRESHOLD_NAMES = THRESHOLD_NAMES.filter((n) => ALARM_THRESHOLD_UNITS[n] !== 'percent');
const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const thresholdNames = (names: ReadonlyArray<string>) => Object.fromEntries(names.map((n) => [n, `thresholds.${snake(n)}`]));

const DASHBOARD_MODULE = 'dashboard';

export const DASHBOARD_RULES: ReadonlyArray<Rule<DashboardRuleInput>> = [
  percentage({
    id: 'alarm-threshold-percent',
    properties: PERCENT_THRESHOLD_NAMES,
    terraform: { module: DASHBOARD_MODULE, names: thresholdNames(PERCENT_THRESHOLD_NAMES) },
  }),
  nonNegative({
    id: 'alarm-threshold-non-negative',
    properties: OTHER_THRESHOLD_NAMES,
    terraform: { module: DASHBOARD_MODULE, names: thresholdNames(OTHER_THRESHOLD_NAMES) },
  }),
  custom({
    id: 'instance-identifiers',
    properties: ['instanceIdentifiers'],
    terraform: { module: DASHBOARD_MODULE, names: { instanceIdentifiers: 'instance_identifiers' } },
    terraformOnly: 'CDK reads the instances from the OptimizedReadsCluster construct',
    summary: 'at least one (the writer first)',
    check: (i, n) => (i.instanceIdentifiers!.length === 0 ? `${n('instanceIdentifiers')} is empty: pass the writer first, then the readers` : undefined),
  }),
];

// ---------------------------------------------------------------------------------------------
// The reference deployment
// ---------------------------------------------------------------------------------------------

export interface DeploymentRuleInput {
  readonly readOnlyEndpoints?: number;
}

export const DEPLOYMENT_RULES: ReadonlyArray<Rule<DeploymentRuleInput>> = [
  integerRange({
    id: 'read-only-endpoints',
    properties: ['readOnlyEndpoints'],
    terraform: { module: 'examples/complete', names: { readOnlyEndpoints: 'read_only_endpoints' } },
    // One READ_WRITE endpoint plus these must fit RDS Proxy's limit.
    min: 1,
    max: MAX_PROXY_ENDPOINTS - 1,
    fix: `the READ_WRITE endpoint and the READ_ONLY ones share RDS Proxy's limit of ${MAX_PROXY_ENDPOINTS}`,
  }),
];

/** Every table the constructs and the Terraform modules share. */
export const RULE_TABLES = {
  cluster: CLUSTER_RULES,
  proxy: PROXY_RULES,
  endpoint: ENDPOINT_RULES,
  function: FUNCTION_RULES,
  dashboard: DASHBOARD_RULES,
  deployment: DEPLOYMENT_RULES,
} as const;

/** Catalog classes listed for error messages and docs. */
export const OPTIMIZED_READS_CLASS_NAMES = INSTANCE_CLASS_CATALOG.map((s) => s.instanceClass);
