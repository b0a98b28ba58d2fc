import { libIndexExports } from '../helpers/lib-exports';

/**
 * The names a CDK user can import from the kit, values and types alike: the constructs and their
 * props, the types they pass and get back, the error they catch, and the catalog and sizing facts.
 * Renderers, rule tables, the rehearsal, internal helpers and the reference app are not on it. jsii
 * compiles it for Python: functions and constants are static members (OptimizedReadsCatalog), choices enums.
 * Growing or shrinking the public surface is a decision: change this list with it.
 */
const PUBLIC_API = [
  'AlarmThresholdOptions',
  'AlarmThresholds',
  // How a construct reaches the AWS APIs it calls from its VPC
  'ApiRoutes',
  'VpcApiEndpoints',
  'Architecture',
  'ConnectionMode',
  'LambdaConsumer',
  'LambdaConsumerProps',
  'Dashboard',
  'DashboardProps',
  'DatabaseRoleBootstrap',
  'DatabaseRoleBootstrapProps',
  'DatabaseRoleSpec',
  'EndpointRole',
  'IRdsProxy',
  'IPoolingTier',
  'InstanceClassSpec',
  'InstanceMetricOptions',
  'KitValidationError',
  'OptimizedReadsCatalog',
  'AuroraOptimizedReads',
  'AuroraOptimizedReadsAttributes',
  'IAuroraOptimizedReads',
  'AuroraOptimizedReadsProps',
  'OptimizedReadsFamily',
  'OptimizedReadsSizing',
  'PgBouncerMetricOptions',
  'PgBouncerCertificate',
  'PgBouncerCertificateProps',
  'PgBouncerPackages',
  'PgBouncerProxy',
  'PgBouncerProxyAttributes',
  'PgBouncerProxyEndpoint',
  'PgBouncerProxyEndpointAttributes',
  'PgBouncerProxyEndpointOptions',
  'PgBouncerProxyEndpointProps',
  'PgBouncerProxyProps',
  'PgBouncerTlsCertificate',
  'IPgBouncerProxy',
  // The pooling tier of either engine
  'ConsumerConnection',
  'IProxyEndpoint',
  'PoolingMetricOptions',
  'ProxyEndpointOptions',
  'PoolMode',
  'PoolSettings',
  'PoolSizing',
  'RdsProxy',
  'RdsProxyAttributes',
  'RdsProxyEndpoint',
  'RdsProxyEndpointAttributes',
  'RdsProxyEndpointOptions',
  'RdsProxyEndpointProps',
  'RdsProxyProps',
  'ProxyEngine',
  // The cost estimate
  'CostEstimate',
  'CostEstimateOptions',
  'CostEstimator',
  'CostLine',
  'DeploymentInventory',
  'EngineComparison',
  'FleetHosts',
  'InterfaceEndpointUse',
  'StorageComparison',
  // The former names, deprecated (docs/DECISIONS.md, "One name per thing")
  'OptimizedReadsCluster',
  'OptimizedReadsClusterProps',
  'OptimizedReadsClusterAttributes',
  'IOptimizedReadsCluster',
  'PoolingProxy',
  'PoolingProxyProps',
  'PoolingProxyAttributes',
  'PoolingProxyEndpoint',
  'IPoolingProxy',
  'PoolingProxyEndpointAttributes',
  'PoolingProxyEndpointOptions',
  'PoolingProxyEndpointProps',
  'DatabaseConsumerFunction',
  'DatabaseConsumerFunctionProps',
  'DatabaseDashboard',
  'DatabaseDashboardProps',
];

/** Every name lib/index.ts exports, types included, as the compiler sees them. */
function exportedNames(): string[] {
  return libIndexExports().exports.map((s) => s.getName()).sort();
}

describe('public API', () => {
  test('lib/index.ts exports exactly the listed names', () => {
    expect(exportedNames()).toEqual([...PUBLIC_API].sort());
  });
});
