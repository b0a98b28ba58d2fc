# What matters about the cluster, planned with a mocked provider.

mock_provider "aws" {
  source = "../../test/terraform/mocks/aws"
}

variables {
  cluster_identifier = "kit"
  vpc_id             = "vpc-data"
  subnet_ids         = ["subnet-d1", "subnet-d2"]
}

run "secure_defaults" {
  command = plan

  assert {
    condition     = aws_rds_cluster.this.engine == "aurora-postgresql" && aws_rds_cluster.this.engine_version == "17.9"
    error_message = "engine must be aurora-postgresql 17.9 by default"
  }
  assert {
    condition     = aws_rds_cluster.this.storage_type == "aurora-iopt1"
    error_message = "Optimized Reads' tiered cache needs aurora-iopt1 storage"
  }
  assert {
    condition     = aws_rds_cluster.this.storage_encrypted && aws_rds_cluster.this.iam_database_authentication_enabled && aws_rds_cluster.this.manage_master_user_password
    error_message = "storage encryption, IAM auth and the managed master password must be on"
  }
  assert {
    condition     = aws_rds_cluster.this.deletion_protection && aws_rds_cluster.this.backup_retention_period == 7 && !aws_rds_cluster.this.skip_final_snapshot
    error_message = "deletion protection, 7 days of backups and a final snapshot by default"
  }
  assert {
    condition     = aws_rds_cluster.this.enabled_cloudwatch_logs_exports == toset(["postgresql"])
    error_message = "the PostgreSQL log must be exported"
  }
  assert {
    condition     = aws_kms_key.this[0].enable_key_rotation
    error_message = "the cluster key must rotate"
  }
  assert {
    condition     = length(module.writer.instances) == 1 && length(module.readers.instances) == 2 && module.writer.instances[0].promotion_tier == 0 && module.readers.instances[0].promotion_tier == 1 && module.readers.instances[1].promotion_tier == 2
    error_message = "a writer (tier 0) and two readers (tiers 1, 2) by default"
  }
  assert {
    condition     = alltrue([for i in concat(module.writer.instances, module.readers.instances) : i.instance_class == "db.r6gd.xlarge" && i.performance_insights_enabled && i.monitoring_interval == 60 && !i.publicly_accessible])
    error_message = "every instance: db.r6gd.xlarge, Performance Insights, enhanced monitoring, private"
  }
  assert {
    condition     = one([for p in aws_rds_cluster_parameter_group.this.parameter : p.value if p.name == "rds.force_ssl"]) == "1"
    error_message = "the parameter group must force TLS"
  }
  assert {
    condition     = aws_rds_cluster_parameter_group.this.family == "aurora-postgresql17"
    error_message = "parameter group family must follow the major version"
  }
  assert {
    condition     = output.tiered_cache_gib == 134.7 && output.temporary_objects_gib == 64 && output.max_connections == 3479 && output.sizing.max_connections_basis == "published-same-memory"
    error_message = "sizing of db.r6gd.xlarge must come from the model"
  }
}

run "minor_versions_are_deliberate" {
  command = plan

  assert {
    condition     = !aws_rds_cluster.this.auto_minor_version_upgrade && alltrue([for i in concat(module.writer.instances, module.readers.instances) : !i.auto_minor_version_upgrade])
    error_message = "automatic minor upgrades are off on the cluster and every instance by default"
  }
}

run "automatic_minor_upgrades_warn" {
  command = plan

  variables {
    auto_minor_version_upgrade = true
  }

  assert {
    condition     = aws_rds_cluster.this.auto_minor_version_upgrade && alltrue([for i in concat(module.writer.instances, module.readers.instances) : i.auto_minor_version_upgrade])
    error_message = "when asked, automatic minor upgrades are on for the cluster and every instance (Aurora needs both)"
  }

  expect_failures = [check.auto_minor_version_upgrade]
}

run "supporting_resources_outlive_destroy" {
  command = plan

  assert {
    condition     = aws_kms_key.this[0].deletion_window_in_days == 30
    error_message = "a destroy schedules the key's deletion 30 days out, the longest window"
  }
  assert {
    condition     = aws_cloudwatch_log_group.postgresql.skip_destroy && aws_cloudwatch_log_group.postgresql.name == "/aws/rds/cluster/kit/postgresql"
    error_message = "the PostgreSQL log group is kept after destroy, as the CDK construct retains it"
  }
  assert {
    condition     = module.key_policy[0].logs_condition.test == "ArnEquals" && length(module.key_policy[0].logs_condition.values) == 1 && endswith(module.key_policy[0].logs_condition.values[0], ":log-group:/aws/rds/cluster/kit/postgresql")
    error_message = "CloudWatch Logs may use the cluster key for its PostgreSQL log group only"
  }
}

run "user_parameters_merge_and_keep_tls" {
  command = plan

  variables {
    parameters = { shared_preload_libraries = "auto_explain", work_mem = "65536", "rds.force_ssl" = "1" }
  }

  assert {
    condition     = one([for p in aws_rds_cluster_parameter_group.this.parameter : p.value if p.name == "shared_preload_libraries"]) == "pg_stat_statements,auto_explain"
    error_message = "user libraries load beside pg_stat_statements"
  }
  assert {
    condition     = one([for p in aws_rds_cluster_parameter_group.this.parameter : p.apply_method if p.name == "shared_preload_libraries"]) == "pending-reboot"
    error_message = "shared_preload_libraries is static"
  }
}

run "r8gd_sizing_and_own_key" {
  command = plan

  variables {
    instance_class = "db.r8gd.48xlarge"
    readers        = 0
    create_kms_key = false
    kms_key_arn    = "arn:aws:kms:us-east-1:123456789012:key/own"
  }

  assert {
    condition     = length(aws_kms_key.this) == 0 && aws_rds_cluster.this.kms_key_id == "arn:aws:kms:us-east-1:123456789012:key/own"
    error_message = "a given key replaces the module's"
  }
  assert {
    condition     = length(module.readers.instances) == 0 && output.temporary_objects_gib == 3072
    error_message = "no readers; 2x of 1,536 GiB memory for temporary objects"
  }
}

run "missing_key_is_refused" {
  command = plan

  variables {
    create_kms_key = false
  }

  expect_failures = [aws_rds_cluster.this]
}
