mock_provider "aws" {
  source = "../../test/terraform/mocks/aws"
}

variables {
  function_name      = "kit-reader"
  filename           = "reader.zip"
  source_code_hash   = "hash"
  vpc_id             = "vpc-consumer"
  subnet_ids         = ["subnet-c1", "subnet-c2"]
  endpoint           = { endpoint = "kit-ro.endpoint.proxy-x.us-east-1.rds.amazonaws.com", target_role = "READ_ONLY", security_group_id = "sg-endpoint", proxy_default_endpoint = "kit.proxy-x.us-east-1.rds.amazonaws.com" }
  connect_arn_prefix = "arn:aws:rds-db:us-east-1:123456789012:dbuser:prx-0123/"
  db_user            = "postgres"
  database_name      = "app"
}

run "vpc_function_wired_to_its_endpoint" {
  command = plan

  assert {
    condition     = module.function.function.runtime == "nodejs24.x" && module.function.function.architectures == tolist(["arm64"])
    error_message = "Node.js 24 on arm64"
  }
  assert {
    condition     = one(module.function.function.vpc_config).subnet_ids == toset(["subnet-c1", "subnet-c2"]) && module.function.security_group.vpc_id == "vpc-consumer"
    error_message = "the function sits in the endpoint's VPC"
  }
  assert {
    condition     = one(module.function.function.tracing_config).mode == "Active"
    error_message = "tracing active"
  }
  assert {
    condition     = one(module.function.function.environment).variables.DB_HOST == "kit-ro.endpoint.proxy-x.us-east-1.rds.amazonaws.com" && one(module.function.function.environment).variables.DB_ENDPOINT_ROLE == "READ_ONLY" && one(module.function.function.environment).variables.DB_AUTH == "iam"
    error_message = "environment from the endpoint"
  }
  assert {
    condition     = one(module.function.function.environment).variables.DB_TLS == "verify-proxy-domain" && one(module.function.function.environment).variables.DB_TLS_SERVER_NAME == "kit.proxy-x.us-east-1.rds.amazonaws.com"
    error_message = "a custom endpoint's certificate is checked against the proxy's default endpoint (verify-full works on the default endpoint only)"
  }
  assert {
    condition     = aws_vpc_security_group_ingress_rule.endpoint_from_function.security_group_id == "sg-endpoint" && aws_vpc_security_group_egress_rule.to_endpoint.referenced_security_group_id == "sg-endpoint"
    error_message = "network path to the endpoint only"
  }
  assert {
    condition     = data.aws_iam_policy_document.function.statement[1].resources == toset(["arn:aws:rds-db:us-east-1:123456789012:dbuser:prx-0123/postgres"])
    error_message = "rds-db:connect on the proxy and user only"
  }
  assert {
    condition     = module.function.log_group.retention_in_days == 30 && module.function.log_group.name == "/aws/lambda/kit-reader"
    error_message = "log group with retention"
  }
  assert {
    condition     = module.function.function.reserved_concurrent_executions == -1
    error_message = "unreserved by default"
  }
}

run "the_default_endpoint_is_verified_by_its_own_name" {
  command = plan

  variables {
    endpoint = { endpoint = "kit.proxy-x.us-east-1.rds.amazonaws.com", target_role = "READ_WRITE", security_group_id = "sg-proxy", is_proxy_default_endpoint = true }
  }

  assert {
    condition     = one(module.function.function.environment).variables.DB_TLS == "verify-full" && !contains(keys(one(module.function.function.environment).variables), "DB_TLS_SERVER_NAME")
    error_message = "verify-full on the proxy's default endpoint, without a server name"
  }
}

run "key_and_log_group_outlive_destroy_and_serve_this_function" {
  command = plan

  assert {
    condition     = module.function.kms_key.deletion_window_in_days == 30 && module.function.log_group.skip_destroy
    error_message = "a destroy schedules the key's deletion 30 days out and keeps the log group, as the CDK construct retains both"
  }
  assert {
    condition     = module.function.kms_key_logs_condition.test == "ArnEquals" && length(module.function.kms_key_logs_condition.values) == 1 && endswith(module.function.kms_key_logs_condition.values[0], ":log-group:/aws/lambda/kit-reader")
    error_message = "CloudWatch Logs may use the function's key for its log group only"
  }
}

# A configuration without Node.js deploys the release's zip from S3 (uploaded by its owner).
run "code_from_the_release_zip_in_s3" {
  command = plan

  variables {
    filename          = null
    s3_bucket         = "kit-artifacts"
    s3_key            = "aurora-proxy-kit/v0.1.0/read-handler.zip"
    s3_object_version = "3HL4kqtJlcpXroDTDmJ"
    source_code_hash  = "wHpCt9RT3U5TMVv+Lib5CrjKVqVB8ercSqGYi6Otsn8="
  }

  assert {
    condition     = module.function.function.filename == null && module.function.function.s3_bucket == "kit-artifacts" && module.function.function.s3_key == "aurora-proxy-kit/v0.1.0/read-handler.zip" && module.function.function.s3_object_version == "3HL4kqtJlcpXroDTDmJ"
    error_message = "the code is the S3 object"
  }
  assert {
    condition     = module.function.function.source_code_hash == "wHpCt9RT3U5TMVv+Lib5CrjKVqVB8ercSqGYi6Otsn8=" && module.function.function.handler == "index.handler"
    error_message = "the release's hash redeploys a changed zip; the handler is the bundle's"
  }
}
