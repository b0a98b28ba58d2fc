data "aws_region" "current" {}

locals {
  postgres_port        = 5432
  password_secret_arns = compact([for r in var.roles : r.password_secret_arn])
  # The Secrets Manager endpoint's security groups, from either input; the route rule reads local.vpc_endpoints.
  # (Counted by the inputs' shapes, known at plan, not by their ids, known only at apply.)
  secrets_manager_security_group_ids = concat(var.secrets_manager_security_group_ids, [for k, v in var.vpc_endpoints : v if k == "secretsmanager"])
  vpc_endpoints                      = merge(length(var.secrets_manager_security_group_ids) > 0 ? { secretsmanager = var.secrets_manager_security_group_ids[0] } : {}, var.vpc_endpoints)
}

# --- Network: egress only to the cluster and to Secrets Manager; the cluster admits it ---------------

resource "aws_vpc_security_group_egress_rule" "to_cluster" {
  security_group_id            = module.function.security_group.id
  referenced_security_group_id = var.cluster_security_group_id
  ip_protocol                  = "tcp"
  from_port                    = local.postgres_port
  to_port                      = local.postgres_port
  description                  = "Database role bootstrap to the writer"
}

resource "aws_vpc_security_group_ingress_rule" "cluster_from_function" {
  security_group_id            = var.cluster_security_group_id
  referenced_security_group_id = module.function.security_group.id
  ip_protocol                  = "tcp"
  from_port                    = local.postgres_port
  to_port                      = local.postgres_port
  description                  = "Database role bootstrap to the writer"
}

resource "aws_vpc_security_group_egress_rule" "to_secrets_manager" {
  count = length(var.secrets_manager_security_group_ids) + (contains(keys(var.vpc_endpoints), "secretsmanager") ? 1 : 0)

  security_group_id            = module.function.security_group.id
  referenced_security_group_id = local.secrets_manager_security_group_ids[count.index]
  ip_protocol                  = "tcp"
  from_port                    = 443
  to_port                      = 443
  description                  = "Role bootstrap reads the master secret"
}

# --- IAM: tracing, and a read of the master secret (and the roles' password secrets) ----------------

data "aws_iam_policy_document" "function" {
  #checkov:skip=CKV_AWS_356:Active tracing needs xray:PutTraceSegments and xray:PutTelemetryRecords, which X-Ray supports only on Resource *; the secret read is scoped to the master secret
  statement {
    sid       = "Tracing"
    actions   = ["xray:PutTraceSegments", "xray:PutTelemetryRecords"]
    resources = ["*"]
  }
  statement {
    sid       = "ReadTheMasterSecret"
    actions   = ["secretsmanager:DescribeSecret", "secretsmanager:GetSecretValue"]
    resources = [var.master_user_secret_arn]
  }
  # A role with a password secret gets the verifier derived from it: the function reads those secrets
  # (encrypted with the account's aws/secretsmanager key, which Secrets Manager uses on the reader's behalf).
  dynamic "statement" {
    for_each = length(local.password_secret_arns) == 0 ? [] : [local.password_secret_arns]
    content {
      sid       = "ReadTheRolesPasswordSecrets"
      actions   = ["secretsmanager:GetSecretValue"]
      resources = statement.value
    }
  }
  statement {
    sid       = "DecryptTheMasterSecret"
    actions   = ["kms:Decrypt"]
    resources = [var.secret_kms_key_arn]
    condition {
      test     = "StringEquals"
      variable = "kms:ViaService"
      values   = ["secretsmanager.${data.aws_region.current.region}.amazonaws.com"]
    }
  }

  # The module's rules that span variables, checked where the function's grants are decided.
  lifecycle {
    # BEGIN generated role-bootstrap-code-source by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)
    precondition {
      condition     = var.filename == null || (var.s3_bucket == null && var.s3_key == null)
      error_message = "filename is set with s3_bucket or s3_key: a function's code comes from one place, so pass filename or s3_bucket and s3_key, not both"
    }
    precondition {
      condition     = var.filename != null || var.s3_bucket != null || var.s3_key != null
      error_message = "filename is not set: pass the path of the function's zip in filename, or the S3 object it was uploaded to in s3_bucket and s3_key"
    }
    precondition {
      condition     = var.filename != null || var.s3_bucket == null || var.s3_key != null
      error_message = "s3_key is not set: an S3 object is named by s3_bucket and s3_key"
    }
    precondition {
      condition     = var.filename != null || var.s3_key == null || var.s3_bucket != null
      error_message = "s3_bucket is not set: an S3 object is named by s3_bucket and s3_key"
    }
    # END generated role-bootstrap-code-source
    # BEGIN generated role-bootstrap-api-route by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)
    precondition {
      condition     = var.subnets_have_egress || length([for k in ["secretsmanager"] : k if !contains(keys(local.vpc_endpoints), k)]) == 0
      error_message = "no route from the role bootstrap function to Secrets Manager (secretsmanager): the subnets have no egress (subnets_have_egress) and vpc_endpoints names no VPC endpoint of it; pass the VPC's endpoints in vpc_endpoints (secretsmanager), or subnets with a route to a NAT gateway or an internet gateway"
    }
    # END generated role-bootstrap-api-route
  }
}

