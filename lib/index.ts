/**
 * What a CDK user of the kit imports: the constructs with their props, the types they pass and get
 * back, the error they catch, and the model's facts worth knowing before a deploy (the Optimized
 * Reads catalog and sizing). jsii compiles exactly this for the other languages (Python), so
 * constants and functions are static members of a class and choices are enums. Renderers, rule
 * tables, the rehearsal, internal helpers and the reference app stay internal;
 * test/docs/public-api.test.ts pins this list.
 */
export { OptimizedReadsCluster, type OptimizedReadsClusterProps, type InstanceMetricOptions } from './optimized-reads-cluster';
export { type IOptimizedReadsCluster, type OptimizedReadsClusterAttributes } from './optimized-reads-cluster-attributes';
export { PoolingProxy, type PoolingProxyProps } from './pooling-proxy';
export { type PoolingProxyAttributes } from './pooling-proxy-attributes';
export {
  PoolingProxyEndpoint,
  type IPoolingProxy,
  type PoolingProxyEndpointAttributes,
  type PoolingProxyEndpointOptions,
  type PoolingProxyEndpointProps,
} from './pooling-proxy-endpoint';
export { PgBouncerProxy } from './pgbouncer-proxy';
export { type PgBouncerProxyProps } from './pgbouncer-proxy-props';
export { type PgBouncerProxyAttributes } from './pgbouncer-proxy-attributes';
export { type PgBouncerPackages } from './pgbouncer-packages';
export { type PgBouncerMetricOptions } from './pgbouncer-metric-options';
export { PgBouncerCertificate, type PgBouncerCertificateProps, type PgBouncerTlsCertificate } from './pgbouncer-certificate';
export {
  PgBouncerProxyEndpoint,
  type IPgBouncerProxy,
  type PgBouncerProxyEndpointAttributes,
  type PgBouncerProxyEndpointOptions,
  type PgBouncerProxyEndpointProps,
} from './pgbouncer-proxy-endpoint';
export { PoolMode } from './model/pgbouncer-ini';
export { ProxyEngine, type ConsumerConnection, type IPoolingTier, type IProxyEndpoint, type PoolingMetricOptions, type ProxyEndpointOptions } from './pooling-tier';
export { DatabaseConsumerFunction, type DatabaseConsumerFunctionProps } from './database-consumer-function';
export { DatabaseDashboard, type DatabaseDashboardProps } from './database-dashboard';
export { DatabaseRoleBootstrap, type DatabaseRoleBootstrapProps, type DatabaseRoleSpec } from './database-role-bootstrap';
export { ApiRoutes, type VpcApiEndpoints } from './vpc-api-routes';
export { OptimizedReadsCatalog } from './optimized-reads-catalog';
export { KitValidationError } from './private/validation';
export { CostEstimator } from './cost-estimator';
export {
  // Vocabulary
  ConnectionMode,
  EndpointRole,
  // The Optimized Reads catalog and sizing (their functions and defaults: OptimizedReadsCatalog, PoolingProxy, DatabaseDashboard)
  type Architecture,
  type InstanceClassSpec,
  type OptimizedReadsFamily,
  type OptimizedReadsSizing,
  type PoolSettings,
  type PoolSizing,
  // Alarms
  type AlarmThresholdOptions,
  type AlarmThresholds,
  // The cost estimate (CostEstimator)
  type CostEstimate,
  type CostEstimateOptions,
  type CostLine,
  type DeploymentInventory,
  type EngineComparison,
  type FleetHosts,
  type InterfaceEndpointUse,
  type StorageComparison,
} from './model';
