mock_provider "aws" {
  source = "../../test/terraform/mocks/aws"
}

variables {
  name                      = "kit"
  cluster_identifier        = "kit"
  readers                   = 2
  cluster_security_group_id = "sg-cluster"
  cluster_resource_id       = "cluster-KIT"
  database_users            = ["app_reader", "app_writer"]
  vpc_id                    = "vpc-data"
  subnet_ids                = ["subnet-d1", "subnet-d2"]
  max_connections           = 3479
  endpoints = {
    kit-ro = { vpc_id = "vpc-consumer", subnet_ids = ["subnet-c1", "subnet-c2"], allowed_security_group_ids = ["sg-reporting"] }
    kit-rw = { vpc_id = "vpc-consumer", subnet_ids = ["subnet-c1", "subnet-c2"], target_role = "READ_WRITE" }
  }
}

run "proxy_requires_tls_and_iam" {
  command = apply

  assert {
    condition     = aws_db_proxy.this.require_tls && aws_db_proxy.this.engine_family == "POSTGRESQL"
    error_message = "TLS must be required"
  }
  assert {
    condition     = aws_db_proxy.this.default_auth_scheme == "IAM_AUTH" && length(aws_db_proxy.this.auth) == 0
    error_message = "end-to-end IAM authentication, no secret"
  }
  assert {
    # The model's defaults (100 / 5 / 120), with MaxConnectionsPercent kept to the 99 that leaves the reserve of 10 of 3479.
    condition     = one(aws_db_proxy_default_target_group.this.connection_pool_config).max_connections_percent == 99 && one(aws_db_proxy_default_target_group.this.connection_pool_config).max_idle_connections_percent == 5 && one(aws_db_proxy_default_target_group.this.connection_pool_config).connection_borrow_timeout == 120
    error_message = "the model's pool defaults, below the reserve"
  }
  assert {
    condition     = aws_db_proxy_endpoint.this["kit-ro"].target_role == "READ_ONLY" && aws_db_proxy_endpoint.this["kit-rw"].target_role == "READ_WRITE"
    error_message = "endpoint roles"
  }
  assert {
    condition     = aws_db_proxy_endpoint.this["kit-ro"].vpc_subnet_ids == toset(["subnet-c1", "subnet-c2"]) && aws_security_group.endpoint["kit-ro"].vpc_id == "vpc-consumer"
    error_message = "endpoints sit in the consumer VPC's subnets with their own security group"
  }
  assert {
    condition     = length(aws_vpc_security_group_ingress_rule.endpoint) == 1 && aws_vpc_security_group_ingress_rule.endpoint["kit-ro/0"].referenced_security_group_id == "sg-reporting"
    error_message = "allowed source security groups get ingress"
  }
  assert {
    condition     = output.connect_arn_prefix == "arn:aws:rds-db:us-east-1:123456789012:dbuser:prx-0123456789abcdef0/"
    error_message = "rds-db:connect prefix as CDK builds it"
  }
  assert {
    # floor(3479 * 0.99) = 3444: what the proxy may open leaves the 10 reserved connections.
    condition     = output.max_server_connections == 3444 && output.reserved_connections == 10 && 3479 - output.max_server_connections >= output.reserved_connections
    error_message = "pool sizing leaves the documented reserve"
  }
  assert {
    condition     = output.endpoints["kit-ro"].proxy_default_endpoint == aws_db_proxy.this.endpoint && !output.endpoints["kit-ro"].is_proxy_default_endpoint
    error_message = "each endpoint carries the proxy's default endpoint, the name its consumers verify the certificate against"
  }
  assert {
    condition = one(data.aws_iam_policy_document.connect[0].statement).actions == toset(["rds-db:connect"]) && one(data.aws_iam_policy_document.connect[0].statement).resources == toset([
      "arn:aws:rds-db:us-east-1:123456789012:dbuser:cluster-KIT/app_reader",
      "arn:aws:rds-db:us-east-1:123456789012:dbuser:cluster-KIT/app_writer",
    ])
    error_message = "the proxy role may log in as the consumers' users only"
  }
}

run "bad_target_role" {
  command = plan

  variables {
    endpoints = { kit-x = { vpc_id = "vpc-consumer", subnet_ids = ["subnet-c1"], target_role = "READ_SOMETIMES" } }
  }

  expect_failures = [var.endpoints]
}

run "role_name_prefix_within_the_provider_limit" {
  command = plan

  variables {
    name = "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp"
  }

  assert {
    condition     = length(aws_iam_role.proxy.name_prefix) <= 38
    error_message = "the provider caps an IAM role name_prefix at 38 characters"
  }
}

run "proxy_percent_leaves_the_reserve" {
  command = plan

  variables {
    max_connections              = 100
    max_connections_percent      = 100
    max_idle_connections_percent = 95
  }

  assert {
    # 10 of 100 are reserved: the proxy is given 90%, and the idle share at most that.
    condition     = one(aws_db_proxy_default_target_group.this.connection_pool_config).max_connections_percent == 90 && one(aws_db_proxy_default_target_group.this.connection_pool_config).max_idle_connections_percent == 90 && output.max_server_connections == 90
    error_message = "the percent given to RDS Proxy must leave the reserved connections"
  }
}

run "proxy_percent_without_max_connections" {
  command = plan

  variables {
    max_connections         = null
    max_connections_percent = 60
  }

  assert {
    # A lower percent is the user's; without max_connections the ceiling is the catalog's 99.
    condition     = one(aws_db_proxy_default_target_group.this.connection_pool_config).max_connections_percent == 60 && output.max_server_connections == null
    error_message = "a percent below the reserve's ceiling is kept"
  }
}
