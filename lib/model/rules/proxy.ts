/** Rules of the proxy and its endpoints (RdsProxy, RdsProxyEndpoint; modules/rds-proxy). */
import { type AwsSource, type Rule, type TerraformUse, custom, integerRange, pattern } from '../rule-table';
import { endpointRoleRule } from './shared';

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

const PROXY_MODULE = 'rds-proxy';
/** The PgBouncer engine's module takes the same pool settings, under the same names. */
const PGBOUNCER_MODULE = 'pgbouncer-proxy';

/** A pool setting's Terraform uses: both engines' modules. */
function poolSetting(names: Record<string, string>): ReadonlyArray<TerraformUse> {
  return [PROXY_MODULE, PGBOUNCER_MODULE].map((module) => ({ module, names }));
}

export const PROXY_RULES: ReadonlyArray<Rule<ProxyRuleInput>> = [
  integerRange({
    id: 'max-connections-percent',
    properties: ['maxConnectionsPercent'],
    terraform: poolSetting({ maxConnectionsPercent: 'max_connections_percent' }),
    min: 1,
    max: 100,
    fix: 'set the share of the target\'s max_connections the proxy may use',
  }),
  integerRange({
    id: 'max-idle-connections-percent',
    properties: ['maxIdleConnectionsPercent'],
    terraform: poolSetting({ maxIdleConnectionsPercent: 'max_idle_connections_percent' }),
    min: 0,
    max: 100,
    fix: 'set the share of max_connections kept open while idle',
  }),
  custom({
    id: 'idle-within-max',
    properties: ['maxIdleConnectionsPercent', 'maxConnectionsPercent'],
    terraform: poolSetting({ maxIdleConnectionsPercent: 'max_idle_connections_percent', maxConnectionsPercent: 'max_connections_percent' }),
    summary: 'at most max_connections_percent (a precondition)',
    check: (i, n) =>
      i.maxIdleConnectionsPercent! > i.maxConnectionsPercent!
        ? `${n('maxIdleConnectionsPercent')} ${i.maxIdleConnectionsPercent} exceeds ${n('maxConnectionsPercent')} ${i.maxConnectionsPercent}: set it to ${i.maxConnectionsPercent} or less`
        : undefined,
  }),
  integerRange({
    id: 'borrow-timeout',
    properties: ['connectionBorrowTimeoutSeconds'],
    terraform: poolSetting({ connectionBorrowTimeoutSeconds: 'connection_borrow_timeout_seconds' }),
    min: 0,
    max: 300,
    fix: 'set how long a client waits for a pooled connection',
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
    // The PgBouncer engine's endpoints name it `role`.
    [
      { module: PROXY_MODULE, name: 'endpoints target_role' },
      { module: PGBOUNCER_MODULE, name: 'endpoints role' },
    ],
    'CDK types the role (EndpointRole): both engines pick it by method (IPoolingTier.addReadOnlyEndpoint, addReadWriteEndpoint); the deprecated PgBouncerProxy.addEndpoint takes it as an option',
  ),
];
