/** Public surface of the deployed topology (re-exported by lib/rehearsal/index.ts). */
export * from './types';
export { TopologyInputError } from './errors';
export { topologyFromCdkOut } from './cdk';
export { topologyFromPlan, type TerraformWorkingDir } from './plan';
export { loadTopology } from './load';
export { settingsFromTopology, type TopologySettings } from './settings-from-topology';
export { comparableTopology, type ComparableTopology } from './projection';
export { formatTopology } from './format';
export { poolWithDefaults, RDS_PROXY_DEFAULT_BORROW_TIMEOUT_SECONDS, RDS_PROXY_DEFAULT_IDLE_WITHOUT_MAX_PERCENT, RDS_PROXY_DEFAULT_MAX_CONNECTIONS_PERCENT } from './build';
