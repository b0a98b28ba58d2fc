# The defaults accepted, and EC2's 16 KB limit on the rendered user data (the launch template's precondition;
# the CDK construct checks its placeholders' longest values at synth instead). The module's rules (lib/model's,
# the name, the consumer users and the HTTPS egress narrowing among them) run in vectors.tftest.hcl, generated
# from the shared vectors.

mock_provider "aws" {
  source = "../../test/terraform/mocks/aws"
}

variables {
  name       = "tests"
  vpc_id     = "vpc-data"
  subnet_ids = ["subnet-d1", "subnet-d2"]
  # The endpoints the hosts call AWS through (an isolated VPC).
  vpc_endpoints             = { s3 = "vpce-s3", secretsmanager = "sg-endpoints", monitoring = "sg-endpoints", ssm = "sg-endpoints", ssmmessages = "sg-endpoints", ec2messages = "sg-endpoints" }
  cluster_security_group_id = "sg-cluster"
  cluster_endpoint          = "tests.cluster-abc.us-east-1.rds.amazonaws.com"
  reader_endpoints          = ["tests-reader-1.abc.us-east-1.rds.amazonaws.com", "tests-reader-2.abc.us-east-1.rds.amazonaws.com"]
  writer_instance_endpoint  = "tests-writer.abc.us-east-1.rds.amazonaws.com"
  database_name             = "app"
  max_connections           = 1000
  image_id                  = "ami-0123456789abcdef0"
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
  # No signals in Terraform: the apply waits for every host to be healthy in both target groups (both listeners
  # serve), and the hosts are given no stack to signal.
  assert {
    condition     = aws_autoscaling_group.this.wait_for_elb_capacity == var.hosts && aws_autoscaling_group.this.wait_for_capacity_timeout == "${local.host_signal_timeout_seconds}s"
    error_message = "the apply waits for every host to serve"
  }
  assert {
    condition     = output.bootstrap_variables.SignalStack == "" && output.bootstrap_variables.SignalResource == ""
    error_message = "the hosts signal no stack"
  }
}

run "more_hosts_waited_for" {
  command = plan

  variables {
    hosts = 4
  }

  assert {
    condition     = aws_autoscaling_group.this.wait_for_elb_capacity == 4 && aws_autoscaling_group.this.instance_refresh[0].preferences[0].min_healthy_percentage == 75
    error_message = "four hosts waited for, refreshed one at a time"
  }
}

# Session pooling: only the listeners some endpoint uses exist; each session endpoint gets its own port.
run "no_session_endpoint_no_session_listener" {
  command = plan

  assert {
    condition     = toset(keys(aws_lb_listener.this)) == toset(["READ_WRITE", "READ_ONLY"]) && output.bootstrap_variables.SessionListeners == "" && output.bootstrap_variables.SessionMaxConnectionsPercent == "25"
    error_message = "a fleet without session endpoints has no session listener"
  }
}

run "session_endpoints_add_their_listeners" {
  command = plan

  variables {
    session_max_connections_percent = 40
    endpoints = {
      tests-ro   = { vpc_id = "vpc-consumer", subnet_ids = ["subnet-c1", "subnet-c2"], role = "READ_ONLY" }
      notify     = { vpc_id = "vpc-consumer", subnet_ids = ["subnet-c1", "subnet-c2"], role = "READ_WRITE", pool_mode = "session", allowed_security_group_ids = ["sg-client"] }
      locks      = { vpc_id = "vpc-consumer", subnet_ids = ["subnet-c1", "subnet-c2"], role = "READ_WRITE", pool_mode = "session" }
      reports-ro = { vpc_id = "vpc-consumer", subnet_ids = ["subnet-c1", "subnet-c2"], role = "READ_ONLY", pool_mode = "session" }
    }
  }

  assert {
    condition     = toset(keys(aws_lb_listener.this)) == toset(["READ_WRITE", "READ_ONLY", "READ_WRITE_SESSION", "READ_ONLY_SESSION"])
    error_message = "one listener per role and pool mode some endpoint uses"
  }
  assert {
    condition     = aws_lb_listener.this["READ_WRITE_SESSION"].port == 5434 && aws_lb_listener.this["READ_ONLY_SESSION"].port == 5435
    error_message = "the session listeners' ports"
  }
  assert {
    condition     = aws_lb_target_group.this["READ_WRITE_SESSION"].port == 6434 && aws_lb_target_group.this["READ_WRITE_SESSION"].health_check[0].path == "/read-write-session" && aws_lb_target_group.this["READ_ONLY_SESSION"].health_check[0].path == "/read-only-session" && aws_lb_target_group.this["READ_ONLY_SESSION"].health_check[0].interval == 10
    error_message = "the session target groups: their PgBouncer ports and health paths, the same checks"
  }
  assert {
    condition     = aws_vpc_security_group_ingress_rule.hosts_from_load_balancer["READ_ONLY_SESSION"].from_port == 6435
    error_message = "the hosts admit the load balancer on the session ports"
  }
  assert {
    condition     = output.bootstrap_variables.SessionListeners == "sw sr" && output.bootstrap_variables.SessionMaxConnectionsPercent == "40"
    error_message = "the hosts lay out both session listeners with their share"
  }
  assert {
    condition     = output.endpoints["notify"].port == 5434 && output.endpoints["reports-ro"].port == 5435 && output.endpoints["tests-ro"].port == 5433 && aws_vpc_security_group_ingress_rule.endpoint["notify/0"].from_port == 5434
    error_message = "each endpoint's port is its listener's"
  }
}

