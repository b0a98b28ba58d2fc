data "aws_partition" "current" {}

locals {
  # Lambda's default log group name, created here first, encrypted and with retention.
  log_group_name = "/aws/lambda/${var.function_name}"
  kms_key_arn    = var.create_kms_key ? aws_kms_key.this[0].arn : var.kms_key_arn
  in_vpc         = var.vpc != null
}

# --- Encryption and logs: the function's log group is the only one CloudWatch Logs may encrypt with the key ---

module "key_policy" {
  source = "../logs-kms-policy"
  count  = var.create_kms_key ? 1 : 0

  log_group_names = [local.log_group_name]
}

resource "aws_kms_key" "this" {
  count = var.create_kms_key ? 1 : 0

  description             = "Encrypts the environment and logs of ${var.function_name}"
  enable_key_rotation     = true
  deletion_window_in_days = 30
  policy                  = module.key_policy[0].json
  tags                    = var.tags
}

resource "aws_cloudwatch_log_group" "this" {
  #checkov:skip=CKV_AWS_338:Retention is the caller's (log_retention_days; a month by default in every kit module, like the CDK constructs): a year of function logs is a cost the user opts into
  name              = local.log_group_name
  retention_in_days = var.log_retention_days
  kms_key_id        = local.kms_key_arn
  skip_destroy      = var.log_group_skip_destroy
  tags              = var.tags
}

# --- Network: a security group without rules; the caller adds the egress its function needs ------

resource "aws_security_group" "this" {
  count = local.in_vpc ? 1 : 0

  name_prefix = "${var.function_name}-"
  description = var.vpc.security_group_description
  vpc_id      = var.vpc.vpc_id
  tags        = var.tags

  lifecycle {
    create_before_destroy = true
  }
}

# --- IAM: logs, VPC interfaces (in a VPC), and the caller's own policy ----------------------------

data "aws_iam_policy_document" "assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["lambda.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "this" {
  name_prefix        = var.role.name_prefix
  description        = var.role.description
  assume_role_policy = data.aws_iam_policy_document.assume.json
  tags               = var.tags
}

# AWS-maintained: writes the function's own logs; grants nothing on data.
resource "aws_iam_role_policy_attachment" "basic" {
  role       = aws_iam_role.this.name
  policy_arn = "arn:${data.aws_partition.current.partition}:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"
}

# AWS-maintained: the network interfaces of a VPC function; EC2 offers no resource-level scoping for these actions.
resource "aws_iam_role_policy_attachment" "vpc" {
  count = local.in_vpc ? 1 : 0

  role       = aws_iam_role.this.name
  policy_arn = "arn:${data.aws_partition.current.partition}:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole"
}

resource "aws_iam_role_policy" "this" {
  name   = var.policy.name
  role   = aws_iam_role.this.id
  policy = var.policy.json
}

# --- The function --------------------------------------------------------------------------------

resource "aws_lambda_function" "this" {
  #checkov:skip=CKV_AWS_116:The kit's functions are invoked synchronously (a consumer's request/response, aws_lambda_invocation at apply); a dead-letter queue only applies to asynchronous invocations
  #checkov:skip=CKV_AWS_115:Reserved concurrency is the caller's (reserved_concurrent_executions): a consumer opts into it, a function run once per apply would only take it from the account
  #checkov:skip=CKV_AWS_272:Code signing needs an AWS Signer profile the kit cannot assume; the zip is built reproducibly from lambda/ by the project's build
  #checkov:skip=CKV_AWS_117:The certificate function calls only Secrets Manager, through its public endpoint; in a VPC it would need a Secrets Manager interface endpoint and gain no isolation (the other callers pass vpc)
  #checkov:skip=CKV_AWS_173:The environment, where there is one, is encrypted with kms_key_arn; the certificate function has none
  function_name                  = var.function_name
  description                    = var.description
  filename                       = var.code.filename
  s3_bucket                      = var.code.s3_bucket
  s3_key                         = var.code.s3_key
  s3_object_version              = var.code.s3_object_version
  source_code_hash               = var.code.source_code_hash != null ? var.code.source_code_hash : (var.code.filename != null ? filebase64sha256(var.code.filename) : null)
  handler                        = var.handler
  runtime                        = "nodejs24.x"
  architectures                  = ["arm64"]
  memory_size                    = var.memory_size
  timeout                        = var.timeout
  reserved_concurrent_executions = var.reserved_concurrent_executions
  role                           = aws_iam_role.this.arn
  kms_key_arn                    = local.kms_key_arn
  tags                           = var.tags

  dynamic "vpc_config" {
    for_each = local.in_vpc ? [var.vpc] : []
    content {
      subnet_ids         = vpc_config.value.subnet_ids
      security_group_ids = [aws_security_group.this[0].id]
    }
  }

  tracing_config {
    mode = "Active"
  }

  logging_config {
    log_format = "Text"
    log_group  = aws_cloudwatch_log_group.this.name
  }

  dynamic "environment" {
    for_each = var.environment == null ? [] : [var.environment]
    content {
      variables = environment.value.variables
    }
  }

  # The role can write logs and reach the VPC before the function is created (Lambda checks the
  # latter at creation).
  depends_on = [
    aws_iam_role_policy_attachment.basic,
    aws_iam_role_policy_attachment.vpc,
    aws_iam_role_policy.this,
  ]
}
