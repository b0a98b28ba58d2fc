data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}

locals {
  # What the route rule reads: the endpoints the hosts call AWS through.
  vpc_endpoints  = var.vpc_endpoints
  partition      = data.aws_partition.current.partition
  instance_parts = split(".", var.instance_type)
  # null for a type outside the catalog (refused by the instance_type validations).
  vcpus   = contains(local.pooler_instance_families, local.instance_parts[0]) ? lookup(local.graviton_size_vcpus, try(local.instance_parts[1], ""), null) : null
  readers = length(var.reader_endpoints)
  # The fleet's budget per target (poolSizing: the percent of max_connections, never into the reserved
  # connections) and what its processes need of it (FLEET_RULES fleet-budget-split).
  budget                = min(floor(var.max_connections * var.max_connections_percent / 100), max(0, var.max_connections - local.reserved_connections))
  processes_per_target  = max(coalesce(local.vcpus, 1), max(1, floor(coalesce(local.vcpus, 1) / max(local.readers, 1))))
  server_connections_in = var.hosts * local.processes_per_target
  # Session pooling (FLEET_RULES fleet-session-budget-split): the roles some endpoint uses it in each get a
  # listener of their own whose pools take session_max_connections_percent of each target's budget, the
  # transaction pools the rest. Only the listeners some endpoint uses exist.
  session_roles      = distinct([for e in values(var.endpoints) : e.role if e.pool_mode == "session"])
  session_budget     = floor(local.budget * var.session_max_connections_percent / 100)
  transaction_budget = local.budget - local.session_budget
  active_listeners   = { for k, l in local.listeners : k => l if l.pool_mode != "session" || contains(local.session_roles, l.role) }
  # Each endpoint's listener: its role's, or its role's session listener.
  endpoint_listeners = { for name, e in var.endpoints : name => local.listeners[e.pool_mode == "session" ? "${e.role}_SESSION" : e.role] }

  consumer_users = toset(var.consumer_users)
  user_secrets   = concat([aws_secretsmanager_secret.server.arn], [for u in var.consumer_users : aws_secretsmanager_secret.consumer[u].arn])

  # The bootstrap's placeholders (BOOTSTRAP_PLACEHOLDERS of lib/model): the same values the CDK
  # construct gives Fn::Sub, so both flavours boot the same hosts.
  bootstrap_variables = {
    ClusterEndpoint           = var.cluster_endpoint
    ReaderEndpoints           = join(" ", var.reader_endpoints)
    WriterInstanceEndpoint    = var.writer_instance_endpoint
    DatabaseName              = var.database_name
    ServerPort                = tostring(var.server_port)
    ServerUser                = var.read_only_server_user
    Hosts                     = tostring(var.hosts)
    Vcpus                     = tostring(coalesce(local.vcpus, 0))
    MaxConnections            = tostring(var.max_connections)
    MaxConnectionsPercent     = tostring(var.max_connections_percent)
    MaxIdleConnectionsPercent = tostring(var.max_idle_connections_percent)
    BorrowTimeoutSeconds      = tostring(var.connection_borrow_timeout_seconds)
    MaxClientConnections      = tostring(local.max_client_connections)
    TcpIdleTimeoutSeconds     = tostring(var.tcp_idle_timeout_seconds)
    PackagesBucket            = var.packages_bucket
    PackagesKey               = var.packages_key
    ServerSecretArn           = aws_secretsmanager_secret.server.arn
    ConsumerSecretArns        = join(" ", [for u in var.consumer_users : aws_secretsmanager_secret.consumer[u].arn])
    TlsSecretArn              = local.tls_secret_arn
    FleetName                 = var.name
    # Terraform takes no signals: an empty stack name, and the host sends none (it waits for healthy capacity instead).
    SignalStack    = ""
    SignalResource = ""
    SignalRegion   = ""
    # The session listeners' short names, read/write first (sessionListenersValue), as the CDK construct gives them.
    SessionListeners             = join(" ", [for k in ["READ_WRITE_SESSION", "READ_ONLY_SESSION"] : local.listeners[k].short if contains(keys(local.active_listeners), k)])
    SessionMaxConnectionsPercent = tostring(var.session_max_connections_percent)
  }
  # The kit's bootstrap, the same text the CDK construct deploys; templatefile fills its placeholders.
  user_data = templatefile("${path.module}/templates/bootstrap.sh.tftpl", local.bootstrap_variables)
}