# The secrets' ARNs are known only at apply; the mock gives them at plan (the consumers' in each run).
override_resource {
  target          = aws_secretsmanager_secret.server
  override_during = plan
  values          = { arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:tests-server-20261123000000000000000002-GhIjKl" }
}

run "fifteen_users_with_realistic_arns_fit" {
  command = plan

  variables {
    consumer_users = ["user_00_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_01_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_02_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_03_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_04_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_05_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_06_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_07_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_08_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_09_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_10_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_11_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_12_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_13_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_14_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"]
  }
  override_resource {
    target          = aws_secretsmanager_secret.consumer
    override_during = plan
    values          = { arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:tests-user-20261123000000000000000001-AbCdEf" }
  }

  assert {
    condition     = length(local.user_data) <= local.user_data_max_bytes && strcontains(local.user_data, "tests-user-20261123000000000000000001-AbCdEf")
    error_message = "the user data with 15 realistic consumer secret ARNs fits EC2's limit"
  }
}

# Secrets Manager takes names of up to 512 characters, Aurora 15 readers: at their longest they cannot fit in 16 KB.
run "secret_arns_too_long_for_the_user_data" {
  command = plan

  variables {
    # With the packages object carrying the host agent, the user data has room for 15 such ARNs alone; 15 readers
    # with long instance identifiers beside them do not fit.
    reader_endpoints = ["reader-01-rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr.c0ffee123456.ap-southeast-4.rds.amazonaws.com", "reader-02-rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr.c0ffee123456.ap-southeast-4.rds.amazonaws.com", "reader-03-rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr.c0ffee123456.ap-southeast-4.rds.amazonaws.com", "reader-04-rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr.c0ffee123456.ap-southeast-4.rds.amazonaws.com", "reader-05-rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr.c0ffee123456.ap-southeast-4.rds.amazonaws.com", "reader-06-rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr.c0ffee123456.ap-southeast-4.rds.amazonaws.com", "reader-07-rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr.c0ffee123456.ap-southeast-4.rds.amazonaws.com", "reader-08-rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr.c0ffee123456.ap-southeast-4.rds.amazonaws.com", "reader-09-rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr.c0ffee123456.ap-southeast-4.rds.amazonaws.com", "reader-10-rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr.c0ffee123456.ap-southeast-4.rds.amazonaws.com", "reader-11-rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr.c0ffee123456.ap-southeast-4.rds.amazonaws.com", "reader-12-rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr.c0ffee123456.ap-southeast-4.rds.amazonaws.com", "reader-13-rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr.c0ffee123456.ap-southeast-4.rds.amazonaws.com", "reader-14-rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr.c0ffee123456.ap-southeast-4.rds.amazonaws.com", "reader-15-rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr.c0ffee123456.ap-southeast-4.rds.amazonaws.com"]
    consumer_users   = ["user_00_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_01_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_02_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_03_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_04_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_05_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_06_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_07_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_08_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_09_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_10_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_11_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_12_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_13_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "user_14_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"]
  }
  override_resource {
    target          = aws_secretsmanager_secret.consumer
    override_during = plan
    values          = { arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:tests-nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn-AbCdEf" }
  }

  expect_failures = [aws_launch_template.this]
}
