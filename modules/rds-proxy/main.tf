data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}
data "aws_region" "current" {}

locals {
  postgres_port = 5432
  # One ingress rule per (endpoint, allowed group); keys use the list index so they are known at plan.
  endpoint_ingress = merge([
    for name, e in var.endpoints : {
      for i, sg in e.allowed_security_group_ids : "${name}/${i}" => { endpoint = name, source = sg }
    }
  ]...)
  # What the proxy is given (proxyPoolSettings of lib/model/sizing.ts): RDS Proxy's budget is a share of
  # max_connections alone, so MaxConnectionsPercent is kept to the share that leaves the reserved
  # connections (catalog.tf); without max_connections, to the share that leaves them on every catalog class.
  percent_leaving_reserve      = var.max_connections == null ? local.catalog_max_connections_percent : max(0, floor(max(0, var.max_connections - local.reserved_connections) * 100 / var.max_connections))
  max_connections_percent      = max(1, min(var.max_connections_percent, local.percent_leaving_reserve))
  max_idle_connections_percent = min(var.max_idle_connections_percent, local.max_connections_percent)
}

# --- Network: the proxy reaches the cluster, nothing else ------------------------------------------

resource "aws_security_group" "proxy" {
  #checkov:skip=CKV2_AWS_5:Attached to aws_db_proxy.this (vpc_security_group_ids), a resource type checkov's attachment graph does not know
  name_prefix = "${var.name}-"
  description = "RDS Proxy ${var.name}: clients of the default endpoint"
  vpc_id      = var.vpc_id
  tags        = var.tags

  lifecycle {
    create_before_destroy = true
  }
}

resource "aws_vpc_security_group_egress_rule" "proxy_to_cluster" {
  security_group_id            = aws_security_group.proxy.id
  referenced_security_group_id = var.cluster_security_group_id
  ip_protocol                  = "tcp"
  from_port                    = local.postgres_port
  to_port                      = local.postgres_port
  description                  = "RDS Proxy to Aurora"
}

resource "aws_vpc_security_group_ingress_rule" "cluster_from_proxy" {
  security_group_id            = var.cluster_security_group_id
  referenced_security_group_id = aws_security_group.proxy.id
  ip_protocol                  = "tcp"
  from_port                    = local.postgres_port
  to_port                      = local.postgres_port
  description                  = "RDS Proxy to Aurora"
}

# --- IAM: end-to-end IAM authentication; the proxy logs in as the consumers' users, reads no secret --

data "aws_iam_policy_document" "assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["rds.amazonaws.com"]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [data.aws_caller_identity.current.account_id]
    }
  }
}

data "aws_iam_policy_document" "connect" {
  count = length(var.database_users) > 0 ? 1 : 0

  statement {
    sid       = "LogInAsTheConsumersUsers"
    actions   = ["rds-db:connect"]
    resources = [for user in var.database_users : "arn:${data.aws_partition.current.partition}:rds-db:${data.aws_region.current.region}:${data.aws_caller_identity.current.account_id}:dbuser:${var.cluster_resource_id}/${user}"]
  }
}

resource "aws_iam_role" "proxy" {
  # The provider caps name_prefix at 38 characters (64 less its 26-character unique suffix,
  # internal/service/iam/role.go): 31 of the name and "-proxy-".
  name_prefix        = "${substr(var.name, 0, 31)}-proxy-"
  assume_role_policy = data.aws_iam_policy_document.assume.json
  tags               = var.tags
}

resource "aws_iam_role_policy" "connect" {
  count = length(var.database_users) > 0 ? 1 : 0

  name   = "connect-as-database-users"
  role   = aws_iam_role.proxy.id
  policy = data.aws_iam_policy_document.connect[0].json
}

# --- The proxy ------------------------------------------------------------------------------------