# --- Secrets: the read-only listener's server role and each consumer user -------------------------

# Letters and digits only: the password is written into PgBouncer's auth file and SQL without quoting questions.
data "aws_secretsmanager_random_password" "user" {
  for_each = toset(concat(["server"], [for u in var.consumer_users : "consumer/${u}"]))

  password_length     = 32
  exclude_punctuation = true
}

resource "aws_secretsmanager_secret" "server" {
  #checkov:skip=CKV2_AWS_57:Rotation must change the role's verifier on Aurora too; the role bootstrap will own that, the hosts already re-read the secret every 5 minutes
  #checkov:skip=CKV_AWS_149:Encrypted with the account's aws/secretsmanager key, as the CDK construct's secrets are; the host role's grant is the secret itself
  name_prefix = "${var.name}-${var.read_only_server_user}-"
  description = "The password the PgBouncer engine's read-only listener logs in to the readers as: ${var.read_only_server_user}"
  tags        = var.tags
}

resource "aws_secretsmanager_secret_version" "server" {
  secret_id     = aws_secretsmanager_secret.server.id
  secret_string = jsonencode({ username = var.read_only_server_user, password = data.aws_secretsmanager_random_password.user["server"].random_password })

  # The data source draws a new password at every plan: the first one is kept (rotation replaces it).
  lifecycle {
    ignore_changes = [secret_string]
  }
}

resource "aws_secretsmanager_secret" "consumer" {
  #checkov:skip=CKV2_AWS_57:Rotation must change the role's verifier on Aurora too; the role bootstrap will own that, the hosts already re-read the secret every 5 minutes
  #checkov:skip=CKV_AWS_149:Encrypted with the account's aws/secretsmanager key, as the CDK construct's secrets are; the host role's grant is the secret itself
  for_each = local.consumer_users

  name_prefix = "${var.name}-${each.key}-"
  description = "The password a consumer of the PgBouncer engine logs in as: ${each.key}"
  tags        = var.tags
}

resource "aws_secretsmanager_secret_version" "consumer" {
  for_each = local.consumer_users

  secret_id     = aws_secretsmanager_secret.consumer[each.key].id
  secret_string = jsonencode({ username = each.key, password = data.aws_secretsmanager_random_password.user["consumer/${each.key}"].random_password })

  lifecycle {
    ignore_changes = [secret_string]
  }
}

# --- The hosts' role: Session Manager, and read access to exactly their secrets and packages -------

data "aws_iam_policy_document" "assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["ec2.amazonaws.com"]
    }
  }
}

data "aws_iam_policy_document" "host" {
  #checkov:skip=CKV_AWS_111:Session Manager's instance actions (ssm:UpdateInstanceInformation, the ssmmessages channels) are on * in AWS's minimal Session Manager policy; PutMetricData has the cloudwatch:namespace condition
  #checkov:skip=CKV_AWS_356:Session Manager's instance actions are on * in AWS's minimal Session Manager policy (getting-started-create-iam-instance-profile); PutMetricData has no resource-level permissions
  # Session Manager for shell access (no key pair, no SSH): the SSM Agent's own calls, on "*" as AWS's minimal policy.
  statement {
    sid       = "SessionManager"
    actions   = local.session_manager_actions
    resources = ["*"]
  }
  statement {
    sid       = "ReadTheUsersAndTlsSecrets"
    actions   = ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"]
    resources = concat(local.user_secrets, [local.tls_secret_arn])
  }
  statement {
    sid       = "ReadThePackages"
    actions   = ["s3:GetObject"]
    resources = ["arn:${local.partition}:s3:::${var.packages_bucket}/${var.packages_key}"]
  }
  # PutMetricData has no resource-level permissions: the namespace condition limits it to the engine's metrics.
  statement {
    sid       = "PublishTheFleetMetrics"
    actions   = ["cloudwatch:PutMetricData"]
    resources = ["*"]
    condition {
      test     = "StringEquals"
      variable = local.metrics_condition_key
      values   = [local.metrics_namespace]
    }
  }
  dynamic "statement" {
    for_each = var.packages_kms_key_arn == null ? [] : [var.packages_kms_key_arn]
    content {
      sid       = "DecryptThePackages"
      actions   = ["kms:Decrypt"]
      resources = [statement.value]
    }
  }
}

