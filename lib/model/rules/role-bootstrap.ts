/** Rules of the database-role bootstrap's Terraform module (modules/database-role-bootstrap). */
import { type Rule } from '../rule-table';
import { type LambdaCodeInput, lambdaCodeRule } from './shared';

export type RoleBootstrapRuleInput = LambdaCodeInput;

export const ROLE_BOOTSTRAP_RULES: ReadonlyArray<Rule<RoleBootstrapRuleInput>> = [lambdaCodeRule<RoleBootstrapRuleInput>('role-bootstrap-code-source', 'database-role-bootstrap')];
