/**
 * The one door to the kit's model (lib/model): the rule tables and their runner. The package reads the
 * same rows as the CDK constructs and the Terraform modules' generated validations, so all three give
 * the same verdicts and messages. In this repository it is imported from source; a published build
 * bundles it (make cdktn-build).
 */
export { PROPERTY_LOOKUPS, RULE_TABLES, evaluateRules, terraformUse, terraformUses, type Naming, type PropertyLookup, type Rule } from '../../../lib/model';
