# The reference deployment, as the CDK app bin/app.ts builds it: a data VPC holding the Optimized Reads
# cluster and its RDS Proxy, and a separate consumer VPC holding a read-only and a read/write proxy
# endpoint and one Lambda consumer behind each, plus the dashboard and alarms. Neither VPC has internet
# access or NAT: nothing in the data path needs it.

data "aws_availability_zones" "available" {
  state = "available"
}

data "aws_region" "current" {}

locals {
  # Two Availability Zones, as the environment-agnostic CDK stack uses.
  azs        = slice(data.aws_availability_zones.available.names, 0, 2)
  lambda_dir = var.lambda_dir != null ? var.lambda_dir : "${path.module}/../../../dist/lambda"
  # Each function's code: the release's zip on disk, or the S3 object it was uploaded to.
  lambda_code = {
    for zip in ["read-handler.zip", "write-handler.zip", "role-bootstrap.zip"] : zip => {
      filename         = var.lambda_s3 == null ? "${local.lambda_dir}/${zip}" : null
      s3_bucket        = var.lambda_s3 == null ? null : var.lambda_s3.bucket
      s3_key           = var.lambda_s3 == null ? null : "${var.lambda_s3.key_prefix}${zip}"
      source_code_hash = var.lambda_s3 == null ? null : lookup(var.lambda_s3.source_code_hashes, zip, null)
    }
  }
  vpcs = {
    data     = "10.10.0.0/16"
    consumer = "10.20.0.0/16"
  }
  subnets = merge([
    for vpc, cidr in local.vpcs : {
      for i, az in local.azs : "${vpc}-${i}" => { vpc = vpc, az = az, cidr = cidrsubnet(cidr, 6, i) }
    }
  ]...)
  subnet_ids = { for vpc in keys(local.vpcs) : vpc => [for i, _ in local.azs : aws_subnet.isolated["${vpc}-${i}"].id] }

  function_names = { reader = "${var.name}-reader", writer = "${var.name}-writer", roles = "${var.name}-database-roles" }
  # Each consumer logs in as a role of its own, never as the master user (made by module.database_roles).
  db_users         = { reader = "app_reader", writer = "app_writer" }
  flow_logs_prefix = "/aurora-proxy-kit/${var.name}/"

  endpoints = merge(
    { "${var.name}-ro" = { vpc_id = aws_vpc.this["consumer"].id, subnet_ids = local.subnet_ids.consumer, target_role = "READ_ONLY" } },
    { "${var.name}-rw" = { vpc_id = aws_vpc.this["consumer"].id, subnet_ids = local.subnet_ids.consumer, target_role = "READ_WRITE" } },
    { for i in range(2, var.read_only_endpoints + 1) : "${var.name}-ro${i}" => { vpc_id = aws_vpc.this["consumer"].id, subnet_ids = local.subnet_ids.consumer, target_role = "READ_ONLY" } },
  )
}

# --- One key for the deployment's logs (flow logs, Lambda logs, Lambda environments) -----------------

# CloudWatch Logs may use it for the deployment's log groups only: the functions' and the flow logs.
module "log_key_policy" {
  source = "../../internal/logs-kms-policy"

  log_group_names = concat([for f in values(local.function_names) : "/aws/lambda/${f}"], ["${local.flow_logs_prefix}*"])
}

resource "aws_kms_key" "logs" {
  description             = "Encrypts the logs and function environments of the aurora-proxy-kit reference deployment"
  enable_key_rotation     = true
  deletion_window_in_days = 30
  policy                  = module.log_key_policy.json
}

# --- Two isolated VPCs with flow logs ----------------------------------------------------------------

resource "aws_vpc" "this" {
  for_each = local.vpcs

  cidr_block           = each.value
  enable_dns_support   = true
  enable_dns_hostnames = true
  tags                 = { Name = "${var.name}-${each.key}" }
}

resource "aws_subnet" "isolated" {
  for_each = local.subnets

  vpc_id            = aws_vpc.this[each.value.vpc].id
  availability_zone = each.value.az
  cidr_block        = each.value.cidr
  tags              = { Name = "${var.name}-${each.key}-isolated" }
}

