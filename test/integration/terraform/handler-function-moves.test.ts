import * as path from 'path';
import { ROOT, TerraformDir } from '../../terraform/terraform-cli';

/**
 * lambda-consumer, database-role-bootstrap and pgbouncer-proxy's certificate function make their function
 * with modules/internal/handler-function; each caller's migrations.tf moves what an earlier version of the
 * kit made at its own addresses. examples/complete-pgbouncer calls all three: planned against a state
 * holding the former addresses, every object is moved and updated in place, none destroyed or created.
 */

const AWS = 'provider["registry.terraform.io/hashicorp/aws"]';

/** The resources each caller made itself before: [type, name, index key or none, address inside internal/handler-function]. */
type Former = readonly [type: string, name: string, key: number | undefined, to: string];

const CONSUMER: ReadonlyArray<Former> = [
  ['aws_kms_key', 'this', 0, 'aws_kms_key.this[0]'],
  ['aws_cloudwatch_log_group', 'this', undefined, 'aws_cloudwatch_log_group.this'],
  ['aws_security_group', 'this', undefined, 'aws_security_group.this[0]'],
  ['aws_iam_role', 'this', undefined, 'aws_iam_role.this'],
  ['aws_iam_role_policy_attachment', 'basic', undefined, 'aws_iam_role_policy_attachment.basic'],
  ['aws_iam_role_policy_attachment', 'vpc', undefined, 'aws_iam_role_policy_attachment.vpc[0]'],
  ['aws_iam_role_policy', 'function', undefined, 'aws_iam_role_policy.this'],
  ['aws_lambda_function', 'this', undefined, 'aws_lambda_function.this'],
];

/** The role bootstrap took its key from the caller: the consumer's resources but the key. */
const ROLE_BOOTSTRAP: ReadonlyArray<Former> = CONSUMER.filter(([type]) => type !== 'aws_kms_key');

const CERTIFICATE: ReadonlyArray<Former> = [
  ['aws_kms_key', 'certificate', 0, 'aws_kms_key.this[0]'],
  ['aws_cloudwatch_log_group', 'certificate', 0, 'aws_cloudwatch_log_group.this'],
  ['aws_iam_role', 'certificate', 0, 'aws_iam_role.this'],
  ['aws_iam_role_policy_attachment', 'certificate_logs', 0, 'aws_iam_role_policy_attachment.basic'],
  ['aws_iam_role_policy', 'certificate', 0, 'aws_iam_role_policy.this'],
  ['aws_lambda_function', 'certificate', 0, 'aws_lambda_function.this'],
];

/** Each caller in the example: its module instance, its former resources, and where handler-function sits in it. */
const CALLERS: ReadonlyArray<{ readonly module: string; readonly former: ReadonlyArray<Former>; readonly function: string }> = [
  { module: 'module.consumer["reader"]', former: CONSUMER, function: 'module.function' },
  { module: 'module.consumer["writer"]', former: CONSUMER, function: 'module.function' },
  { module: 'module.database_roles', former: ROLE_BOOTSTRAP, function: 'module.function' },
  { module: 'module.pooler', former: CERTIFICATE, function: 'module.certificate_function[0]' },
];

const formerAddress = (module: string, [type, name, key]: Former): string => `${module}.${type}.${name}${key === undefined ? '' : `[${key}]`}`;

/** A state resource (version 4) at a former address: one instance, an id only (plan does not refresh). */
function stateResource(module: string, former: Former): Record<string, unknown> {
  const [type, name, key] = former;
  const attributes = { id: `${type}-${module.replace(/\W+/g, '-')}-${name}` };
  return { module, mode: 'managed', type, name, provider: AWS, ...(key === undefined ? {} : { each: 'list' }), instances: [{ ...(key === undefined ? {} : { index_key: key }), schema_version: 0, attributes }] };
}

describe('internal/handler-function: state from before it existed', () => {
  let dir: TerraformDir;

  beforeAll(() => {
    dir = new TerraformDir(path.join(ROOT, 'modules/examples/complete-pgbouncer'));
  });

  afterAll(() => dir?.dispose());

  test('GIVEN the consumers\', the role bootstrap\'s and the certificate function\'s resources at their former addresses WHEN planned THEN each is moved into handler-function and updated in place, none replaced', () => {
    // GIVEN a state holding what the callers made themselves
    const resources = CALLERS.flatMap(({ module, former }) => former.map((f) => stateResource(module, f)));
    // WHEN the example is planned against it
    const moved = dir.movesFrom(resources);
    // THEN every former object has a new address inside handler-function, and is neither destroyed nor created
    const expected = CALLERS.flatMap(({ module, former, function: fn }) => former.map((f) => [formerAddress(module, f), `${module}.${fn}.${f[3]}`])).sort();
    expect(moved.map(([from, to]) => [from, to])).toEqual(expected);
    for (const [from, , actions] of moved) expect({ from, actions }).toEqual({ from, actions: ['update'] });
  }, 300_000);
});
