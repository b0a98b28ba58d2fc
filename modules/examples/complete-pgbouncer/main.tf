# The reference deployment with the PgBouncer engine: a data VPC holding the Optimized Reads cluster
# and a PgBouncer fleet behind an internal Network Load Balancer, and a consumer VPC reaching the
# fleet through PrivateLink (a read-only and a read/write interface endpoint). Neither VPC has
# internet access or NAT: the hosts install PgBouncer from an S3 object through the S3 gateway
# endpoint and reach Secrets Manager and Session Manager through interface endpoints.
# One dashboard charts the instances and the fleet, with alarms to an encrypted topic.

data "aws_availability_zones" "available" {
  state = "available"
}

data "aws_region" "current" {}

data "aws_partition" "current" {}

locals {
  # The release's zips (make lambda-zip builds them in a checkout).
  lambda_dir = var.lambda_dir != null ? var.lambda_dir : "${path.module}/../../../dist/lambda"
  azs        = slice(data.aws_availability_zones.available.names, 0, 2)
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
  # Session Manager's three services (shell access without SSH), through interface endpoints in the data VPC
  # with the default policy, as in the reference app; Secrets Manager and CloudWatch have endpoints of their own below.
  session_manager_services = toset(["ssm", "ssmmessages", "ec2messages"])
  # The S3 objects the hosts read through the data VPC's gateway endpoint: the packages object. AWS's SSM
  # agent package, when the hosts install it, goes into that same object; another object (or key prefix,
  # "prefix/*") the hosts read would be another entry.
  host_objects = [{ bucket = var.packages_bucket, key = var.packages_key }]
  # Each consumer logs in as a role of its own with its secret's password (the secret is made by the fleet).
  db_users = { reader = "app_reader", writer = "app_writer" }
  # The consumers: their function, handler zip, user and endpoint.
  consumers = {
    reader = { function_name = "${var.name}-reader", zip = "read-handler.zip", endpoint = "${var.name}-ro" }
    writer = { function_name = "${var.name}-writer", zip = "write-handler.zip", endpoint = "${var.name}-rw" }
  }
}

# --- Two isolated VPCs --------------------------------------------------------------------------------

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

# --- The data VPC's endpoints: S3 for the packages, the services the hosts call ----------------------
# Each endpoint's policy passes only its callers' requests, as the reference app's do: an endpoint policy
# limits what any principal may do through the endpoint, whatever its IAM policies allow
# (https://docs.aws.amazon.com/vpc/latest/privatelink/vpc-endpoints-access.html).

resource "aws_vpc_endpoint" "s3" {
  vpc_id            = aws_vpc.this["data"].id
  service_name      = "com.amazonaws.${data.aws_region.current.region}.s3"
  vpc_endpoint_type = "Gateway"
  route_table_ids   = [for i, _ in local.azs : aws_route_table.isolated["data-${i}"].id]
  policy            = data.aws_iam_policy_document.s3_endpoint.json
  tags              = { Name = "${var.name}-s3" }
}

# The hosts' GetObject of the packages object is all the data VPC does with S3 (the hosts install from it,
# not from Debian's archive): the gateway passes that and nothing else, so nothing in the VPC reaches any
# other bucket, whatever credentials it holds. A gateway endpoint's policy has Principal "*" and names its
# principals with aws:PrincipalArn
# (https://docs.aws.amazon.com/vpc/latest/privatelink/vpc-endpoints-access.html#vpc-endpoint-policies-gateway,
# https://docs.aws.amazon.com/vpc/latest/privatelink/vpc-endpoints-s3.html); principals type "*" renders
# Principal "*" (hashicorp/terraform-provider-aws website/docs/d/iam_policy_document.html.markdown).
data "aws_iam_policy_document" "s3_endpoint" {
  statement {
    sid       = "HostsReadTheirPackages"
    actions   = ["s3:GetObject"]
    resources = [for o in local.host_objects : "arn:${data.aws_partition.current.partition}:s3:::${o.bucket}/${o.key}"]
    principals {
      type        = "*"
      identifiers = ["*"]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:PrincipalArn"
      values   = [module.pooler.host_role_arn]
    }
  }
}