resource "aws_route_table" "isolated" {
  for_each = local.subnets

  vpc_id = aws_vpc.this[each.value.vpc].id
  tags   = { Name = "${var.name}-${each.key}-isolated" }
}

resource "aws_route_table_association" "isolated" {
  for_each = local.subnets

  subnet_id      = aws_subnet.isolated[each.key].id
  route_table_id = aws_route_table.isolated[each.key].id
}

resource "aws_cloudwatch_log_group" "flow_logs" {
  for_each = local.vpcs

  name_prefix       = "${local.flow_logs_prefix}${each.key}-vpc-flow-logs-"
  retention_in_days = 30
  kms_key_id        = aws_kms_key.logs.arn
  # Kept after terraform destroy, as the CDK app retains its log groups.
  skip_destroy = true
}

data "aws_iam_policy_document" "flow_logs_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["vpc-flow-logs.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "flow_logs" {
  for_each = local.vpcs

  name_prefix        = "${var.name}-${each.key}-flow-"
  assume_role_policy = data.aws_iam_policy_document.flow_logs_assume.json
}

data "aws_iam_policy_document" "flow_logs" {
  for_each = local.vpcs

  statement {
    actions   = ["logs:CreateLogStream", "logs:DescribeLogStreams", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.flow_logs[each.key].arn}:*"]
  }
}

resource "aws_iam_role_policy" "flow_logs" {
  for_each = local.vpcs

  name   = "write-flow-logs"
  role   = aws_iam_role.flow_logs[each.key].id
  policy = data.aws_iam_policy_document.flow_logs[each.key].json
}

resource "aws_flow_log" "this" {
  for_each = local.vpcs

  vpc_id          = aws_vpc.this[each.key].id
  traffic_type    = "ALL"
  log_destination = aws_cloudwatch_log_group.flow_logs[each.key].arn
  iam_role_arn    = aws_iam_role.flow_logs[each.key].arn
}

# The role bootstrap reads the master secret from Secrets Manager; the data VPC reaches it privately.
# The endpoint answers HTTPS from the bootstrap function only and opens no connection itself (no egress
# rule: Terraform removes the allow-all rule AWS adds to a new group). RDS Proxy reads no secret
# (end-to-end IAM authentication).
resource "aws_security_group" "secrets_manager" {
  name_prefix = "${var.name}-secretsmanager-"
  description = "Secrets Manager interface endpoint of the data VPC: HTTPS from the role bootstrap only"
  vpc_id      = aws_vpc.this["data"].id
}

resource "aws_vpc_security_group_ingress_rule" "secrets_manager_from_role_bootstrap" {
  security_group_id            = aws_security_group.secrets_manager.id
  referenced_security_group_id = module.database_roles.security_group_id
  ip_protocol                  = "tcp"
  from_port                    = 443
  to_port                      = 443
  description                  = "Role bootstrap reads the master secret"
}

resource "aws_vpc_endpoint" "secrets_manager" {
  vpc_id              = aws_vpc.this["data"].id
  service_name        = "com.amazonaws.${data.aws_region.current.region}.secretsmanager"
  vpc_endpoint_type   = "Interface"
  private_dns_enabled = true
  subnet_ids          = local.subnet_ids.data
  security_group_ids  = [aws_security_group.secrets_manager.id]
  policy              = data.aws_iam_policy_document.secrets_manager_endpoint.json
}

# Through the endpoint, only the role bootstrap's reads of the master secret pass.
data "aws_iam_policy_document" "secrets_manager_endpoint" {
  statement {
    sid       = "RoleBootstrapReadsTheMasterSecret"
    actions   = ["secretsmanager:DescribeSecret", "secretsmanager:GetSecretValue"]
    resources = [module.database.master_user_secret_arn]
    principals {
      type        = "AWS"
      identifiers = [module.database_roles.role_arn]
    }
  }
}

# --- The four modules ----------------------------------------------------------------------------

module "database" {
  source = "../../aurora-optimized-reads"

  cluster_identifier  = var.name
  vpc_id              = aws_vpc.this["data"].id
  subnet_ids          = local.subnet_ids.data
  instance_class      = var.instance_class
  readers             = var.readers
  engine_version      = var.engine_version
  deletion_protection = var.deletion_protection
  skip_final_snapshot = !var.deletion_protection
}

