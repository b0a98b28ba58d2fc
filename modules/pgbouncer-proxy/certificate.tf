# The listeners' certificate when tls_secret_arn is not given, as the CDK construct's PgBouncerCertificate:
# the release's pooler-certificate.zip (lambda/src/pooler-certificate.ts), run by aws_lambda_invocation
# once the endpoint service exists, keeps an ECDSA P-256 CA in a secret only it reads and issues a
# certificate for every interface endpoint of the service (*.<service id>.<region>.vpce.<dns suffix>)
# into the secret the hosts read at boot. Its result holds the CA certificate only.

data "aws_region" "current" {}

locals {
  kit_certificate       = var.tls_secret_arn == null
  certificate_function  = "${var.name}-pooler-certificate"
  tls_secret_arn        = local.kit_certificate ? aws_secretsmanager_secret.tls[0].arn : var.tls_secret_arn
  certificate_result    = local.kit_certificate ? jsondecode(aws_lambda_invocation.certificate[0].result) : null
  client_ca_certificate = local.kit_certificate ? local.certificate_result.Data.CaCertificate : var.tls_ca_certificate
  # Tags the hosts: a re-issued certificate is a new launch template version, which the instance refresh rolls out.
  certificate_tags = local.kit_certificate ? { "aurora-proxy-kit:listener-certificate-serial" = local.certificate_result.Data.CertificateSerial } : {}
  certificate_code = coalesce(var.certificate_function, { filename = null, s3_bucket = null, s3_key = null, source_code_hash = null })
}

resource "aws_secretsmanager_secret" "tls" {
  #checkov:skip=CKV2_AWS_57:A certificate, not a password: it is issued again when the endpoint service changes; rotation would need the hosts replaced too
  #checkov:skip=CKV_AWS_149:Encrypted with the account's aws/secretsmanager key, as the CDK construct's secrets are; the host role's grant is the secret itself
  count = local.kit_certificate ? 1 : 0

  name_prefix = "${var.name}-listener-tls-"
  description = "The PgBouncer listeners' certificate, key and CA of ${var.name} (written by its issuing function)"
  tags        = var.tags
}

resource "aws_secretsmanager_secret" "ca" {
  #checkov:skip=CKV2_AWS_57:The CA's key, kept so a re-issue keeps the consumers' trust; rotating it would break that trust
  #checkov:skip=CKV_AWS_149:Encrypted with the account's aws/secretsmanager key, as the CDK construct's secrets are; only the issuing function may read it
  count = local.kit_certificate ? 1 : 0

  name_prefix = "${var.name}-listener-ca-"
  description = "The CA of the PgBouncer listeners' certificate of ${var.name}: read by its issuing function only"
  tags        = var.tags
}

# Least privilege: write the hosts' secret; read and write the CA's. Nothing else.
data "aws_iam_policy_document" "certificate" {
  count = local.kit_certificate ? 1 : 0

  #checkov:skip=CKV_AWS_356:Active tracing needs xray:PutTraceSegments and xray:PutTelemetryRecords, which X-Ray supports only on Resource *; the secrets are named one by one
  statement {
    sid       = "Tracing"
    actions   = ["xray:PutTraceSegments", "xray:PutTelemetryRecords"]
    resources = ["*"]
  }
  statement {
    sid       = "WriteTheListenersSecret"
    actions   = ["secretsmanager:PutSecretValue"]
    resources = [aws_secretsmanager_secret.tls[0].arn]
  }
  statement {
    sid       = "KeepTheCa"
    actions   = ["secretsmanager:GetSecretValue", "secretsmanager:PutSecretValue"]
    resources = [aws_secretsmanager_secret.ca[0].arn]
  }

  # The function's code, checked where its grants are decided (the function exists only with them).
  lifecycle {
    # BEGIN generated pooler-certificate-function by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)
    precondition {
      condition     = var.tls_secret_arn != null || local.certificate_code.filename != null || local.certificate_code.s3_bucket != null || local.certificate_code.s3_key != null
      error_message = "certificate_function has neither filename nor s3_bucket and s3_key: without tls_secret_arn the module issues the listeners' certificate with the release's pooler-certificate.zip, so pass its path in filename, or the S3 object it was uploaded to in s3_bucket and s3_key"
    }
    precondition {
      condition     = var.tls_secret_arn != null || local.certificate_code.filename == null || (local.certificate_code.s3_bucket == null && local.certificate_code.s3_key == null)
      error_message = "certificate_function has filename with s3_bucket or s3_key: a function's code comes from one place, so pass filename or s3_bucket and s3_key, not both"
    }
    precondition {
      condition     = var.tls_secret_arn != null || local.certificate_code.filename != null || (local.certificate_code.s3_bucket == null) == (local.certificate_code.s3_key == null)
      error_message = "certificate_function has only one of s3_bucket and s3_key: an S3 object is named by both"
    }
    # END generated pooler-certificate-function
  }
}

# The function, its role, log group and key (unless certificate_kms_key_arn): the kit's Lambda function.
module "certificate_function" {
  source = "../internal/handler-function"
  count  = local.kit_certificate ? 1 : 0

  function_name = local.certificate_function
  description   = "aurora-proxy-kit PgBouncer listener certificate"
  code = {
    filename         = local.certificate_code.filename
    s3_bucket        = local.certificate_code.s3_bucket
    s3_key           = local.certificate_code.s3_key
    source_code_hash = local.certificate_code.source_code_hash
  }
  memory_size = 256
  timeout     = 60
  # No vpc: it calls only Secrets Manager, through its public endpoint, and reaches nothing in a VPC.
  role = {
    # name_prefix is at most 38 characters: 29 of the name and "-cert-".
    name_prefix = "${var.name}-cert-"
    description = "The PgBouncer listener certificate function of ${var.name}"
  }
  policy = { name = "tracing-and-certificate-secrets", json = data.aws_iam_policy_document.certificate[0].json }

  # One month, like the CDK construct's: the function runs once per apply.
  log_retention_days = 30
  create_kms_key     = var.certificate_kms_key_arn == null
  kms_key_arn        = var.certificate_kms_key_arn
  tags               = var.tags
}

# Issues the certificate once the endpoint service exists, and again when its id, the secrets or the
# validity change (the input): the CA is kept, so the consumers' trust holds.
resource "aws_lambda_invocation" "certificate" {
  count = local.kit_certificate ? 1 : 0

  function_name = module.certificate_function[0].function.function_name
  input = jsonencode({
    serviceId    = aws_vpc_endpoint_service.this.id
    region       = data.aws_region.current.region
    dnsSuffix    = data.aws_partition.current.dns_suffix
    tlsSecretArn = aws_secretsmanager_secret.tls[0].arn
    caSecretArn  = aws_secretsmanager_secret.ca[0].arn
    validityDays = var.certificate_validity_days
  })
}