resource "aws_iam_role" "host" {
  # name_prefix is at most 38 characters: 29 of the name and "-pooler-".
  name_prefix        = "${var.name}-pooler-"
  description        = "PgBouncer hosts of ${var.name}"
  assume_role_policy = data.aws_iam_policy_document.assume.json
  tags               = var.tags
}

resource "aws_iam_role_policy" "host" {
  name   = "read-secrets-and-packages-publish-metrics"
  role   = aws_iam_role.host.id
  policy = data.aws_iam_policy_document.host.json
}

resource "aws_iam_instance_profile" "host" {
  name_prefix = "${var.name}-pooler-"
  role        = aws_iam_role.host.name
  tags        = var.tags
}

# --- Network: the load balancer reaches the hosts, the hosts reach the cluster and HTTPS endpoints --

resource "aws_security_group" "hosts" {
  name_prefix = "${var.name}-hosts-"
  description = "PgBouncer hosts of ${var.name}"
  vpc_id      = var.vpc_id
  tags        = var.tags

  lifecycle {
    create_before_destroy = true
    # On the group, not on its for_each egress rules, so the message comes once.
    # BEGIN generated pooler-s3-egress-vpc-cidr by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)
    precondition {
      condition     = var.s3_prefix_list_id == null || var.vpc_cidr_block != null
      error_message = "s3_prefix_list_id ${var.s3_prefix_list_id == null ? "null" : var.s3_prefix_list_id} narrows the hosts' HTTPS egress to S3 and the VPC: set vpc_cidr_block too, the VPC's CIDR block, where its interface endpoints are"
    }
    precondition {
      condition     = var.vpc_cidr_block == null || var.s3_prefix_list_id != null
      error_message = "vpc_cidr_block ${var.vpc_cidr_block == null ? "null" : var.vpc_cidr_block} narrows the hosts' HTTPS egress to the VPC and S3: set s3_prefix_list_id too, the id of the Region's S3 prefix list (the gateway endpoint's prefix_list_id), or leave vpc_cidr_block null for HTTPS to any address"
    }
    # END generated pooler-s3-egress-vpc-cidr
  }
}

resource "aws_security_group" "load_balancer" {
  #checkov:skip=CKV2_AWS_5:Attached to aws_lb.this (security_groups)
  name_prefix = "${var.name}-nlb-"
  description = "PgBouncer load balancer of ${var.name}"
  vpc_id      = var.vpc_id
  tags        = var.tags

  lifecycle {
    create_before_destroy = true
  }
}

resource "aws_vpc_security_group_ingress_rule" "hosts_from_load_balancer" {
  for_each = local.active_listeners

  security_group_id            = aws_security_group.hosts.id
  referenced_security_group_id = aws_security_group.load_balancer.id
  ip_protocol                  = "tcp"
  from_port                    = each.value.target_port
  to_port                      = each.value.target_port
  description                  = "${each.key} listener"
}

resource "aws_vpc_security_group_egress_rule" "load_balancer_to_hosts" {
  for_each = local.active_listeners

  security_group_id            = aws_security_group.load_balancer.id
  referenced_security_group_id = aws_security_group.hosts.id
  ip_protocol                  = "tcp"
  from_port                    = each.value.target_port
  to_port                      = each.value.target_port
  description                  = "${each.key} listener"
}

