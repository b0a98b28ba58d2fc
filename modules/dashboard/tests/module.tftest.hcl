mock_provider "aws" {
  source = "../../test/terraform/mocks/aws"
}

variables {
  dashboard_name       = "kit"
  instance_identifiers = ["kit-writer", "kit-reader-1", "kit-reader-2"]
  proxy_name           = "kit"
  proxy_endpoints      = { kit-ro = "READ_ONLY", kit-rw = "READ_WRITE" }
  functions            = { Reader = "kit-reader", Writer = "kit-writer-fn" }
}

run "every_catalog_metric_and_the_cdk_alarm_set" {
  command = plan

  assert {
    condition = alltrue([
      for m in local.metric_catalog : strcontains(aws_cloudwatch_dashboard.this.dashboard_body, "[\"${m.namespace}\",\"${m.metric_name}\",") if !startswith(m.scope, "pooler-")
    ]) && !strcontains(aws_cloudwatch_dashboard.this.dashboard_body, "PgBouncer")
    error_message = "every metric of the catalog but the PgBouncer engine's must be on the dashboard of an RDS Proxy"
  }
  assert {
    condition     = length(local.metric_catalog) == 33
    error_message = "the catalog has 33 metrics"
  }
  assert {
    condition     = length(aws_cloudwatch_metric_alarm.metric) == 17 && length(aws_cloudwatch_metric_alarm.expression) == 2
    error_message = "19 alarms as Dashboard: 3 per instance + lag per reader, 2 per proxy role (pool utilization an expression), 2 per function"
  }
  assert {
    condition     = aws_cloudwatch_metric_alarm.metric["WriterCpu"].threshold == 80 && aws_cloudwatch_metric_alarm.metric["Reader1ReplicaLag"].threshold == 1000 && aws_cloudwatch_metric_alarm.expression["ProxyReadOnlyPoolUtilization"].threshold == 90
    error_message = "default thresholds from the model"
  }
  assert {
    condition     = !contains(keys(aws_cloudwatch_metric_alarm.metric), "WriterReplicaLag")
    error_message = "the writer has no replica lag alarm"
  }
  assert {
    condition     = length(aws_sns_topic.alarms) == 1 && aws_kms_key.alarm_topic[0].enable_key_rotation && anytrue([for s in data.aws_iam_policy_document.topic[0].statement : s.effect == "Deny" && s.condition != null])
    error_message = "the alarm topic is encrypted with a rotating key"
  }
}

# AWS's metric tables (lib/model/metrics.ts carries each fact with its source).
run "metrics_as_aws_publishes_them" {
  command = plan

  assert {
    condition = alltrue([
      for name in ["Writer", "Reader1", "Reader2"] :
      aws_cloudwatch_metric_alarm.metric["${name}FreeEphemeralStorage"].metric_name == "FreeEphemeralStorage" && aws_cloudwatch_metric_alarm.metric["${name}FreeEphemeralStorage"].comparison_operator == "LessThanOrEqualToThreshold"
    ]) && !anytrue([for a in aws_cloudwatch_metric_alarm.metric : a.metric_name == "FreeLocalStorage"])
    error_message = "the NVMe-left alarm watches FreeEphemeralStorage on every instance, not FreeLocalStorage"
  }
  assert {
    condition     = one([for w in jsondecode(aws_cloudwatch_dashboard.this.dashboard_body).widgets : w.properties.yAxis.left.label if lookup(w.properties, "title", "") == "ReadLatencyEphemeralStorage (Optimized Reads)"]) == "Seconds"
    error_message = "ReadLatencyEphemeralStorage is published in Seconds"
  }
  assert {
    condition = alltrue([
      for role in ["ProxyReadWrite", "ProxyReadOnly"] : alltrue([
        for q in aws_cloudwatch_metric_alarm.expression["${role}PoolUtilization"].metric_query : q.metric[0].stat == "Sum" if length(q.metric) > 0
      ]) && length([for q in aws_cloudwatch_metric_alarm.expression["${role}PoolUtilization"].metric_query : q if length(q.metric) > 0]) == 2
    ])
    error_message = "pool utilization divides Sum(DatabaseConnections) by Sum(MaxDatabaseConnectionsAllowed): RDS Proxy publishes per proxy host"
  }
  assert {
    condition = [
      for w in jsondecode(aws_cloudwatch_dashboard.this.dashboard_body).widgets : [for line in w.properties.metrics : line[3]]
      if lookup(w.properties, "title", "") == "AuroraOptimizedReadsCacheHitRatio (Optimized Reads)"
    ] == [["kit-writer"]]
    error_message = "AuroraOptimizedReadsCacheHitRatio is charted for the writer only, which publishes it"
  }
}

