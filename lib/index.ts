/**
 * What a CDK user of the kit imports: the constructs with their props, the types they pass and get
 * back, the error they catch, and the model's facts worth knowing before a deploy (the Optimized
 * Reads catalog and sizing). jsii compiles exactly this for the other languages (Python), so
 * constants and functions are static members of a class and choices are enums. Renderers, rule
 * tables, the rehearsal, internal helpers and the reference app stay internal;
 * test/docs/public-api.test.ts pins this list.
 */
export { AuroraOptimizedReads, type AuroraOptimizedReadsProps, type InstanceMetricOptions } from './aurora-optimized-reads';
export { type IAuroraOptimizedReads, type AuroraOptimizedReadsAttributes } from './aurora-optimized-reads-attributes';
export { RdsProxy, type RdsProxyProps } from './rds-proxy';
export { type RdsProxyAttributes } from './rds-proxy-attributes';
export {
  RdsProxyEndpoint,
  type IRdsProxy,
  type RdsProxyEndpointAttributes,
  type RdsProxyEndpointOptions,
  type RdsProxyEndpointProps,
} from './rds-proxy-endpoint';
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
export { LambdaConsumer, type LambdaConsumerProps } from './lambda-consumer';
export { Dashboard, type DashboardProps } from './dashboard';
export { DatabaseRoleBootstrap, type DatabaseRoleBootstrapProps, type DatabaseRoleSpec } from './database-role-bootstrap';
export { ApiRoutes, type VpcApiEndpoints } from './vpc-api-routes';
export { OptimizedReadsCatalog } from './optimized-reads-catalog';
export { KitValidationError } from './private/validation';
export { CostEstimator } from './cost-estimator';
// The names the constructs had before they took their Terraform modules' (docs/DECISIONS.md), deprecated
export {
  OptimizedReadsCluster,
  type OptimizedReadsClusterProps,
  type OptimizedReadsClusterAttributes,
  type IOptimizedReadsCluster,
  PoolingProxy,
  type PoolingProxyProps,
  type PoolingProxyAttributes,
  PoolingProxyEndpoint,
  type IPoolingProxy,
  type PoolingProxyEndpointAttributes,
  type PoolingProxyEndpointOptions,
  type PoolingProxyEndpointProps,
  DatabaseConsumerFunction,
  type DatabaseConsumerFunctionProps,
  DatabaseDashboard,
  type DatabaseDashboardProps,
} from './deprecated-names';
export {
  // Vocabulary
  ConnectionMode,
  EndpointRole,
  // The Optimized Reads catalog and sizing (their functions and defaults: OptimizedReadsCatalog, RdsProxy, Dashboard)
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