# The target groups' health checks reach the hosts' health endpoint (apk-host serve) on its own port.
resource "aws_vpc_security_group_ingress_rule" "hosts_health_from_load_balancer" {
  security_group_id            = aws_security_group.hosts.id
  referenced_security_group_id = aws_security_group.load_balancer.id
  ip_protocol                  = "tcp"
  from_port                    = local.health_port
  to_port                      = local.health_port
  description                  = "health checks of both listeners (the health endpoint of the hosts)"
}

resource "aws_vpc_security_group_egress_rule" "load_balancer_to_hosts_health" {
  security_group_id            = aws_security_group.load_balancer.id
  referenced_security_group_id = aws_security_group.hosts.id
  ip_protocol                  = "tcp"
  from_port                    = local.health_port
  to_port                      = local.health_port
  description                  = "health checks of both listeners (the health endpoint of the hosts)"
}

resource "aws_vpc_security_group_egress_rule" "hosts_to_cluster" {
  security_group_id            = aws_security_group.hosts.id
  referenced_security_group_id = var.cluster_security_group_id
  ip_protocol                  = "tcp"
  from_port                    = var.server_port
  to_port                      = var.server_port
  description                  = "PgBouncer hosts to Aurora"
}

resource "aws_vpc_security_group_ingress_rule" "cluster_from_hosts" {
  security_group_id            = var.cluster_security_group_id
  referenced_security_group_id = aws_security_group.hosts.id
  ip_protocol                  = "tcp"
  from_port                    = var.server_port
  to_port                      = var.server_port
  description                  = "PgBouncer hosts to Aurora"
}

# HTTPS to Secrets Manager, SSM and S3: the VPC's interface endpoints, and S3's gateway endpoint. The keys come
# from vpc_cidr_block (set with s3_prefix_list_id, a precondition), known at plan: the prefix list id is not when
# the gateway endpoint is made in the same apply, and for_each keys must be.
resource "aws_vpc_security_group_egress_rule" "hosts_https" {
  for_each = var.vpc_cidr_block == null ? { any = { cidr = "0.0.0.0/0", prefix_list = null } } : {
    vpc = { cidr = var.vpc_cidr_block, prefix_list = null }
    s3  = { cidr = null, prefix_list = var.s3_prefix_list_id }
  }

  security_group_id = aws_security_group.hosts.id
  cidr_ipv4         = each.value.cidr
  prefix_list_id    = each.value.prefix_list
  ip_protocol       = "tcp"
  from_port         = 443
  to_port           = 443
  description       = each.key == "any" ? "HTTPS to the VPC endpoints (an isolated VPC has no other route)" : each.key == "vpc" ? "HTTPS to the VPC interface endpoints" : "HTTPS to S3 through the gateway endpoint"
}

# --- The hosts ------------------------------------------------------------------------------------

