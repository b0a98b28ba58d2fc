# The CloudWatch Logs statement admits the named log groups only, planned with a mocked provider.

mock_provider "aws" {
  source = "../../../test/terraform/mocks/aws"
}

run "exact_names_match_exactly" {
  command = plan

  variables {
    log_group_names = ["/aws/rds/cluster/kit/postgresql"]
  }

  assert {
    condition     = output.logs_condition == { test = "ArnEquals", variable = "kms:EncryptionContext:aws:logs:arn", values = ["arn:aws:logs:us-east-1:123456789012:log-group:/aws/rds/cluster/kit/postgresql"] }
    error_message = "one exact log group ARN, matched with ArnEquals"
  }
}

run "a_pattern_needs_arn_like" {
  command = plan

  variables {
    log_group_names = ["/aws/lambda/kit-reader", "/aurora-proxy-kit/kit/*"]
  }

  assert {
    condition     = output.logs_condition.test == "ArnLike" && output.logs_condition.values == ["arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/kit-reader", "arn:aws:logs:us-east-1:123456789012:log-group:/aurora-proxy-kit/kit/*"]
    error_message = "a name pattern makes the condition ArnLike"
  }
}

run "no_log_group_is_refused" {
  command = plan

  variables {
    log_group_names = []
  }

  expect_failures = [var.log_group_names]
}
