# One definition of the cluster's DB instances. The aurora-optimized-reads module calls it twice, for
# the writer and then for the readers (depends_on), because Aurora makes the first instance created in
# a cluster its writer and Terraform creates the instances of one resource in parallel.
resource "aws_rds_cluster_instance" "this" {
  count = length(var.identifiers)

  identifier         = var.identifiers[count.index]
  cluster_identifier = var.settings.cluster_identifier
  engine             = "aurora-postgresql"
  # No engine_version: an instance of an Aurora cluster runs the cluster's version, and pinning it here
  # would propose a downgrade after RDS upgrades the cluster.
  instance_class                        = var.settings.instance_class
  promotion_tier                        = var.promotion_tiers[count.index]
  performance_insights_enabled          = true
  performance_insights_kms_key_id       = var.settings.kms_key_arn
  performance_insights_retention_period = var.settings.performance_insights_retention_days
  monitoring_interval                   = var.settings.monitoring_interval
  monitoring_role_arn                   = var.settings.monitoring_role_arn
  auto_minor_version_upgrade            = var.settings.auto_minor_version_upgrade
  publicly_accessible                   = false
  ca_cert_identifier                    = "rds-ca-rsa2048-g1"
  copy_tags_to_snapshot                 = true
  tags                                  = var.settings.tags

  lifecycle {
    precondition {
      condition     = length(var.promotion_tiers) == length(var.identifiers)
      error_message = "promotion_tiers has ${length(var.promotion_tiers)} entries for ${length(var.identifiers)} identifiers: give one tier per instance"
    }
  }
}
