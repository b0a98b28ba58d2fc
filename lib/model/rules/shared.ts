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

/** The role of a proxy endpoint; a Terraform-only rule, since CDK types it (EndpointRole). Several modules may take one. */
export function endpointRoleRule<I extends { targetRole?: string }>(
  id: string,
  terraform: { module: string; name: string } | ReadonlyArray<{ module: string; name: string }>,
  terraformOnly: string,
): Rule<I> {
  const uses = (Array.isArray(terraform) ? terraform : [terraform]) as ReadonlyArray<{ module: string; name: string }>;
  return oneOf<I>({
    id,
    properties: ['targetRole'],
    terraform: uses.map((u) => ({ module: u.module, names: { targetRole: u.name } })),
    terraformOnly,
    values: ENDPOINT_ROLES,
    what: 'a proxy endpoint role',
  });
}

/** Where a Terraform module's function code comes from: a local zip, or an S3 object. */
export interface LambdaCodeInput {
  readonly filename?: string | null;
  readonly s3Bucket?: string | null;
  readonly s3Key?: string | null;
}

const LAMBDA_CODE_REASON = 'CDK deploys the handlers as assets it uploads itself: pre-bundled in the npm package, bundled from lambda/src in the repository';

/**
 * The code of a module's function: the release's zip on disk (`filename`), or the S3 object it was
 * uploaded to (`s3_bucket` + `s3_key`), which a Terraform configuration without Node.js can use; never
 * both (Lambda takes one source of code). A precondition, since it spans variables.
 */
export function lambdaCodeRule<I extends LambdaCodeInput>(id: string, module: string): Rule<I> {
  const set = (v: string | null | undefined) => v !== undefined && v !== null;
  return custom<I>({
    id,
    properties: ['filename'],
    terraform: { module, names: { filename: 'filename', s3Bucket: 's3_bucket', s3Key: 's3_key' } },
    terraformOnly: LAMBDA_CODE_REASON,
    summary: 'filename, or s3_bucket and s3_key, not both (a precondition)',
    aws: {
      constraint: 'a function\'s code is one of: a .zip file uploaded with the request (the provider\'s filename), an S3 object (S3Bucket and S3Key), or a container image',
      sources: ['https://docs.aws.amazon.com/lambda/latest/api/API_FunctionCode.html'],
    },
    check: (i, n) => {
      const s3 = `${n('s3Bucket')} and ${n('s3Key')}`;
      if (set(i.filename) && (set(i.s3Bucket) || set(i.s3Key))) return `${n('filename')} is set with ${n('s3Bucket')} or ${n('s3Key')}: a function's code comes from one place, so pass ${n('filename')} or ${s3}, not both`;
      if (set(i.filename)) return undefined;
      if (!set(i.s3Bucket) && !set(i.s3Key)) return `${n('filename')} is not set: pass the path of the function's zip in ${n('filename')}, or the S3 object it was uploaded to in ${s3}`;
      if (!set(i.s3Key)) return `${n('s3Key')} is not set: an S3 object is named by ${s3}`;
      if (!set(i.s3Bucket)) return `${n('s3Bucket')} is not set: an S3 object is named by ${s3}`;
      return undefined;
    },
  });
}