resource "aws_launch_template" "this" {
  name_prefix = "${var.name}-pooler-"
  description = "PgBouncer hosts of ${var.name}"
  # Pinned (var.image_id): Debian's latest-image parameter, resolved at each plan, would replace every host in a
  # plan that changed nothing of theirs whenever Debian publishes a new image.
  image_id               = var.image_id
  instance_type          = var.instance_type
  update_default_version = true
  user_data              = base64encode(local.user_data)

  iam_instance_profile {
    arn = aws_iam_instance_profile.host.arn
  }

  # IMDSv2 only, one hop: a process in a container on the host cannot reach the role's credentials.
  metadata_options {
    http_endpoint               = "enabled"
    http_tokens                 = "required"
    http_put_response_hop_limit = 1
  }

  monitoring {
    enabled = true
  }

  network_interfaces {
    associate_public_ip_address = false
    delete_on_termination       = true
    security_groups             = [aws_security_group.hosts.id]
  }

  # Debian's images boot from /dev/xvda; the volume holds only the OS and PgBouncer's packages.
  block_device_mappings {
    device_name = "/dev/xvda"
    ebs {
      volume_size           = 8
      volume_type           = "gp3"
      encrypted             = true
      delete_on_termination = true
    }
  }

  tag_specifications {
    resource_type = "instance"
    tags          = merge(var.tags, { Name = "${var.name}-pooler" }, local.certificate_tags)
  }

  tags = var.tags

  lifecycle {
    # The CDK construct checks the longest user data its placeholders allow at synth; here the text itself is
    # known (at apply, once the secrets' ARNs are), and the secrets' names grow with name and consumer_users.
    # ASCII throughout, so length() counts bytes.
    precondition {
      condition     = length(local.user_data) <= local.user_data_max_bytes
      error_message = "the hosts' user data is ${length(local.user_data)} bytes: EC2 takes at most ${local.user_data_max_bytes} before base64 (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/user-data.html); use fewer consumer_users, shorter user names or a shorter name"
    }
    # BEGIN generated fleet-budget-split by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)
    precondition {
      condition     = local.budget >= local.server_connections_in
      error_message = "hosts ${var.hosts} x ${local.processes_per_target} processes per target need ${local.server_connections_in} server connections of a budget of ${local.budget} (max_connections_percent ${var.max_connections_percent} of max_connections ${var.max_connections}, never into the ${local.reserved_connections} connections reserved for rdsadmin, AWS's automation, the master user and the role bootstrap): use fewer hosts or a smaller instance type, or raise max_connections_percent up to ${local.reserved_connections}0"
    }
    # END generated fleet-budget-split
    # BEGIN generated fleet-session-budget-split by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)
    precondition {
      condition     = length(local.session_roles) == 0 || (local.session_budget >= local.server_connections_in && local.transaction_budget >= local.server_connections_in)
      error_message = "session_max_connections_percent ${var.session_max_connections_percent} splits each target's budget of ${local.budget} into ${local.session_budget} server connections for session pooling and ${local.transaction_budget} for transaction pooling, and hosts ${var.hosts} x ${local.processes_per_target} processes per target need ${local.server_connections_in} in each: use fewer hosts or a smaller instance type, raise max_connections_percent, or choose a session_max_connections_percent that leaves both shares that many"
    }
    # END generated fleet-session-budget-split
    # BEGIN generated idle-within-max by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)
    precondition {
      condition     = var.max_idle_connections_percent <= var.max_connections_percent
      error_message = "max_idle_connections_percent ${var.max_idle_connections_percent} exceeds max_connections_percent ${var.max_connections_percent}: set it to ${var.max_connections_percent} or less"
    }
    # END generated idle-within-max
    # BEGIN generated pooler-api-route by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)
    precondition {
      condition     = var.subnets_have_egress || length([for k in ["s3", "secretsmanager", "monitoring", "ssm", "ssmmessages", "ec2messages"] : k if !contains(keys(local.vpc_endpoints), k)]) == 0
      error_message = "no route from the PgBouncer hosts to ${join(", ", [for k in [for k in ["s3", "secretsmanager", "monitoring", "ssm", "ssmmessages", "ec2messages"] : k if !contains(keys(local.vpc_endpoints), k)] : { s3 = "S3 (s3)", secretsmanager = "Secrets Manager (secretsmanager)", monitoring = "CloudWatch metrics (monitoring)", ssm = "Systems Manager (ssm)", ssmmessages = "Session Manager messages (ssmmessages)", ec2messages = "EC2 messages (ec2messages)" }[k]])}: the subnets have no egress (subnets_have_egress) and vpc_endpoints names no VPC endpoint ${length([for k in ["s3", "secretsmanager", "monitoring", "ssm", "ssmmessages", "ec2messages"] : k if !contains(keys(local.vpc_endpoints), k)]) > 1 ? "of them" : "of it"}; pass the VPC's endpoints in vpc_endpoints (${join(", ", [for k in ["s3", "secretsmanager", "monitoring", "ssm", "ssmmessages", "ec2messages"] : k if !contains(keys(local.vpc_endpoints), k)])}), or subnets with a route to a NAT gateway or an internet gateway"
    }
    # END generated pooler-api-route
  }
}

