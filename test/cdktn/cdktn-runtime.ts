/**
 * cdktn as packages/cdktn installs it (make cdktn-deps): that package pins constructs 10.7 (cdktn's peer
 * range is >=10.6 <10.8) while the repository root pins 10.8.1 for aws-cdk-lib, so the tests take cdktn
 * from the package's own node_modules, the same copy the package's sources resolve.
 */
export { App, TerraformStack, Testing, Token } from '../../packages/cdktn/node_modules/cdktn';