# --- The function, and its run at apply time ------------------------------------------------------

module "function" {
  source = "../internal/handler-function"

  function_name = var.function_name
  description   = "aurora-proxy-kit database role bootstrap"
  code = {
    filename          = var.filename
    s3_bucket         = var.s3_bucket
    s3_key            = var.s3_key
    s3_object_version = var.s3_object_version
    source_code_hash  = var.source_code_hash
  }
  memory_size = 256
  timeout     = 120
  environment = {
    variables = {
      DB_HOST              = var.cluster_endpoint
      DB_PORT              = tostring(local.postgres_port)
      DB_MASTER_SECRET_ARN = var.master_user_secret_arn
      # Node.js 20+ Lambda runtimes load the RDS certificate authorities only when asked (docs/AWS-RULES.md, lambda-node-rds-ca-bundle).
      NODE_EXTRA_CA_CERTS = "/var/runtime/ca-cert.pem"
    }
  }
  vpc = {
    vpc_id                     = var.vpc_id
    subnet_ids                 = var.subnet_ids
    security_group_description = "Database role bootstrap ${var.function_name}: egress only to the cluster and Secrets Manager"
  }
  role   = { name_prefix = "${substr(var.function_name, 0, 37)}-" }
  policy = { name = "tracing-and-master-secret", json = data.aws_iam_policy_document.function.json }

  log_retention_days = var.log_retention_days
  # Kept after terraform destroy, as the CDK construct retains its log group.
  log_group_skip_destroy = true
  create_kms_key         = false
  kms_key_arn            = var.kms_key_arn
  tags                   = var.tags
}

# Runs the bootstrap once the function, its paths and the cluster's instances exist (cluster_identifier
# is known only then), and again whenever the roles or the cluster change.
resource "aws_lambda_invocation" "this" {
  function_name = module.function.function.function_name
  input         = jsonencode({ database = var.database_name, roles = [for r in var.roles : merge({ name = r.name, access = r.access }, r.password_secret_arn == null ? {} : { passwordSecretArn = r.password_secret_arn })] })
  # The roles as name:access, known at plan where the input is not (its secret ARNs exist only after apply),
  # so a plan shows which roles a change makes.
  triggers = { cluster_identifier = var.cluster_identifier, roles = join(",", [for r in var.roles : "${r.name}:${r.access}"]) }

  # And what the caller names (invocation_depends_on): the endpoint the function reads the secrets through.
  depends_on = [aws_vpc_security_group_egress_rule.to_cluster, aws_vpc_security_group_ingress_rule.cluster_from_function, aws_vpc_security_group_egress_rule.to_secrets_manager, var.invocation_depends_on]
}
