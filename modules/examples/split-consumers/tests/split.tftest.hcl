# Two roots: examples/complete applied (with a mocked provider, so its IDs are known), then this root
# planned from its consumer_inputs output alone: the consumer goes in the data root's consumer VPC, behind
# the endpoint it names, and may log in only as a user the data root's proxy may log in as.

mock_provider "aws" {
  source = "../../../test/terraform/mocks/aws"
}

variables {
  lambda_s3 = { bucket = "kit-artifacts", key_prefix = "aurora-proxy-kit/", source_code_hashes = {} }
}

run "data" {
  module {
    source = "../complete"
  }
  variables {
    deletion_protection = false
  }
}

run "consumers_from_the_data_outputs" {
  command = plan
  variables {
    deployment = run.data.consumer_inputs
  }

  assert {
    condition     = module.consumer.target_role == "READ_ONLY" && local.endpoint.security_group_id == run.data.consumer_inputs.endpoints["aurora-proxy-kit-ro"].security_group_id
    error_message = "the consumer is behind the data root's READ_ONLY endpoint and its security group"
  }
  assert {
    condition     = local.endpoint.security_group_id != "" && var.deployment.vpc_id != "" && length(var.deployment.subnet_ids) == 2
    error_message = "the data root's outputs carry its IDs"
  }
  assert {
    condition     = output.function_name == "aurora-proxy-kit-reporting" && module.dashboard.dashboard_name == "aurora-proxy-kit-reporting"
    error_message = "one consumer and a dashboard of this root's own"
  }
}

run "a_user_the_proxy_may_not_log_in_as" {
  command = plan
  variables {
    deployment = run.data.consumer_inputs
    db_user    = "reporter"
  }
  expect_failures = [output.function_name]
}

run "another_region_than_the_data_root" {
  command = plan
  variables {
    deployment = merge(run.data.consumer_inputs, { connect_arn_prefix = replace(run.data.consumer_inputs.connect_arn_prefix, ":us-east-1:", ":eu-west-1:") })
  }
  expect_failures = [output.function_name]
}
