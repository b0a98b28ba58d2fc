# Every instance gets the shared settings and no engine version of its own, planned with a mocked provider.

mock_provider "aws" {
  source = "../../../test/terraform/mocks/aws"
}

variables {
  identifiers     = ["kit-reader-1", "kit-reader-2"]
  promotion_tiers = [1, 2]
  settings = {
    cluster_identifier                  = "kit"
    instance_class                      = "db.r6gd.xlarge"
    kms_key_arn                         = "arn:aws:kms:us-east-1:123456789012:key/kit"
    performance_insights_retention_days = 7
    monitoring_interval                 = 60
    monitoring_role_arn                 = "arn:aws:iam::123456789012:role/kit-monitoring"
    auto_minor_version_upgrade          = false
    tags                                = {}
  }
}

run "shared_settings_per_instance" {
  command = plan

  assert {
    condition     = output.identifiers == ["kit-reader-1", "kit-reader-2"] && [for i in output.instances : i.promotion_tier] == [1, 2]
    error_message = "one instance per identifier, each with its promotion tier"
  }
  assert {
    condition     = alltrue([for i in output.instances : i.cluster_identifier == "kit" && i.engine == "aurora-postgresql" && i.instance_class == "db.r6gd.xlarge" && i.performance_insights_kms_key_id == "arn:aws:kms:us-east-1:123456789012:key/kit" && !i.auto_minor_version_upgrade && i.ca_cert_identifier == "rds-ca-rsa2048-g1" && i.copy_tags_to_snapshot])
    error_message = "every instance gets the shared settings"
  }
}

run "one_tier_per_instance" {
  command = plan

  variables {
    promotion_tiers = [1]
  }

  expect_failures = [aws_rds_cluster_instance.this]
}