resource "aws_autoscaling_group" "this" {
  name_prefix = "${var.name}-pooler-"
  # Fixed size: each process's pool is a share of each target's budget.
  min_size            = var.hosts
  max_size            = var.hosts
  desired_capacity    = var.hosts
  vpc_zone_identifier = var.subnet_ids
  target_group_arns   = [for t in aws_lb_target_group.this : t.arn]
  # EC2's checks only: every host uses the same Aurora servers, so the load balancer's checks fail on every host
  # at once in a failover or a reader's restart, and ELB health checks would replace every host together
  # (https://docs.aws.amazon.com/autoscaling/ec2/userguide/health-checks-overview.html). A host whose PgBouncer
  # keeps exiting powers itself off (its units' StartLimitAction), which EC2's checks see.
  #checkov:skip=CKV2_AWS_15:ELB health checks would replace every host at once when Aurora's servers fail the load balancer's checks (a failover, a reader's restart); a host whose PgBouncer keeps exiting powers off, which EC2's checks see
  health_check_type         = local.host_health_check_type
  health_check_grace_period = local.host_warmup_seconds

  # Terraform takes no signals from the hosts: an apply that creates or changes the group waits until every
  # host is healthy in both target groups (the load balancer's checks of /read-write and /read-only: both
  # listeners serve), or fails after the timeout. A host whose bootstrap fails powers itself off and never
  # counts, so a broken packages object fails the apply instead of passing it.
  wait_for_elb_capacity     = var.hosts
  wait_for_capacity_timeout = "${local.host_signal_timeout_seconds}s"

  # A pinned version, not $Latest: a new version is a change the instance refresh rolls out.
  launch_template {
    id      = aws_launch_template.this.id
    version = aws_launch_template.this.latest_version
  }

  # Replaces the hosts one at a time when the launch template changes, keeping hosts - 1 in service. The refresh
  # runs after the apply (Terraform starts it, it does not wait for it): a new host that never becomes healthy
  # (a failed bootstrap powers it off) leaves the refresh at that host until it times out, and the auto rollback
  # returns the group to the previous launch template; skip_matching leaves hosts already on the new template alone.
  instance_refresh {
    strategy = "Rolling"
    preferences {
      min_healthy_percentage = floor((var.hosts - 1) * 100 / var.hosts)
      max_healthy_percentage = 100
      # The next old host goes only after the new one's warm-up.
      instance_warmup = tostring(local.host_warmup_seconds)
      skip_matching   = true
      auto_rollback   = true
    }
  }

  tag {
    key                 = "Name"
    value               = "${var.name}-pooler"
    propagate_at_launch = true
  }

  dynamic "tag" {
    for_each = var.tags
    content {
      key                 = tag.key
      value               = tag.value
      propagate_at_launch = true
    }
  }

  # The hosts read the listeners' certificate at boot: issued first; and they wait for what the caller
  # names (hosts_depend_on), as terraform-aws-eks's node groups did with ng_depends_on.
  depends_on = [aws_lambda_invocation.certificate, var.hosts_depend_on]
}

# --- The internal Network Load Balancer: a TCP listener per role ----------------------------------

resource "aws_lb" "this" {
  #checkov:skip=CKV_AWS_91:A Network Load Balancer writes access logs for TLS listeners only; these are TCP (PgBouncer terminates TLS), so logs would stay empty
  #checkov:skip=CKV_AWS_150:The fleet holds no state: a deleted load balancer is recreated by the next apply, as the CDK construct's is
  name                             = var.name
  internal                         = true
  load_balancer_type               = "network"
  subnets                          = var.subnet_ids
  enable_cross_zone_load_balancing = true
  # Set at creation: a load balancer created without a security group cannot get one later.
  security_groups = [aws_security_group.load_balancer.id]
  # Consumers come through PrivateLink only; who may is decided by the endpoint service's principals
  # and each interface endpoint's own security group (their addresses are in other VPCs).
  enforce_security_group_inbound_rules_on_private_link_traffic = "off"
  tags                                                         = var.tags
}

