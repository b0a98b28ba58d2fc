# The defaults accepted. The module's rules (lib/model's, the name, the consumer users and the HTTPS
# egress narrowing among them) run in vectors.tftest.hcl, generated from the shared vectors.

mock_provider "aws" {
  source = "../../test/terraform/mocks/aws"
}

variables {
  name                      = "tests"
  vpc_id                    = "vpc-data"
  subnet_ids                = ["subnet-d1", "subnet-d2"]
  cluster_security_group_id = "sg-cluster"
  cluster_endpoint          = "tests.cluster-abc.us-east-1.rds.amazonaws.com"
  reader_endpoints          = ["tests-reader-1.abc.us-east-1.rds.amazonaws.com", "tests-reader-2.abc.us-east-1.rds.amazonaws.com"]
  database_name             = "app"
  max_connections           = 1000
  packages_bucket           = "tests-packages"
  packages_key              = "pgbouncer/packages.tar"
  tls_secret_arn            = "arn:aws:secretsmanager:us-east-1:123456789012:secret:tests-tls-AbCdEf"
  tls_ca_certificate        = "-----BEGIN CERTIFICATE-----\nTU9DSw==\n-----END CERTIFICATE-----\n"
  consumer_users            = ["app_reader"]
  endpoints = {
    tests-ro = { vpc_id = "vpc-consumer", subnet_ids = ["subnet-c1", "subnet-c2"], role = "READ_ONLY" }
  }
}

run "defaults_accepted" {
  command = plan

  assert {
    condition     = aws_autoscaling_group.this.min_size == 2 && aws_autoscaling_group.this.max_size == 2 && aws_autoscaling_group.this.desired_capacity == 2
    error_message = "the group is of fixed size"
  }
  assert {
    condition     = output.vcpus_per_host == 2 && output.bootstrap_variables.Vcpus == "2" && output.bootstrap_variables.ReaderEndpoints == join(" ", var.reader_endpoints)
    error_message = "the bootstrap's variables"
  }
}