resource "aws_db_proxy" "this" {
  name                   = var.name
  engine_family          = "POSTGRESQL"
  require_tls            = true
  idle_client_timeout    = var.idle_client_timeout_seconds
  debug_logging          = var.debug_logging
  role_arn               = aws_iam_role.proxy.arn
  vpc_subnet_ids         = var.subnet_ids
  vpc_security_group_ids = [aws_security_group.proxy.id]
  tags                   = var.tags

  # Clients log in with IAM tokens, and the proxy logs in to the cluster with IAM as the same user:
  # no secret is read (docs/AWS-RULES.md, proxy-end-to-end-iam-auth).
  default_auth_scheme = "IAM_AUTH"

  depends_on = [aws_iam_role_policy.connect]
}

resource "aws_db_proxy_default_target_group" "this" {
  db_proxy_name = aws_db_proxy.this.name

  connection_pool_config {
    max_connections_percent      = local.max_connections_percent
    max_idle_connections_percent = local.max_idle_connections_percent
    connection_borrow_timeout    = var.connection_borrow_timeout_seconds
    session_pinning_filters      = var.session_pinning_filters
  }

  lifecycle {
    # BEGIN generated idle-within-max by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)
    precondition {
      condition     = var.max_idle_connections_percent <= var.max_connections_percent
      error_message = "max_idle_connections_percent ${var.max_idle_connections_percent} exceeds max_connections_percent ${var.max_connections_percent}: set it to ${var.max_connections_percent} or less"
    }
    # END generated idle-within-max
  }
}

# Registering the cluster needs its instances to exist, and the provider retries RegisterDBProxyTargets
# for 5 minutes only, and only on InvalidDBInstanceStateFault "CREATING" (internal/service/rds/proxy_target.go),
# which Aurora instances outlast. cluster_identifier is therefore taken from the cluster module's output,
# which depends on every instance, so the target (and the endpoints after it) waits for them.
resource "aws_db_proxy_target" "cluster" {
  db_proxy_name         = aws_db_proxy.this.name
  target_group_name     = aws_db_proxy_default_target_group.this.name
  db_cluster_identifier = var.cluster_identifier
}

# --- Endpoints, in any VPC, each with its own security group ---------------------------------------

resource "aws_security_group" "endpoint" {
  #checkov:skip=CKV2_AWS_5:Attached to aws_db_proxy_endpoint.this (vpc_security_group_ids), a resource type checkov's attachment graph does not know
  for_each = var.endpoints

  name_prefix = "${each.key}-"
  description = "${each.value.target_role} proxy endpoint ${each.key}: ingress only from granted clients"
  vpc_id      = each.value.vpc_id
  tags        = var.tags

  lifecycle {
    create_before_destroy = true
  }
}

resource "aws_vpc_security_group_ingress_rule" "endpoint" {
  for_each = local.endpoint_ingress

  security_group_id            = aws_security_group.endpoint[each.value.endpoint].id
  referenced_security_group_id = each.value.source
  ip_protocol                  = "tcp"
  from_port                    = local.postgres_port
  to_port                      = local.postgres_port
  description                  = "${var.endpoints[each.value.endpoint].target_role} clients"
}

resource "aws_db_proxy_endpoint" "this" {
  for_each = var.endpoints

  db_proxy_name          = aws_db_proxy.this.name
  db_proxy_endpoint_name = each.key
  vpc_subnet_ids         = each.value.subnet_ids
  vpc_security_group_ids = [aws_security_group.endpoint[each.key].id]
  target_role            = each.value.target_role
  tags                   = var.tags

  lifecycle {
    # BEGIN generated read-only-endpoint-readers by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)
    precondition {
      condition     = each.value.target_role != "READ_ONLY" || var.readers > 0
      error_message = "readers 0 leaves a READ_ONLY endpoint (endpoints target_role) without a target: RDS Proxy refuses READ_ONLY endpoints for a cluster with only a writer; add a reader or use a READ_WRITE endpoint"
    }
    # END generated read-only-endpoint-readers
  }

  depends_on = [aws_db_proxy_target.cluster]
}
