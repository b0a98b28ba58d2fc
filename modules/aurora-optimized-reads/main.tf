data "aws_partition" "current" {}

locals {
  # The variable's validation admits only catalog classes; try() keeps a rejected value from adding a second error.
  spec         = try(local.instance_classes[var.instance_class], local.instance_classes["db.r6gd.xlarge"])
  engine_major = split(".", var.engine_version)[0]
  # The Optimized Reads floor of this family and major (null: every version of the major qualifies).
  version_floor       = lookup(local.version_floors[local.spec.family], local.engine_major, null)
  below_version_floor = local.version_floor != null && try(tonumber(split(".", var.engine_version)[1]) < tonumber(split(".", local.version_floor)[1]), false)
  # The model's engine-version rule, after the form and major checks of the variable: the floor first, then deprecation.
  engine_version_problem = (
    local.below_version_floor ? replace(local.below_floor_messages["${local.spec.family}/${local.engine_major}"], "@VALUE@", var.engine_version) :
    contains(local.deprecated_engine_versions, var.engine_version) ? local.deprecated_messages[var.engine_version] : null
  )

  kms_key_arn = var.create_kms_key ? aws_kms_key.this[0].arn : var.kms_key_arn
  # Where Aurora PostgreSQL exports its log; created here first, encrypted and with retention.
  log_group_name = "/aws/rds/cluster/${var.cluster_identifier}/postgresql"
  # Libraries the user asks for are loaded beside pg_stat_statements, never instead of it.
  preload_libraries = join(",", distinct(concat(["pg_stat_statements"], compact([for l in split(",", lookup(var.parameters, "shared_preload_libraries", "")) : trimspace(l)]))))
  parameters = merge(
    # Connection churn is what the proxy tier removes; log it so the change is visible.
    { log_connections = "1", log_disconnections = "1" },
    var.parameters,
    # Every client, the proxy included, must use TLS (an override to 0 is rejected by the variable).
    { "rds.force_ssl" = "1", shared_preload_libraries = local.preload_libraries },
  )
  # Parameters PostgreSQL reads only at start.
  static_parameters = ["shared_preload_libraries"]

  writer_identifier  = "${var.cluster_identifier}-writer"
  reader_identifiers = [for i in range(var.readers) : "${var.cluster_identifier}-reader-${i + 1}"]
}

# The PostgreSQL log group is the only one CloudWatch Logs may encrypt with this key.
module "key_policy" {
  source = "../internal/logs-kms-policy"
  count  = var.create_kms_key ? 1 : 0

  log_group_names = [local.log_group_name]
}

resource "aws_kms_key" "this" {
  count = var.create_kms_key ? 1 : 0

  description         = "Encrypts the ${var.cluster_identifier} Aurora cluster, its master secret, Performance Insights and its log"
  enable_key_rotation = true
  # A destroy only schedules the deletion; the longest window leaves 30 days to cancel it while the
  # final snapshot and backups still need the key.
  deletion_window_in_days = 30
  policy                  = module.key_policy[0].json
  tags                    = var.tags
}

# Created before the cluster, or RDS creates it unencrypted and without retention.
resource "aws_cloudwatch_log_group" "postgresql" {
  name              = local.log_group_name
  retention_in_days = var.log_retention_days
  kms_key_id        = local.kms_key_arn
  skip_destroy      = var.log_group_skip_destroy
  tags              = var.tags
  #checkov:skip=CKV_AWS_338:Retention is a setting (log_retention_days, default 30 days like the CDK construct); a year of PostgreSQL logs is a cost the user opts into
}

resource "aws_rds_cluster_parameter_group" "this" {
  name_prefix = "${var.cluster_identifier}-"
  family      = "aurora-postgresql${local.engine_major}"
  description = "aurora-postgresql${local.engine_major} parameters of ${var.cluster_identifier}: TLS forced, pg_stat_statements loaded"
  tags        = var.tags

  dynamic "parameter" {
    for_each = local.parameters
    content {
      name         = parameter.key
      value        = parameter.value
      apply_method = contains(local.static_parameters, parameter.key) ? "pending-reboot" : "immediate"
    }
  }

  lifecycle {
    create_before_destroy = true
  }
}

resource "aws_db_subnet_group" "this" {
  name_prefix = "${var.cluster_identifier}-"
  description = "Subnets of the ${var.cluster_identifier} Aurora cluster"
  subnet_ids  = var.subnet_ids
  tags        = var.tags
}

# No rules of its own: the proxy module adds ingress from the proxy only.
resource "aws_security_group" "this" {
  name_prefix = "${var.cluster_identifier}-"
  description = "Aurora cluster ${var.cluster_identifier}: ingress only from granted peers (the proxy)"
  vpc_id      = var.vpc_id
  tags        = var.tags

  lifecycle {
    create_before_destroy = true
  }
}

data "aws_iam_policy_document" "monitoring_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["monitoring.rds.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "monitoring" {
  name_prefix        = "${substr(var.cluster_identifier, 0, 26)}-monitoring-"
  assume_role_policy = data.aws_iam_policy_document.monitoring_assume.json
  tags               = var.tags
}