resource "aws_lb_target_group" "this" {
  for_each = local.active_listeners

  # A generated name (ELB allows at most 6 characters of prefix) and create_before_destroy: a change that replaces
  # the group (port, protocol, VPC) makes the new one and moves the listener to it before the old one goes; a fixed
  # name would be taken (DuplicateTargetGroupName) and the old group in use by its listener (ResourceInUse).
  name_prefix = "${each.value.short}-"
  port        = each.value.target_port
  protocol    = "TCP"
  vpc_id      = var.vpc_id
  target_type = "instance"
  # Transactions are short: a host leaving rotation is drained quickly.
  deregistration_delay = 30

  # The host agent's endpoint: 200 only while the listener's processes answer and their servers accept connections.
  health_check {
    protocol            = "HTTP"
    port                = tostring(local.health_port)
    path                = each.value.health_path
    matcher             = "200"
    interval            = local.health_check.interval
    timeout             = local.health_check.timeout
    healthy_threshold   = local.health_check.healthy_threshold
    unhealthy_threshold = local.health_check.unhealthy_threshold
  }

  tags = merge(var.tags, { Name = "${var.name}-${each.value.short}" })

  lifecycle {
    create_before_destroy = true
  }
}

resource "aws_lb_listener" "this" {
  #checkov:skip=CKV_AWS_2:TCP on purpose: PgBouncer terminates TLS (client TLS required), so the load balancer passes the PostgreSQL protocol through
  #checkov:skip=CKV_AWS_103:TCP on purpose: PgBouncer terminates TLS (client TLS required), so the load balancer passes the PostgreSQL protocol through
  for_each = local.active_listeners

  load_balancer_arn = aws_lb.this.arn
  port              = each.value.port
  protocol          = "TCP"
  # PgBouncer's keepalives probe an idle client before the NLB forgets its flow.
  tcp_idle_timeout_seconds = var.tcp_idle_timeout_seconds

  default_action {
    type             = "forward"
    target_group_arn = aws_lb_target_group.this[each.key].arn
  }

  tags = var.tags
}

# --- PrivateLink: an endpoint service on the NLB, an interface endpoint per consumer endpoint -----

resource "aws_vpc_endpoint_service" "this" {
  #checkov:skip=CKV_AWS_123:Only this account is an allowed principal (allowed_principals), so its endpoints are accepted without a manual step, as the CDK construct does
  # Only this account may connect; its endpoints are accepted without a manual step.
  acceptance_required        = false
  network_load_balancer_arns = [aws_lb.this.arn]
  allowed_principals         = ["arn:${local.partition}:iam::${data.aws_caller_identity.current.account_id}:root"]
  tags                       = merge(var.tags, { Name = var.name })
}

resource "aws_security_group" "endpoint" {
  for_each = var.endpoints

  name_prefix = "${each.key}-"
  # The transaction endpoints' description is as before session pooling existed: a new one replaces the group.
  description = "${each.value.role} PgBouncer endpoint ${each.key}${each.value.pool_mode == "session" ? " (session pooling)" : ""}: ingress only from granted clients"
  vpc_id      = each.value.vpc_id
  tags        = var.tags

  lifecycle {
    create_before_destroy = true
  }
}

resource "aws_vpc_security_group_ingress_rule" "endpoint" {
  for_each = merge([
    for name, e in var.endpoints : {
      for i, sg in e.allowed_security_group_ids : "${name}/${i}" => { endpoint = name, source = sg, port = local.endpoint_listeners[name].port }
    }
  ]...)

  security_group_id            = aws_security_group.endpoint[each.value.endpoint].id
  referenced_security_group_id = each.value.source
  ip_protocol                  = "tcp"
  from_port                    = each.value.port
  to_port                      = each.value.port
  description                  = "Granted client of ${each.value.endpoint}"
}

resource "aws_vpc_endpoint" "this" {
  for_each = var.endpoints

  vpc_id              = each.value.vpc_id
  service_name        = aws_vpc_endpoint_service.this.service_name
  vpc_endpoint_type   = "Interface"
  subnet_ids          = each.value.subnet_ids
  security_group_ids  = [aws_security_group.endpoint[each.key].id]
  private_dns_enabled = false
  tags                = merge(var.tags, { Name = each.key })
}
