# The reference deployment with a mocked provider, applied in memory so that IDs are known and the
# wiring between the VPCs, the proxy endpoints and the functions can be asserted. Needs the Lambda
# zips (make lambda-zip).

mock_provider "aws" {
  source = "../../../test/terraform/mocks/aws"
}

run "cross_vpc_topology" {
  variables {
    deletion_protection = false
  }

  assert {
    condition     = module.proxy.endpoints["aurora-proxy-kit-ro"].target_role == "READ_ONLY" && module.proxy.endpoints["aurora-proxy-kit-rw"].target_role == "READ_WRITE"
    error_message = "one READ_ONLY and one READ_WRITE endpoint"
  }
  assert {
    condition     = alltrue([for e in module.proxy.endpoints : e.vpc_id == aws_vpc.this["consumer"].id])
    error_message = "the endpoints sit in the consumer VPC"
  }
  assert {
    condition     = aws_vpc.this["consumer"].id != aws_vpc.this["data"].id && aws_vpc.this["consumer"].cidr_block == "10.20.0.0/16"
    error_message = "two separate VPCs"
  }
  assert {
    condition     = output.tiered_cache_gib == 134.7 && output.proxy_max_server_connections == 3444 && output.reserved_connections == 10
    error_message = "sizing outputs"
  }
  assert {
    condition     = output.reader_function == "aurora-proxy-kit-reader" && output.writer_function == "aurora-proxy-kit-writer"
    error_message = "one function per endpoint"
  }
  assert {
    condition     = length(module.dashboard.alarm_names) == 19
    error_message = "19 alarms, as the CDK app"
  }
}

run "more_read_only_endpoints" {
  command = plan

  variables {
    read_only_endpoints = 3
  }

  assert {
    condition     = length(local.endpoints) == 4 && local.endpoints["aurora-proxy-kit-ro3"].target_role == "READ_ONLY"
    error_message = "READ_ONLY endpoints 2 and 3 are added"
  }
}

# Without Node.js or a local copy of the zips: the release's zips uploaded to a bucket.
run "lambda_code_from_s3" {
  command = plan

  variables {
    lambda_s3 = {
      bucket             = "kit-artifacts"
      key_prefix         = "aurora-proxy-kit/v0.1.0/"
      source_code_hashes = { "read-handler.zip" = "cmVhZA==" }
    }
  }

  assert {
    condition     = local.lambda_code["read-handler.zip"].filename == null && local.lambda_code["read-handler.zip"].s3_key == "aurora-proxy-kit/v0.1.0/read-handler.zip" && local.lambda_code["role-bootstrap.zip"].s3_bucket == "kit-artifacts"
    error_message = "every function's code is its zip in the bucket"
  }
  assert {
    condition     = local.lambda_code["read-handler.zip"].source_code_hash == "cmVhZA==" && local.lambda_code["write-handler.zip"].source_code_hash == null
    error_message = "a zip's hash when given"
  }
}

# A bad instance_class fails in module.database's validation; terraform test cannot expect failures of a
# child module's variables, so test/terraform/plan-messages.test.ts plans this example with
# instance_class = "db.r6g.xlarge" and checks the exact message.
