mock_provider "aws" {
  source = "../../test/terraform/mocks/aws"
}

variables {
  function_name             = "kit-database-roles"
  filename                  = "../../dist/lambda/role-bootstrap.zip"
  roles                     = [{ name = "app_reader", access = "READ_ONLY" }, { name = "app_writer", access = "READ_WRITE" }]
  cluster_identifier        = "kit"
  cluster_endpoint          = "kit.cluster-abc.us-east-1.rds.amazonaws.com"
  cluster_security_group_id = "sg-cluster"
  database_name             = "app"
  master_user_secret_arn    = "arn:aws:secretsmanager:us-east-1:123456789012:secret:rds!cluster-kit"
  secret_kms_key_arn        = "arn:aws:kms:us-east-1:123456789012:key/kit"
  vpc_id                    = "vpc-data"
  subnet_ids                = ["subnet-d1", "subnet-d2"]
  kms_key_arn               = "arn:aws:kms:us-east-1:123456789012:key/logs"

  secrets_manager_security_group_ids = ["sg-secrets"]
}

run "bootstrap_in_the_data_vpc" {
  command = apply

  assert {
    condition     = jsondecode(aws_lambda_invocation.this.input) == { database = "app", roles = [{ name = "app_reader", access = "READ_ONLY" }, { name = "app_writer", access = "READ_WRITE" }] }
    error_message = "the invocation asks for the roles in the database"
  }
  assert {
    condition     = module.function.function.environment[0].variables.NODE_EXTRA_CA_CERTS == "/var/runtime/ca-cert.pem" && module.function.function.environment[0].variables.DB_HOST == var.cluster_endpoint
    error_message = "connects to the writer with the RDS certificate authorities loaded"
  }
  assert {
    condition     = aws_vpc_security_group_ingress_rule.cluster_from_function.security_group_id == "sg-cluster" && aws_vpc_security_group_egress_rule.to_secrets_manager[0].referenced_security_group_id == "sg-secrets"
    error_message = "reaches the cluster and Secrets Manager"
  }
  assert {
    condition     = [for s in data.aws_iam_policy_document.function.statement : s.resources] == [toset(["*"]), toset([var.master_user_secret_arn]), toset([var.secret_kms_key_arn])]
    error_message = "tracing, and the master secret only"
  }
}

# The Secrets Manager endpoint named in vpc_endpoints, as the other modules take theirs: the same egress.
run "secrets_manager_endpoint_in_vpc_endpoints" {
  command = plan

  variables {
    secrets_manager_security_group_ids = []
    vpc_endpoints                      = { secretsmanager = "sg-vpce" }
  }

  assert {
    condition     = length(aws_vpc_security_group_egress_rule.to_secrets_manager) == 1 && aws_vpc_security_group_egress_rule.to_secrets_manager[0].referenced_security_group_id == "sg-vpce"
    error_message = "reaches the endpoint named in vpc_endpoints"
  }
}

# Neither an endpoint nor egress: the plan stops at the function's policy, naming what is missing (the message: vectors.tftest.hcl).
run "no_route_to_secrets_manager" {
  command = plan

  variables {
    secrets_manager_security_group_ids = []
  }

  expect_failures = [data.aws_iam_policy_document.function]
}

run "master_user_like_names_refused" {
  command = plan

  variables {
    roles = [{ name = "rds_reader", access = "READ_ONLY" }]
  }

  expect_failures = [var.roles]
}

# A configuration without Node.js deploys the release's zip from S3 (uploaded by its owner).
run "code_from_the_release_zip_in_s3" {
  command = plan

  variables {
    filename  = null
    s3_bucket = "kit-artifacts"
    s3_key    = "aurora-proxy-kit/v0.1.0/role-bootstrap.zip"
  }

  assert {
    condition     = module.function.function.filename == null && module.function.function.s3_bucket == "kit-artifacts" && module.function.function.s3_key == "aurora-proxy-kit/v0.1.0/role-bootstrap.zip"
    error_message = "the code is the S3 object"
  }
}
