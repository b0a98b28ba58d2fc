/** Rules of the reference deployment (bin/app.ts context; modules/examples/complete). */
import { type Rule, integerRange } from '../rule-table';
import { MAX_PROXY_ENDPOINTS } from './proxy';

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
