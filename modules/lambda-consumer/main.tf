locals {
  # The Secrets Manager endpoint's security group, from either input; the route rule reads local.vpc_endpoints.
  secrets_manager_security_group_id = lookup(var.vpc_endpoints, "secretsmanager", var.secrets_manager_security_group_id)
  vpc_endpoints                     = merge(var.secrets_manager_security_group_id == null ? {} : { secretsmanager = var.secrets_manager_security_group_id }, var.vpc_endpoints)
  port                              = var.endpoint.port
}

# --- Network: egress only to its proxy endpoint (and Secrets Manager), and the endpoint admits it -----

resource "aws_vpc_security_group_egress_rule" "to_endpoint" {
  security_group_id            = module.function.security_group.id
  referenced_security_group_id = var.endpoint.security_group_id
  ip_protocol                  = "tcp"
  from_port                    = local.port
  to_port                      = local.port
  description                  = "to its proxy endpoint"
}

resource "aws_vpc_security_group_ingress_rule" "endpoint_from_function" {
  security_group_id            = var.endpoint.security_group_id
  referenced_security_group_id = module.function.security_group.id
  ip_protocol                  = "tcp"
  from_port                    = local.port
  to_port                      = local.port
  description                  = "${var.endpoint.target_role} clients"
}

# A consumer of the PgBouncer engine reads its password secret: HTTPS to the VPC's Secrets Manager
# endpoint (whose group must admit this function's, output security_group_id), or to any address when
# the endpoint's security group is not given.
resource "aws_vpc_security_group_egress_rule" "to_secrets_manager" {
  count = var.auth == "secret" ? 1 : 0

  security_group_id            = module.function.security_group.id
  referenced_security_group_id = local.secrets_manager_security_group_id
  cidr_ipv4                    = local.secrets_manager_security_group_id == null ? "0.0.0.0/0" : null
  ip_protocol                  = "tcp"
  from_port                    = 443
  to_port                      = 443
  description                  = "reads its password secret from Secrets Manager"
}

# --- IAM: tracing, and rds-db:connect as one user (or that user's secret); the role is the function's ---

data "aws_iam_policy_document" "function" {
  #checkov:skip=CKV_AWS_356:Active tracing needs xray:PutTraceSegments and xray:PutTelemetryRecords, which X-Ray supports only on Resource *; rds-db:connect (or the password secret) is scoped to the proxy and user
  statement {
    sid       = "Tracing"
    actions   = ["xray:PutTraceSegments", "xray:PutTelemetryRecords"]
    resources = ["*"]
  }
  dynamic "statement" {
    for_each = var.auth == "iam" && var.connect_arn_prefix != null ? [var.connect_arn_prefix] : []
    content {
      sid       = "ConnectThroughTheProxy"
      actions   = ["rds-db:connect"]
      resources = ["${statement.value}${var.db_user}"]
    }
  }
  dynamic "statement" {
    for_each = var.auth == "secret" && var.password_secret_arn != null ? [var.password_secret_arn] : []
    content {
      sid       = "ReadItsPasswordSecret"
      actions   = ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"]
      resources = [statement.value]
    }
  }

  # The module's rules that span variables, checked where the function's grants are decided.
  lifecycle {
    # BEGIN generated function-kms-key by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)
    precondition {
      condition     = var.create_kms_key || var.kms_key_arn != null
      error_message = "kms_key_arn is not set: pass kms_key_arn when create_kms_key is false"
    }
    # END generated function-kms-key
    # BEGIN generated function-code-source by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)
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
    # END generated function-code-source
    # BEGIN generated consumer-credential by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)
    precondition {
      condition     = !(var.auth == "secret") || var.password_secret_arn != null
      error_message = "password_secret_arn is not set: auth secret logs in with a password secret, so pass the pgbouncer-proxy module's consumer_secret_arns entry of db_user"
    }
    precondition {
      condition     = !(var.auth == "secret") || var.endpoint.tls_ca_certificate != null
      error_message = "endpoint.tls_ca_certificate is not set: a PgBouncer engine endpoint's consumers trust only the listeners' CA, so pass the pgbouncer-proxy module's endpoint, which carries it"
    }
    precondition {
      condition     = !(var.auth == "secret") || var.connect_arn_prefix == null
      error_message = "connect_arn_prefix is set with auth secret: a consumer logs in one way, so unset connect_arn_prefix"
    }
    precondition {
      condition     = var.auth == "secret" || var.connect_arn_prefix != null
      error_message = "connect_arn_prefix is not set: auth iam logs in with an IAM token through RDS Proxy, so pass the rds-proxy module's connect_arn_prefix"
    }
    precondition {
      condition     = var.auth == "secret" || var.password_secret_arn == null
      error_message = "password_secret_arn is set with auth iam: a consumer logs in one way, so set auth to secret for a PgBouncer engine endpoint, or unset password_secret_arn"
    }
    # END generated consumer-credential
    # BEGIN generated consumer-api-route by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)
    precondition {
      condition     = !(var.auth == "secret") || var.subnets_have_egress || length([for k in ["secretsmanager"] : k if !contains(keys(local.vpc_endpoints), k)]) == 0
      error_message = "no route from the consumer function (it reads its password secret) to Secrets Manager (secretsmanager): the subnets have no egress (subnets_have_egress) and vpc_endpoints names no VPC endpoint of it; pass the VPC's endpoints in vpc_endpoints (secretsmanager), or subnets with a route to a NAT gateway or an internet gateway"
    }
    # END generated consumer-api-route
  }
}