# AWS-maintained policy for enhanced monitoring; it only writes OS metrics to the RDSOSMetrics log group.
resource "aws_iam_role_policy_attachment" "monitoring" {
  role       = aws_iam_role.monitoring.name
  policy_arn = "arn:${data.aws_partition.current.partition}:iam::aws:policy/service-role/AmazonRDSEnhancedMonitoringRole"
}

resource "aws_rds_cluster" "this" {
  #checkov:skip=CKV2_AWS_8:Automated backups (backup_retention_days, within the backup-retention rule) and a final snapshot protect the cluster; an AWS Backup plan is an account-level choice outside this module
  #checkov:skip=CKV2_AWS_27:Query logging (log_statement) can log sensitive data and costs I/O; the module logs connections and disconnections and loads pg_stat_statements instead
  cluster_identifier = var.cluster_identifier
  engine             = "aurora-postgresql"
  engine_version     = var.engine_version
  # On the cluster as on the instances: Aurora upgrades only when both are on.
  auto_minor_version_upgrade = var.auto_minor_version_upgrade
  # I/O-Optimized storage: Optimized Reads' tiered cache needs it.
  storage_type      = "aurora-iopt1"
  storage_encrypted = true
  kms_key_id        = local.kms_key_arn

  iam_database_authentication_enabled = true
  master_username                     = var.master_username
  manage_master_user_password         = true
  master_user_secret_kms_key_id       = local.kms_key_arn
  database_name                       = var.database_name
  port                                = 5432

  db_cluster_parameter_group_name = aws_rds_cluster_parameter_group.this.name
  db_subnet_group_name            = aws_db_subnet_group.this.name
  vpc_security_group_ids          = [aws_security_group.this.id]

  backup_retention_period         = var.backup_retention_days
  copy_tags_to_snapshot           = true
  deletion_protection             = var.deletion_protection
  skip_final_snapshot             = var.skip_final_snapshot
  final_snapshot_identifier       = var.skip_final_snapshot ? null : "${var.cluster_identifier}-final"
  enabled_cloudwatch_logs_exports = ["postgresql"]
  tags                            = var.tags

  depends_on = [aws_cloudwatch_log_group.postgresql]

  lifecycle {
    # BEGIN generated cluster-kms-key by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)
    precondition {
      condition     = var.create_kms_key || var.kms_key_arn != null
      error_message = "kms_key_arn is not set: pass kms_key_arn when create_kms_key is false"
    }
    # END generated cluster-kms-key
    precondition {
      condition     = local.engine_version_problem == null
      error_message = coalesce(local.engine_version_problem, "ok")
    }
  }
}

# What every instance shares, the writer's and the readers'.
locals {
  instance_settings = {
    cluster_identifier                  = aws_rds_cluster.this.id
    instance_class                      = var.instance_class
    kms_key_arn                         = local.kms_key_arn
    performance_insights_retention_days = var.performance_insights_retention_days
    monitoring_interval                 = var.monitoring_interval
    monitoring_role_arn                 = aws_iam_role.monitoring.arn
    auto_minor_version_upgrade          = var.auto_minor_version_upgrade
    tags                                = var.tags
  }
}

# Created first, so it becomes the writer.
module "writer" {
  source = "../internal/cluster-instances"

  identifiers     = [local.writer_identifier]
  promotion_tiers = [0]
  settings        = local.instance_settings

  depends_on = [aws_iam_role_policy_attachment.monitoring]
}

module "readers" {
  source = "../internal/cluster-instances"

  identifiers = local.reader_identifiers
  # Reader 1 is the preferred failover target (tier 1); the rest follow (tier 2).
  promotion_tiers = [for i in range(var.readers) : i == 0 ? 1 : 2]
  settings        = local.instance_settings

  depends_on = [module.writer]
}

moved {
  from = aws_rds_cluster_instance.writer
  to   = module.writer.aws_rds_cluster_instance.this[0]
}

moved {
  from = aws_rds_cluster_instance.reader
  to   = module.readers.aws_rds_cluster_instance.this
}

# With automatic minor upgrades on, say at every plan what the user must do after one.
check "auto_minor_version_upgrade" {
  assert {
    condition     = !var.auto_minor_version_upgrade
    error_message = "auto_minor_version_upgrade is on: RDS may upgrade the cluster past engine_version ${var.engine_version} and cannot downgrade it; after an upgrade, set engine_version to the version the cluster runs before the next deployment"
  }
}

# A warning, as the CDK construct's annotation: the version passes the rules but is not in the catalog.
# BEGIN generated engine-version-offered by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)
check "engine_version_offered" {
  assert {
    condition     = contains(local.offered_engine_versions, var.engine_version)
    error_message = "engine_version ${var.engine_version} is not in the kit's catalog of offered versions; check that RDS offers it in your region"
  }
}
# END generated engine-version-offered
