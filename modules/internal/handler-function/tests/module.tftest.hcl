# The kit's Lambda function in a VPC and outside one, planned with a mocked provider.

mock_provider "aws" {
  source = "../../../test/terraform/mocks/aws"
}

variables {
  function_name = "kit-reader"
  description   = "aurora-proxy-kit READ_ONLY consumer"
  code          = { s3_bucket = "kit-artifacts", s3_key = "read-handler.zip", source_code_hash = "hash" }
  memory_size   = 256
  timeout       = 30
  environment   = { variables = { DB_HOST = "kit.proxy-x.us-east-1.rds.amazonaws.com" } }
  vpc = {
    vpc_id                     = "vpc-kit"
    subnet_ids                 = ["subnet-1", "subnet-2"]
    security_group_description = "egress only to its endpoint"
  }
  role               = { name_prefix = "kit-reader-" }
  policy             = { name = "tracing-and-database-connect", json = "{\"Version\":\"2012-10-17\",\"Statement\":[]}" }
  log_retention_days = 30
  create_kms_key     = true
}

run "in_a_vpc" {
  command = plan

  assert {
    condition     = output.function.runtime == "nodejs24.x" && output.function.architectures == tolist(["arm64"]) && one(output.function.tracing_config).mode == "Active" && output.function.handler == "index.handler"
    error_message = "Node.js 24 on arm64, traced, the bundle's handler"
  }
  assert {
    condition     = one(output.function.vpc_config).subnet_ids == toset(["subnet-1", "subnet-2"]) && output.security_group.vpc_id == "vpc-kit" && output.security_group.description == "egress only to its endpoint"
    error_message = "in the VPC's subnets, with a security group of its own"
  }
  assert {
    condition     = length(aws_iam_role_policy_attachment.vpc) == 1 && endswith(aws_iam_role_policy_attachment.vpc[0].policy_arn, ":iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole") && endswith(aws_iam_role_policy_attachment.basic.policy_arn, ":iam::aws:policy/service-role/AWSLambdaBasicExecutionRole")
    error_message = "the basic execution and VPC access policies"
  }
  assert {
    condition     = aws_iam_role_policy.this.name == "tracing-and-database-connect" && aws_iam_role_policy.this.policy == var.policy.json && output.role.name_prefix == "kit-reader-"
    error_message = "the caller's policy on a role named by its prefix"
  }
  assert {
    condition     = output.log_group.name == "/aws/lambda/kit-reader" && output.log_group.retention_in_days == 30 && one(output.function.logging_config).log_group == "/aws/lambda/kit-reader"
    error_message = "Lambda's default log group, made first, with the caller's retention, and the function logs to it"
  }
  assert {
    condition     = output.kms_key.deletion_window_in_days == 30 && output.kms_key.enable_key_rotation
    error_message = "the module's key: rotated, 30-day deletion window"
  }
  assert {
    condition     = one(output.function.environment).variables == tomap({ DB_HOST = "kit.proxy-x.us-east-1.rds.amazonaws.com" }) && output.function.s3_key == "read-handler.zip" && output.function.source_code_hash == "hash"
    error_message = "the caller's environment and code"
  }
}

run "outside_any_vpc_with_a_given_key" {
  command = plan

  variables {
    vpc            = null
    environment    = null
    create_kms_key = false
    kms_key_arn    = "arn:aws:kms:us-east-1:123456789012:key/logs"
  }

  assert {
    condition     = length(output.function.vpc_config) == 0 && output.security_group == null && length(aws_iam_role_policy_attachment.vpc) == 0
    error_message = "no VPC: no vpc_config, no security group, no VPC access policy"
  }
  assert {
    condition     = length(output.function.environment) == 0
    error_message = "no environment block without an environment"
  }
  assert {
    condition     = output.kms_key == null && output.kms_key_arn == var.kms_key_arn && output.log_group.kms_key_id == var.kms_key_arn && output.function.kms_key_arn == var.kms_key_arn
    error_message = "the given key encrypts the log group and the environment; none is made"
  }
}

run "function_name_refused" {
  command = plan

  variables {
    function_name = "kit reader"
  }

  expect_failures = [var.function_name]
}

run "role_name_prefix_too_long" {
  command = plan

  variables {
    role = { name_prefix = "a-role-name-prefix-longer-than-iam-takes-" }
  }

  expect_failures = [var.role]
}

run "vpc_without_subnets" {
  command = plan

  variables {
    vpc = { vpc_id = "vpc-kit", subnet_ids = [], security_group_description = "none" }
  }

  expect_failures = [var.vpc]
}