module "proxy" {
  source = "../../rds-proxy"

  name                      = var.name
  cluster_identifier        = module.database.cluster_identifier
  readers                   = length(module.database.reader_instance_identifiers)
  cluster_security_group_id = module.database.security_group_id
  cluster_resource_id       = module.database.cluster_resource_id
  database_users            = values(local.db_users)
  vpc_id                    = aws_vpc.this["data"].id
  subnet_ids                = local.subnet_ids.data
  max_connections           = module.database.max_connections
  max_connections_percent   = var.max_connections_percent
  endpoints                 = local.endpoints
}

module "database_roles" {
  source = "../../database-role-bootstrap"

  function_name             = local.function_names.roles
  filename                  = local.lambda_code["role-bootstrap.zip"].filename
  s3_bucket                 = local.lambda_code["role-bootstrap.zip"].s3_bucket
  s3_key                    = local.lambda_code["role-bootstrap.zip"].s3_key
  source_code_hash          = local.lambda_code["role-bootstrap.zip"].source_code_hash
  roles                     = [{ name = local.db_users.reader, access = "READ_ONLY" }, { name = local.db_users.writer, access = "READ_WRITE" }]
  cluster_identifier        = module.database.cluster_identifier
  cluster_endpoint          = module.database.writer_endpoint
  cluster_security_group_id = module.database.security_group_id
  database_name             = module.database.database_name
  master_user_secret_arn    = module.database.master_user_secret_arn
  secret_kms_key_arn        = module.database.kms_key_arn
  vpc_id                    = aws_vpc.this["data"].id
  subnet_ids                = local.subnet_ids.data
  vpc_endpoints             = { secretsmanager = aws_security_group.secrets_manager.id }
  # The invocation reads the secrets through the endpoint: it waits for it (its policy names the module's role).
  invocation_depends_on = [aws_vpc_endpoint.secrets_manager.id]
  kms_key_arn           = aws_kms_key.logs.arn
}

module "reader" {
  source = "../../lambda-consumer"

  function_name      = local.function_names.reader
  filename           = local.lambda_code["read-handler.zip"].filename
  s3_bucket          = local.lambda_code["read-handler.zip"].s3_bucket
  s3_key             = local.lambda_code["read-handler.zip"].s3_key
  source_code_hash   = local.lambda_code["read-handler.zip"].source_code_hash
  vpc_id             = aws_vpc.this["consumer"].id
  subnet_ids         = local.subnet_ids.consumer
  endpoint           = module.proxy.endpoints["${var.name}-ro"]
  connect_arn_prefix = module.proxy.connect_arn_prefix
  db_user            = local.db_users.reader
  database_name      = module.database.database_name
  create_kms_key     = false
  kms_key_arn        = aws_kms_key.logs.arn

  depends_on = [module.database_roles]
}

module "writer" {
  source = "../../lambda-consumer"

  function_name      = local.function_names.writer
  filename           = local.lambda_code["write-handler.zip"].filename
  s3_bucket          = local.lambda_code["write-handler.zip"].s3_bucket
  s3_key             = local.lambda_code["write-handler.zip"].s3_key
  source_code_hash   = local.lambda_code["write-handler.zip"].source_code_hash
  vpc_id             = aws_vpc.this["consumer"].id
  subnet_ids         = local.subnet_ids.consumer
  endpoint           = module.proxy.endpoints["${var.name}-rw"]
  connect_arn_prefix = module.proxy.connect_arn_prefix
  db_user            = local.db_users.writer
  database_name      = module.database.database_name
  create_kms_key     = false
  kms_key_arn        = aws_kms_key.logs.arn

  depends_on = [module.database_roles]
}

module "dashboard" {
  source = "../../dashboard"

  dashboard_name       = var.name
  instance_identifiers = module.database.instance_identifiers
  proxy_name           = module.proxy.proxy_name
  proxy_endpoints      = { for name, e in local.endpoints : name => e.target_role }
  functions            = { Reader = module.reader.function_name, Writer = module.writer.function_name }
}