# CloudWatch may publish to the topic and use its key for this module's alarms only.
run "cloudwatch_may_notify_the_topic" {
  command = plan

  assert {
    condition = alltrue([
      for doc in [data.aws_iam_policy_document.topic[0], data.aws_iam_policy_document.topic_key[0]] : length([
        for s in doc.statement : s if s.effect != "Deny"
        && contains(one(s.principals).identifiers, "cloudwatch.amazonaws.com")
        && contains([for c in s.condition : "${c.test} ${c.variable}"], "StringEquals aws:SourceAccount")
        && contains([for c in s.condition : "${c.test} ${c.variable} ${one(c.values)}"], "ArnLike aws:SourceArn ${local.alarm_source_arn}")
      ]) == 1
    ])
    error_message = "the topic and key policies allow CloudWatch scoped to the account and to the alarm ARN pattern"
  }
  assert {
    condition     = endswith(local.alarm_source_arn, ":alarm:kit-*") && alltrue([for a in concat(values(aws_cloudwatch_metric_alarm.metric), values(aws_cloudwatch_metric_alarm.expression)) : startswith(a.alarm_name, "kit-")])
    error_message = "every alarm's name starts with the prefix the policies admit"
  }
  assert {
    condition     = toset(one([for s in data.aws_iam_policy_document.topic_key[0].statement : s.actions if s.sid == local.alarm_topic_sid])) == toset(["kms:Decrypt", "kms:GenerateDataKey*"])
    error_message = "CloudWatch may use the topic's key"
  }
}

run "no_proxy_no_functions" {
  command = plan

  variables {
    proxy_name = null
    functions  = {}
  }

  assert {
    condition     = length(aws_cloudwatch_metric_alarm.expression) == 0 && length(aws_cloudwatch_metric_alarm.metric) == 3 * 3 + 2
    error_message = "no proxy or Lambda alarms"
  }
  assert {
    condition     = length([for w in jsondecode(aws_cloudwatch_dashboard.this.dashboard_body).widgets : w if w.type == "text"]) == 1
    error_message = "only the Aurora section"
  }
}

# The PgBouncer engine: its hosts' metrics per listener and pool target, its load balancer's per target group.
run "pgbouncer_fleet" {
  command = plan

  variables {
    proxy_name                          = null
    pgbouncer_fleet_name                = "kit"
    pgbouncer_targets                   = { read_write = "kit", read_only = ["kit-reader-1", "kit-reader-2"] }
    pgbouncer_load_balancer_arn_suffix  = "net/kit/50dc6c495c0c9188"
    pgbouncer_target_group_arn_suffixes = { read_write = "targetgroup/kit-rw/73e2d6bc24d8a067", read_only = "targetgroup/kit-ro/943f017f100becff" }
    pgbouncer_hosts                     = 3
    thresholds                          = { pooler_clients_waiting = 25 }
  }

  assert {
    condition = alltrue([
      for m in local.metric_catalog : strcontains(aws_cloudwatch_dashboard.this.dashboard_body, "[\"${m.namespace}\",\"${m.metric_name}\",") if !startswith(m.scope, "proxy-")
    ])
    error_message = "every metric of the catalog but RDS Proxy's is on the dashboard"
  }
  assert {
    condition = [
      for w in jsondecode(aws_cloudwatch_dashboard.this.dashboard_body).widgets : [for line in w.properties.metrics : slice(line, 2, 8)]
      if lookup(w.properties, "title", "") == "ClientsWaiting"
    ] == [[["Fleet", "kit", "Listener", "READ_WRITE", "Target", "kit"], ["Fleet", "kit", "Listener", "READ_ONLY", "Target", "kit-reader-1"], ["Fleet", "kit", "Listener", "READ_ONLY", "Target", "kit-reader-2"]]]
    error_message = "one line per listener and pool target, with the dimensions the hosts publish"
  }
  assert {
    condition = toset([for k, a in aws_cloudwatch_metric_alarm.metric : k if !contains(["AWS/RDS", "AWS/Lambda"], a.namespace)]) == toset([
      "PoolerReadWriteClientsWaiting", "PoolerReadOnly1ClientsWaiting", "PoolerReadOnly2ClientsWaiting",
      "PoolerReadWriteMaxWait", "PoolerReadOnly1MaxWait", "PoolerReadOnly2MaxWait",
      "LoadBalancerReadWriteUnhealthyHosts", "LoadBalancerReadOnlyUnhealthyHosts",
    ]) && toset(keys(aws_cloudwatch_metric_alarm.expression)) == toset(["LoadBalancerReadWriteMissingHosts", "LoadBalancerReadOnlyMissingHosts"])
    error_message = "waiting clients and max wait per pool target, unhealthy and missing hosts per target group, nothing of RDS Proxy"
  }
  # Powered-off or terminated hosts are neither healthy nor unhealthy: the healthy count below the fleet's, no data breaching.
  assert {
    condition = [for q in aws_cloudwatch_metric_alarm.expression["LoadBalancerReadOnlyMissingHosts"].metric_query : q.expression if q.expression != null] == ["3 - healthy"] && alltrue([
      for q in aws_cloudwatch_metric_alarm.expression["LoadBalancerReadOnlyMissingHosts"].metric_query : q.metric[0].metric_name == "HealthyHostCount" && q.metric[0].stat == "Minimum" && q.metric[0].dimensions == tomap({
        TargetGroup = "targetgroup/kit-ro/943f017f100becff", LoadBalancer = "net/kit/50dc6c495c0c9188"
      }) if q.expression == null
    ]) && aws_cloudwatch_metric_alarm.expression["LoadBalancerReadOnlyMissingHosts"].treat_missing_data == "breaching" && aws_cloudwatch_metric_alarm.expression["LoadBalancerReadOnlyMissingHosts"].threshold == 1
    error_message = "missing hosts alarm: the fleet's hosts minus the target group's healthy hosts, missing data breaching"
  }
  assert {
    condition     = aws_cloudwatch_metric_alarm.metric["PoolerReadOnly2ClientsWaiting"].threshold == 25 && aws_cloudwatch_metric_alarm.metric["PoolerReadWriteMaxWait"].threshold == 5 && aws_cloudwatch_metric_alarm.metric["PoolerReadWriteMaxWait"].statistic == "Maximum"
    error_message = "the given threshold, the defaults for the others, at the catalog's statistic"
  }
  assert {
    condition = aws_cloudwatch_metric_alarm.metric["LoadBalancerReadOnlyUnhealthyHosts"].dimensions == tomap({
      TargetGroup = "targetgroup/kit-ro/943f017f100becff", LoadBalancer = "net/kit/50dc6c495c0c9188"
    }) && aws_cloudwatch_metric_alarm.metric["LoadBalancerReadOnlyUnhealthyHosts"].threshold == 1
    error_message = "unhealthy hosts alarm on the load balancer's own metric of the listener's target group"
  }
}