# --- The function --------------------------------------------------------------------------------

module "function" {
  source = "../internal/handler-function"

  function_name = var.function_name
  description   = "aurora-proxy-kit ${var.endpoint.target_role} consumer"
  code = {
    filename          = var.filename
    s3_bucket         = var.s3_bucket
    s3_key            = var.s3_key
    s3_object_version = var.s3_object_version
    source_code_hash  = var.source_code_hash
  }
  handler                        = var.handler
  memory_size                    = var.memory_size
  timeout                        = var.timeout
  reserved_concurrent_executions = var.reserved_concurrent_executions == null ? -1 : var.reserved_concurrent_executions
  environment = {
    # BEGIN generated consumer-environment by bin/generate-terraform.ts from lambda/src/environment.ts; edit there (make terraform-generate)
    variables = merge(
      {
        DB_HOST                 = var.endpoint.endpoint
        DB_PORT                 = tostring(var.endpoint.port)
        DB_NAME                 = var.database_name
        DB_USER                 = var.db_user
        DB_AUTH                 = var.auth == "secret" ? "secret" : "iam"
        DB_TLS                  = var.auth == "secret" ? "verify-full" : (var.endpoint.is_proxy_default_endpoint ? "verify-full" : "verify-proxy-domain")
        DB_ENDPOINT_ROLE        = var.endpoint.target_role
        CONNECTION_MODE         = var.connection_mode
        POWERTOOLS_SERVICE_NAME = "aurora-proxy-kit"
      },
      var.auth == "secret" ? tomap({ DB_SECRET_ARN = var.password_secret_arn, DB_TLS_CA = var.endpoint.tls_ca_certificate }) : (var.endpoint.is_proxy_default_endpoint ? tomap({}) : tomap({ DB_TLS_SERVER_NAME = var.endpoint.proxy_default_endpoint })),
    )
    # END generated consumer-environment
  }
  vpc = {
    vpc_id                     = var.vpc_id
    subnet_ids                 = var.subnet_ids
    security_group_description = "Lambda consumer ${var.function_name}: egress only to its proxy endpoint${var.auth == "secret" ? " and Secrets Manager" : ""}"
  }
  role   = { name_prefix = "${substr(var.function_name, 0, 37)}-" }
  policy = { name = "tracing-and-database-connect", json = data.aws_iam_policy_document.function.json }

  log_retention_days     = var.log_retention_days
  log_group_skip_destroy = var.log_group_skip_destroy
  create_kms_key         = var.create_kms_key
  kms_key_arn            = var.kms_key_arn
  tags                   = var.tags
}