# One security group for the interface endpoints: HTTPS from the hosts (and, below, the role bootstrap).
resource "aws_security_group" "host_services" {
  name_prefix = "${var.name}-host-services-"
  description = "Interface endpoints the PgBouncer hosts call over HTTPS"
  vpc_id      = aws_vpc.this["data"].id
}

resource "aws_vpc_security_group_ingress_rule" "host_services" {
  security_group_id            = aws_security_group.host_services.id
  referenced_security_group_id = module.pooler.host_security_group_id
  ip_protocol                  = "tcp"
  from_port                    = 443
  to_port                      = 443
  description                  = "HTTPS from the PgBouncer hosts"
}

resource "aws_vpc_endpoint" "host_services" {
  for_each = local.session_manager_services

  vpc_id              = aws_vpc.this["data"].id
  service_name        = "com.amazonaws.${data.aws_region.current.region}.${each.key}"
  vpc_endpoint_type   = "Interface"
  subnet_ids          = local.subnet_ids.data
  security_group_ids  = [aws_security_group.host_services.id]
  private_dns_enabled = true
  tags                = { Name = "${var.name}-${each.key}" }
}

# Secrets Manager: the role bootstrap reads the master secret and derives the roles' verifiers from their
# secrets; the hosts read theirs (the auth file's passwords, the listeners' certificate) at boot and every
# 5 minutes. Nothing else passes.
resource "aws_vpc_endpoint" "secrets_manager" {
  vpc_id              = aws_vpc.this["data"].id
  service_name        = "com.amazonaws.${data.aws_region.current.region}.secretsmanager"
  vpc_endpoint_type   = "Interface"
  subnet_ids          = local.subnet_ids.data
  security_group_ids  = [aws_security_group.host_services.id]
  private_dns_enabled = true
  policy              = data.aws_iam_policy_document.secrets_manager_endpoint.json
  tags                = { Name = "${var.name}-secretsmanager" }
}

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
  # The secrets of the roles module.database_roles makes: the consumers' and the read-only server role's.
  statement {
    sid       = "RoleBootstrapReadsTheRolesSecrets"
    actions   = ["secretsmanager:GetSecretValue"]
    resources = concat([module.pooler.read_only_server_secret_arn], values(module.pooler.consumer_secret_arns))
    principals {
      type        = "AWS"
      identifiers = [module.database_roles.role_arn]
    }
  }
  statement {
    sid       = "HostsReadTheirSecrets"
    actions   = ["secretsmanager:GetSecretValue"]
    resources = concat([module.pooler.read_only_server_secret_arn, module.pooler.tls_secret_arn], values(module.pooler.consumer_secret_arns))
    principals {
      type        = "AWS"
      identifiers = [module.pooler.host_role_arn]
    }
  }
}

# CloudWatch: the hosts' metrics exporter publishes in the engine's namespace only.
resource "aws_vpc_endpoint" "monitoring" {
  vpc_id              = aws_vpc.this["data"].id
  service_name        = "com.amazonaws.${data.aws_region.current.region}.monitoring"
  vpc_endpoint_type   = "Interface"
  subnet_ids          = local.subnet_ids.data
  security_group_ids  = [aws_security_group.host_services.id]
  private_dns_enabled = true
  policy              = data.aws_iam_policy_document.monitoring_endpoint.json
  tags                = { Name = "${var.name}-monitoring" }
}

data "aws_iam_policy_document" "monitoring_endpoint" {
  statement {
    sid       = "HostsPublishTheirMetrics"
    actions   = ["cloudwatch:PutMetricData"]
    resources = ["*"]
    principals {
      type        = "AWS"
      identifiers = [module.pooler.host_role_arn]
    }
    condition {
      test     = "StringEquals"
      variable = "cloudwatch:namespace"
      values   = [module.pooler.metrics_namespace]
    }
  }
}

# --- The cluster and the fleet ---------------------------------------------------------------------

module "database" {
  source = "../../aurora-optimized-reads"

  cluster_identifier  = var.name
  vpc_id              = aws_vpc.this["data"].id
  subnet_ids          = local.subnet_ids.data
  readers             = var.readers
  deletion_protection = var.deletion_protection
  skip_final_snapshot = !var.deletion_protection
}

module "pooler" {
  source = "../../pgbouncer-proxy"

