# Every rule of the module, one rejected run each (and the defaults accepted): the hand-written
# validations and preconditions restate FLEET_RULES, POOLER_HOST_RULES and PROXY_RULES of lib/model.

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

run "name_invalid" {
  command = plan
  variables { name = "a-name-longer-than-twenty-nine-chars" }
  expect_failures = [var.name]
}

run "fleet_hosts_out_of_range" {
  command = plan
  variables { hosts = 1 }
  expect_failures = [var.hosts]
}

run "pooler_instance_not_graviton" {
  command = plan
  variables { instance_type = "t3.large" }
  expect_failures = [var.instance_type]
}

run "pooler_instance_unknown" {
  command = plan
  variables { instance_type = "c6g.large" }
  expect_failures = [var.instance_type]
}

run "max_connections_percent_out_of_range" {
  command = plan
  variables { max_connections_percent = 0 }
  expect_failures = [var.max_connections_percent]
}

run "max_idle_connections_percent_out_of_range" {
  command = plan
  variables { max_idle_connections_percent = 101 }
  expect_failures = [var.max_idle_connections_percent]
}

run "idle_within_max" {
  command = plan
  variables {
    max_connections_percent      = 40
    max_idle_connections_percent = 50
  }
  expect_failures = [aws_launch_template.this]
}

run "borrow_timeout_out_of_range" {
  command = plan
  variables { connection_borrow_timeout_seconds = 301 }
  expect_failures = [var.connection_borrow_timeout_seconds]
}

run "fleet_tcp_idle_timeout_out_of_range" {
  command = plan
  variables { tcp_idle_timeout_seconds = 59 }
  expect_failures = [var.tcp_idle_timeout_seconds]
}

run "pooler_user_name_invalid" {
  command = plan
  variables { read_only_server_user = "Reader" }
  expect_failures = [var.read_only_server_user]
}

run "consumer_user_name_invalid" {
  command = plan
  variables { consumer_users = ["app-reader"] }
  expect_failures = [var.consumer_users]
}

run "consumer_users_repeated" {
  command = plan
  variables { consumer_users = ["app_reader", "app_reader"] }
  expect_failures = [aws_launch_template.this]
}

run "fleet_readers_none" {
  command = plan
  variables { reader_endpoints = [] }
  expect_failures = [aws_launch_template.this]
}

run "fleet_budget_split" {
  command = plan
  variables {
    hosts           = 20
    instance_type   = "c7g.16xlarge"
    max_connections = 1000
  }
  expect_failures = [aws_launch_template.this]
}

run "endpoint_role_invalid" {
  command = plan
  variables {
    endpoints = { tests-x = { vpc_id = "vpc-consumer", subnet_ids = ["subnet-c1"], role = "READ" } }
  }
  expect_failures = [aws_vpc_endpoint.this]
}

run "s3_prefix_list_without_vpc_cidr" {
  command = plan
  variables { s3_prefix_list_id = "pl-63a5400a" }
  expect_failures = [aws_vpc_security_group_egress_rule.hosts_https]
}
