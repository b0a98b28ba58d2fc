/** Rules of the database-role bootstrap's Terraform module (modules/database-role-bootstrap). */
import { type Rule } from '../rule-table';
import { type ApiRouteRuleInput, ROLE_BOOTSTRAP_APIS, apiRouteRule } from './api-routes';
import { type LambdaCodeInput, lambdaCodeRule } from './shared';

export interface RoleBootstrapRuleInput extends LambdaCodeInput, ApiRouteRuleInput {}

export const ROLE_BOOTSTRAP_RULES: ReadonlyArray<Rule<RoleBootstrapRuleInput>> = [
  lambdaCodeRule<RoleBootstrapRuleInput>('role-bootstrap-code-source', 'database-role-bootstrap'),
  // The function reads the master secret (and the roles' password secrets) from inside the cluster's VPC.
  apiRouteRule<RoleBootstrapRuleInput>('role-bootstrap-api-route', 'database-role-bootstrap', ROLE_BOOTSTRAP_APIS, 'the role bootstrap function'),
];