  name                      = var.name
  vpc_id                    = aws_vpc.this["data"].id
  subnet_ids                = local.subnet_ids.data
  cluster_security_group_id = module.database.security_group_id
  cluster_endpoint          = module.database.writer_endpoint
  reader_endpoints          = module.database.reader_instance_endpoints
  writer_instance_endpoint  = module.database.writer_instance_endpoint
  server_port               = module.database.port
  database_name             = module.database.database_name
  max_connections           = module.database.max_connections
  image_id                  = var.pooler_image_id
  packages_bucket           = var.packages_bucket
  packages_key              = var.packages_key
  # HTTPS from the hosts to the data VPC's interface endpoints and S3's gateway endpoint only (its prefix list,
  # known once the endpoint exists: the module's rules are keyed by the CIDR block, known at plan).
  vpc_cidr_block    = aws_vpc.this["data"].cidr_block
  s3_prefix_list_id = aws_vpc_endpoint.s3.prefix_list_id
  # The endpoints above the hosts call AWS through (the data VPC has no NAT): the plan fails naming any missing.
  vpc_endpoints = merge(
    { s3 = aws_vpc_endpoint.s3.id, secretsmanager = aws_security_group.host_services.id, monitoring = aws_security_group.host_services.id },
    { for service in local.session_manager_services : service => aws_security_group.host_services.id },
  )
  # The listeners' certificate from the module's own CA, for the endpoint service's names.
  certificate_function = { filename = "${local.lambda_dir}/pooler-certificate.zip" }
  hosts                = var.hosts
  instance_type        = var.instance_type
  consumer_users       = values(local.db_users)
  endpoints = {
    "${var.name}-ro" = { vpc_id = aws_vpc.this["consumer"].id, subnet_ids = local.subnet_ids.consumer, role = "READ_ONLY" }
    "${var.name}-rw" = { vpc_id = aws_vpc.this["consumer"].id, subnet_ids = local.subnet_ids.consumer, role = "READ_WRITE" }
  }
  # The hosts start once the role bootstrap has run: their read-only listener logs in as a role it makes
  # (its roles output is known once it has run). An input of the module rather than depends_on on this
  # call: that would be a cycle (the bootstrap takes this module's secrets), and depends_on on a module
  # leaves more of its values unknown at plan (https://developer.hashicorp.com/terraform/language/meta-arguments/depends_on).
  hosts_depend_on = keys(module.database_roles.roles)
}

# --- The consumers' roles: verifiers derived from their secrets, and the read-only server role ---------

module "database_roles" {
  source = "../../database-role-bootstrap"

  function_name = "${var.name}-database-roles"
  filename      = "${local.lambda_dir}/role-bootstrap.zip"
  roles = concat(
    [for k, c in local.consumers : { name = local.db_users[k], access = module.pooler.endpoints[c.endpoint].target_role, password_secret_arn = module.pooler.consumer_secret_arns[local.db_users[k]] }],
    [{ name = module.pooler.read_only_server_user, access = "READ_ONLY", password_secret_arn = module.pooler.read_only_server_secret_arn }],
  )
  cluster_identifier        = module.database.cluster_identifier
  cluster_endpoint          = module.database.writer_endpoint
  cluster_security_group_id = module.database.security_group_id
  database_name             = module.database.database_name
  master_user_secret_arn    = module.database.master_user_secret_arn
  secret_kms_key_arn        = module.database.kms_key_arn
  vpc_id                    = aws_vpc.this["data"].id
  subnet_ids                = local.subnet_ids.data
  vpc_endpoints             = { secretsmanager = aws_security_group.host_services.id }
  # The invocation reads the secrets through the endpoint: it waits for it (its policy names the module's role).
  invocation_depends_on = [aws_vpc_endpoint.secrets_manager.id]
  kms_key_arn           = aws_kms_key.logs.arn
}

# --- The consumers in the consumer VPC: each logs in with its secret through its endpoint -------------

module "consumer" {
  source   = "../../lambda-consumer"
  for_each = local.consumers