run "pgbouncer_inputs_come_together" {
  command = plan

  variables {
    pgbouncer_fleet_name = "kit"
  }

  expect_failures = [aws_cloudwatch_dashboard.this]
}

run "pgbouncer_fleet_name_too_long" {
  command = plan

  variables {
    pgbouncer_fleet_name = "fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
  }

  expect_failures = [var.pgbouncer_fleet_name]
}

# A fleet with session-pooling listeners (their target groups in the map): their pools and target groups have
# lines and alarms of their own, under their own Listener dimension.
run "pgbouncer_fleet_with_session_listeners" {
  command = plan

  variables {
    proxy_name                          = null
    pgbouncer_fleet_name                = "kit"
    pgbouncer_targets                   = { read_write = "kit", read_only = ["kit-reader-1", "kit-reader-2"] }
    pgbouncer_load_balancer_arn_suffix  = "net/kit/50dc6c495c0c9188"
    pgbouncer_target_group_arn_suffixes = { read_write = "targetgroup/kit-rw/73e2d6bc24d8a067", read_only = "targetgroup/kit-ro/943f017f100becff", read_write_session = "targetgroup/kit-sw/0123456789abcdef" }
    pgbouncer_hosts                     = 2
  }

  assert {
    condition     = contains(keys(aws_cloudwatch_metric_alarm.metric), "PoolerReadWriteSessionClientsWaiting") && contains(keys(aws_cloudwatch_metric_alarm.expression), "LoadBalancerReadWriteSessionMissingHosts") && !contains(keys(aws_cloudwatch_metric_alarm.metric), "PoolerReadOnlySession1ClientsWaiting")
    error_message = "the read/write session listener's pools and target group are alarmed, the absent read-only one is not"
  }
  assert {
    condition     = aws_cloudwatch_metric_alarm.metric["PoolerReadWriteSessionClientsWaiting"].dimensions == tomap({ Fleet = "kit", Listener = "READ_WRITE_SESSION", Target = "kit" })
    error_message = "the session pools' own Listener dimension"
  }
}

run "pgbouncer_bad_inputs" {
  command = plan

  variables {
    pgbouncer_hosts                     = 1.5
    pgbouncer_targets                   = { read_write = "kit", read_only = [] }
    pgbouncer_load_balancer_arn_suffix  = "app/kit/50dc6c495c0c9188"
    pgbouncer_target_group_arn_suffixes = { read_write = "kit-rw", read_only = "targetgroup/kit-ro/943f017f100becff" }
  }

  expect_failures = [var.pgbouncer_hosts, var.pgbouncer_targets, var.pgbouncer_load_balancer_arn_suffix, var.pgbouncer_target_group_arn_suffixes]
}
