data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}
data "aws_region" "current" {}

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

data "aws_iam_policy_document" "key" {
  count = var.create_kms_key ? 1 : 0

  #checkov:skip=CKV_AWS_109:A key policy's Resource is always the key itself ("*"); the account root statement is AWS's default and delegates to IAM
  #checkov:skip=CKV_AWS_111:A key policy's Resource is always the key itself ("*"); the account root statement is AWS's default and delegates to IAM
  #checkov:skip=CKV_AWS_356:A key policy's Resource is always the key itself ("*")
  statement {
    sid       = "AccountAdministers"
    actions   = ["kms:*"]
    resources = ["*"]
    principals {
      type        = "AWS"
      identifiers = ["arn:${data.aws_partition.current.partition}:iam::${data.aws_caller_identity.current.account_id}:root"]
    }
  }

  # The PostgreSQL log group is encrypted with this key.
  statement {
    sid       = "CloudWatchLogsEncrypt"
    actions   = ["kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"]
    resources = ["*"]
    principals {
      type        = "Service"
      identifiers = ["logs.${data.aws_region.current.region}.amazonaws.com"]
    }
    condition {
      test     = "ArnLike"
      variable = "kms:EncryptionContext:aws:logs:arn"
      values   = ["arn:${data.aws_partition.current.partition}:logs:${data.aws_region.current.region}:${data.aws_caller_identity.current.account_id}:*"]
    }
  }
}

resource "aws_kms_key" "this" {
  count = var.create_kms_key ? 1 : 0

  description         = "Encrypts the ${var.cluster_identifier} Aurora cluster, its master secret, Performance Insights and its log"
  enable_key_rotation = true
  policy              = data.aws_iam_policy_document.key[0].json
  tags                = var.tags
}

# Created before the cluster, or RDS creates it unencrypted and without retention.
resource "aws_cloudwatch_log_group" "postgresql" {
  name              = "/aws/rds/cluster/${var.cluster_identifier}/postgresql"
  retention_in_days = var.log_retention_days
  kms_key_id        = local.kms_key_arn
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
  #checkov:skip=CKV2_AWS_8:Automated backups (backup_retention_days, 7..35) and a final snapshot protect the cluster; an AWS Backup plan is an account-level choice outside this module
  #checkov:skip=CKV2_AWS_27:Query logging (log_statement) can log sensitive data and costs I/O; the module logs connections and disconnections and loads pg_stat_statements instead
  cluster_identifier = var.cluster_identifier
  engine             = "aurora-postgresql"
  engine_version     = var.engine_version
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

locals {
  instance_defaults = {
    instance_class                        = var.instance_class
    performance_insights_enabled          = true
    performance_insights_kms_key_id       = local.kms_key_arn
    performance_insights_retention_period = var.performance_insights_retention_days
    monitoring_interval                   = var.monitoring_interval
    monitoring_role_arn                   = aws_iam_role.monitoring.arn
    auto_minor_version_upgrade            = true
    publicly_accessible                   = false
    ca_cert_identifier                    = "rds-ca-rsa2048-g1"
  }
}

# Created first, so it becomes the writer.
resource "aws_rds_cluster_instance" "writer" {
  identifier                            = local.writer_identifier
  cluster_identifier                    = aws_rds_cluster.this.id
  engine                                = aws_rds_cluster.this.engine
  engine_version                        = aws_rds_cluster.this.engine_version
  instance_class                        = local.instance_defaults.instance_class
  promotion_tier                        = 0
  performance_insights_enabled          = local.instance_defaults.performance_insights_enabled
  performance_insights_kms_key_id       = local.instance_defaults.performance_insights_kms_key_id
  performance_insights_retention_period = local.instance_defaults.performance_insights_retention_period
  monitoring_interval                   = local.instance_defaults.monitoring_interval
  monitoring_role_arn                   = local.instance_defaults.monitoring_role_arn
  auto_minor_version_upgrade            = local.instance_defaults.auto_minor_version_upgrade
  publicly_accessible                   = local.instance_defaults.publicly_accessible
  ca_cert_identifier                    = local.instance_defaults.ca_cert_identifier
  copy_tags_to_snapshot                 = true
  tags                                  = var.tags

  depends_on = [aws_iam_role_policy_attachment.monitoring]
}

resource "aws_rds_cluster_instance" "reader" {
  count = var.readers

  identifier         = local.reader_identifiers[count.index]
  cluster_identifier = aws_rds_cluster.this.id
  engine             = aws_rds_cluster.this.engine
  engine_version     = aws_rds_cluster.this.engine_version
  instance_class     = local.instance_defaults.instance_class
  # Reader 1 is the preferred failover target (tier 1); the rest follow (tier 2).
  promotion_tier                        = count.index == 0 ? 1 : 2
  performance_insights_enabled          = local.instance_defaults.performance_insights_enabled
  performance_insights_kms_key_id       = local.instance_defaults.performance_insights_kms_key_id
  performance_insights_retention_period = local.instance_defaults.performance_insights_retention_period
  monitoring_interval                   = local.instance_defaults.monitoring_interval
  monitoring_role_arn                   = local.instance_defaults.monitoring_role_arn
  auto_minor_version_upgrade            = local.instance_defaults.auto_minor_version_upgrade
  publicly_accessible                   = local.instance_defaults.publicly_accessible
  ca_cert_identifier                    = local.instance_defaults.ca_cert_identifier
  copy_tags_to_snapshot                 = true
  tags                                  = var.tags

  depends_on = [aws_rds_cluster_instance.writer]
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