  function_name       = each.value.function_name
  filename            = "${local.lambda_dir}/${each.value.zip}"
  vpc_id              = aws_vpc.this["consumer"].id
  subnet_ids          = local.subnet_ids.consumer
  endpoint            = module.pooler.endpoints[each.value.endpoint]
  auth                = "secret"
  password_secret_arn = module.pooler.consumer_secret_arns[local.db_users[each.key]]
  vpc_endpoints       = { secretsmanager = aws_security_group.consumer_secrets.id }
  db_user             = local.db_users[each.key]
  database_name       = module.database.database_name

  depends_on = [module.database_roles]
}

# The consumer VPC's Secrets Manager endpoint: HTTPS from the consumers only, and through it each
# consumer's read of its own secret only.
resource "aws_security_group" "consumer_secrets" {
  name_prefix = "${var.name}-consumer-secrets-"
  description = "Secrets Manager interface endpoint of the consumer VPC: HTTPS from the consumers only"
  vpc_id      = aws_vpc.this["consumer"].id
}

resource "aws_vpc_security_group_ingress_rule" "consumer_secrets" {
  for_each = local.consumers

  security_group_id            = aws_security_group.consumer_secrets.id
  referenced_security_group_id = module.consumer[each.key].security_group_id
  ip_protocol                  = "tcp"
  from_port                    = 443
  to_port                      = 443
  description                  = "${each.value.function_name} reads its password secret"
}

resource "aws_vpc_endpoint" "consumer_secrets" {
  vpc_id              = aws_vpc.this["consumer"].id
  service_name        = "com.amazonaws.${data.aws_region.current.region}.secretsmanager"
  vpc_endpoint_type   = "Interface"
  private_dns_enabled = true
  subnet_ids          = local.subnet_ids.consumer
  security_group_ids  = [aws_security_group.consumer_secrets.id]
  policy              = data.aws_iam_policy_document.consumer_secrets.json
  tags                = { Name = "${var.name}-consumer-secretsmanager" }
}

# A statement per consumer of local.consumers, written out (not a dynamic block) so that the plan shows
# each statement's references.
data "aws_iam_policy_document" "consumer_secrets" {
  statement {
    sid       = "ReaderReadsItsSecret"
    actions   = ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"]
    resources = [module.pooler.consumer_secret_arns[local.db_users.reader]]
    principals {
      type        = "AWS"
      identifiers = [module.consumer["reader"].role_arn]
    }
  }
  statement {
    sid       = "WriterReadsItsSecret"
    actions   = ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"]
    resources = [module.pooler.consumer_secret_arns[local.db_users.writer]]
    principals {
      type        = "AWS"
      identifiers = [module.consumer["writer"].role_arn]
    }
  }
}

# The role bootstrap reaches the data VPC's Secrets Manager endpoint as the hosts do.
resource "aws_vpc_security_group_ingress_rule" "host_services_from_role_bootstrap" {
  security_group_id            = aws_security_group.host_services.id
  referenced_security_group_id = module.database_roles.security_group_id
  ip_protocol                  = "tcp"
  from_port                    = 443
  to_port                      = 443
  description                  = "HTTPS from the role bootstrap (the secrets)"
}

# The consumers' and the role bootstrap's logs and environments.
module "log_key_policy" {
  source = "../../internal/logs-kms-policy"

  log_group_names = concat([for c in values(local.consumers) : "/aws/lambda/${c.function_name}"], ["/aws/lambda/${var.name}-database-roles"])
}

resource "aws_kms_key" "logs" {
  description             = "Encrypts the logs and function environments of the aurora-proxy-kit PgBouncer reference deployment"
  enable_key_rotation     = true
  deletion_window_in_days = 30
  policy                  = module.log_key_policy.json
}

# --- The dashboard: the cluster's instances and the fleet (its hosts' metrics and its load balancer's) --

module "dashboard" {
  source = "../../dashboard"

  dashboard_name                      = var.name
  instance_identifiers                = module.database.instance_identifiers
  functions                           = { Reader = module.consumer["reader"].function_name, Writer = module.consumer["writer"].function_name }
  pgbouncer_fleet_name                = module.pooler.fleet_name
  pgbouncer_targets                   = module.pooler.metric_targets
  pgbouncer_load_balancer_arn_suffix  = module.pooler.load_balancer_arn_suffix
  pgbouncer_target_group_arn_suffixes = module.pooler.target_group_arn_suffixes
  pgbouncer_hosts                     = module.pooler.hosts
}
