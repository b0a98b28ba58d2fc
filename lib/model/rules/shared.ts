/** Row builders more than one table uses. */
import { ENDPOINT_ROLES } from '../vocabulary';
import { type Rule, custom, oneOf } from '../rule-table';

/** A Terraform-only rule's reason when the module takes an explicit key switch CDK does not need. */
const KMS_SWITCH_REASON = 'CDK takes an optional key object and creates one when it is absent; Terraform switches by create_kms_key so that a key ARN may be unknown at plan';

/** The KMS precondition of a module that creates its key unless told otherwise. */
export function kmsKeyRule<I extends { createKmsKey?: boolean; kmsKeyArn?: string }>(id: string, module: string): Rule<I> {
  return custom<I>({
    id,
    properties: ['createKmsKey'],
    terraform: { module, names: { createKmsKey: 'create_kms_key', kmsKeyArn: 'kms_key_arn' } },
    terraformOnly: KMS_SWITCH_REASON,
    summary: 'kms_key_arn is required when create_kms_key is false (a precondition)',
    check: (i, n) =>
      !i.createKmsKey && i.kmsKeyArn === undefined
        ? `${n('kmsKeyArn')} is not set: pass ${n('kmsKeyArn')} when ${n('createKmsKey')} is false`
        : undefined,
  });
}

/** The role of a proxy endpoint; a Terraform-only rule, since CDK types it (EndpointRole). */
export function endpointRoleRule<I extends { targetRole?: string }>(id: string, terraform: { module: string; name: string }, terraformOnly: string): Rule<I> {
  return oneOf<I>({
    id,
    properties: ['targetRole'],
    terraform: { module: terraform.module, names: { targetRole: terraform.name } },
    terraformOnly,
    values: ENDPOINT_ROLES,
    what: 'a proxy endpoint role',
  });
}
