data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}
data "aws_region" "current" {}

locals {
  period = 60

  # The lines of each scope: one per instance, endpoint, target role or function (as DatabaseDashboard draws them).
  series = {
    instance = [
      for i, id in var.instance_identifiers : {
        label      = i == 0 ? "writer" : "reader-${i}"
        dimensions = ["DBInstanceIdentifier", id]
        reader     = i > 0
      }
    ]
    proxy-endpoint = var.proxy_name == null ? [] : concat(
      [{ label = "default", dimensions = ["ProxyName", var.proxy_name, "EndpointName", "default"], reader = false }],
      [for name, role in var.proxy_endpoints : { label = "${name} (${role})", dimensions = ["ProxyName", var.proxy_name, "EndpointName", name], reader = false }],
    )
    proxy-target-role = var.proxy_name == null ? [] : [
      for role in ["READ_WRITE", "READ_ONLY"] : { label = role, dimensions = ["ProxyName", var.proxy_name, "TargetGroup", "default", "TargetRole", role], reader = false }
    ]
    function = [for label, name in var.functions : { label = label, dimensions = ["FunctionName", name], reader = false }]
  }

  sections = [
    for s in [
      { title = "Aurora instances", scope = "instance" },
      { title = "RDS Proxy endpoints (client side)", scope = "proxy-endpoint" },
      { title = "RDS Proxy target roles (database side)", scope = "proxy-target-role" },
      { title = "Lambda consumers", scope = "function" },
    ] : s if length(local.series[s.scope]) > 0
  ]

  graph = {
    for m in local.metric_catalog : "${m.scope}/${m.metric_name}" => {
      type   = "metric"
      width  = 8
      height = 6
      properties = {
        view   = "timeSeries"
        title  = m.optimized_reads_only ? "${m.metric_name} (Optimized Reads)" : m.metric_name
        region = data.aws_region.current.region
        metrics = flatten([
          # Replica lag is a reader metric; the writer has none.
          for s in local.series[m.scope] : [
            for stat in m.statistics : concat(
              [m.namespace, m.metric_name], s.dimensions,
              [{ label = length(m.statistics) > 1 ? "${s.label} ${stat}" : s.label, period = local.period, stat = stat }],
            )
          ] if m.metric_name != "AuroraReplicaLag" || s.reader
        ])
        yAxis = { left = { label = m.unit, showUnits = false, min = 0 } }
      }
    }
  }

  widgets = flatten([
    for s in local.sections : concat(
      [{ type = "text", width = 24, height = 1, properties = { markdown = "## ${s.title}", background = "transparent" } }],
      [for m in local.metric_catalog : local.graph["${m.scope}/${m.metric_name}"] if m.scope == s.scope],
    )
  ])
}

resource "aws_cloudwatch_dashboard" "this" {
  dashboard_name = var.dashboard_name
  dashboard_body = jsonencode({ start = "-PT3H", widgets = local.widgets })
}

# --- Alarms, the same set and thresholds as DatabaseDashboard --------------------------------------

locals {
  thresholds = var.thresholds

  instance_alarms = merge([
    for i, id in var.instance_identifiers : merge(
      {
        "${i == 0 ? "Writer" : "Reader${i}"}Cpu"              = { id = id, metric = "CPUUtilization", statistic = "Average", threshold = local.thresholds.cpu_utilization_percent, high = true }
        "${i == 0 ? "Writer" : "Reader${i}"}FreeableMemory"   = { id = id, metric = "FreeableMemory", statistic = "Minimum", threshold = local.thresholds.freeable_memory_bytes, high = false }
        "${i == 0 ? "Writer" : "Reader${i}"}FreeLocalStorage" = { id = id, metric = "FreeLocalStorage", statistic = "Minimum", threshold = local.thresholds.free_local_storage_bytes, high = false }
      },
      i == 0 ? {} : { "Reader${i}ReplicaLag" = { id = id, metric = "AuroraReplicaLag", statistic = "Maximum", threshold = local.thresholds.replica_lag_ms, high = true } },
    )
  ]...)

  proxy_roles = var.proxy_name == null ? {} : { ReadWrite = "READ_WRITE", ReadOnly = "READ_ONLY" }

  function_alarms = merge([
    for label, name in var.functions : {
      "${label}Errors"    = { name = name, metric = "Errors", threshold = local.thresholds.function_errors }
      "${label}Throttles" = { name = name, metric = "Throttles", threshold = local.thresholds.function_throttles }
    }
  ]...)

  alarm_topic_arn = var.create_alarm_topic ? aws_sns_topic.alarms[0].arn : var.alarm_topic_arn
}

resource "aws_cloudwatch_metric_alarm" "instance" {
  for_each = local.instance_alarms

  alarm_name          = "${var.dashboard_name}-${each.key}"
  alarm_description   = "aurora-proxy-kit ${var.dashboard_name}: ${each.key} ${each.value.high ? ">=" : "<="} ${each.value.threshold}"
  namespace           = "AWS/RDS"
  metric_name         = each.value.metric
  dimensions          = { DBInstanceIdentifier = each.value.id }
  statistic           = each.value.statistic
  period              = local.period
  threshold           = each.value.threshold
  comparison_operator = each.value.high ? "GreaterThanOrEqualToThreshold" : "LessThanOrEqualToThreshold"
  evaluation_periods  = 5
  datapoints_to_alarm = 3
  # No data means no traffic (or an instance without NVMe metrics yet), not a failure.
  treat_missing_data = "notBreaching"
  alarm_actions      = [local.alarm_topic_arn]
  ok_actions         = [local.alarm_topic_arn]
  tags               = var.tags
}

resource "aws_cloudwatch_metric_alarm" "proxy_pool_utilization" {
  for_each = local.proxy_roles

  alarm_name          = "${var.dashboard_name}-Proxy${each.key}PoolUtilization"
  alarm_description   = "aurora-proxy-kit ${var.dashboard_name}: Proxy${each.key}PoolUtilization >= ${local.thresholds.proxy_pool_utilization_percent}"
  threshold           = local.thresholds.proxy_pool_utilization_percent
  comparison_operator = "GreaterThanOrEqualToThreshold"
  evaluation_periods  = 5
  datapoints_to_alarm = 3
  treat_missing_data  = "notBreaching"
  alarm_actions       = [local.alarm_topic_arn]
  ok_actions          = [local.alarm_topic_arn]
  tags                = var.tags

  metric_query {
    id          = "utilization"
    expression  = "100 * connections / IF(allowed > 0, allowed, 1)"
    label       = "${each.value} pool utilization (%)"
    return_data = true
  }

  metric_query {
    id = "connections"
    metric {
      namespace   = "AWS/RDS"
      metric_name = "DatabaseConnections"
      dimensions  = { ProxyName = var.proxy_name, TargetGroup = "default", TargetRole = each.value }
      stat        = "Sum"
      period      = local.period
    }
  }

  metric_query {
    id = "allowed"
    metric {
      namespace   = "AWS/RDS"
      metric_name = "MaxDatabaseConnectionsAllowed"
      dimensions  = { ProxyName = var.proxy_name, TargetGroup = "default", TargetRole = each.value }
      stat        = "Maximum"
      period      = local.period
    }
  }
}

resource "aws_cloudwatch_metric_alarm" "proxy_pinned" {
  for_each = local.proxy_roles

  alarm_name          = "${var.dashboard_name}-Proxy${each.key}Pinned"
  alarm_description   = "aurora-proxy-kit ${var.dashboard_name}: Proxy${each.key}Pinned >= ${local.thresholds.pinned_connections}"
  namespace           = "AWS/RDS"
  metric_name         = "DatabaseConnectionsCurrentlySessionPinned"
  dimensions          = { ProxyName = var.proxy_name, TargetGroup = "default", TargetRole = each.value }
  statistic           = "Sum"
  period              = local.period
  threshold           = local.thresholds.pinned_connections
  comparison_operator = "GreaterThanOrEqualToThreshold"
  evaluation_periods  = 5
  datapoints_to_alarm = 3
  treat_missing_data  = "notBreaching"
  alarm_actions       = [local.alarm_topic_arn]
  ok_actions          = [local.alarm_topic_arn]
  tags                = var.tags
}

resource "aws_cloudwatch_metric_alarm" "function" {
  for_each = local.function_alarms

  alarm_name          = "${var.dashboard_name}-${each.key}"
  alarm_description   = "aurora-proxy-kit ${var.dashboard_name}: ${each.key} >= ${each.value.threshold}"
  namespace           = "AWS/Lambda"
  metric_name         = each.value.metric
  dimensions          = { FunctionName = each.value.name }
  statistic           = "Sum"
  period              = local.period
  threshold           = each.value.threshold
  comparison_operator = "GreaterThanOrEqualToThreshold"
  evaluation_periods  = 5
  datapoints_to_alarm = 1
  treat_missing_data  = "notBreaching"
  alarm_actions       = [local.alarm_topic_arn]
  ok_actions          = [local.alarm_topic_arn]
  tags                = var.tags
}

# --- The alarm topic: encrypted, TLS-only publishing ------------------------------------------------

data "aws_iam_policy_document" "topic_key" {
  count = var.create_alarm_topic ? 1 : 0

  #checkov:skip=CKV_AWS_109:A key policy's Resource is always the key itself ("*"); the account root statement is AWS's default and delegates to IAM
  #checkov:skip=CKV_AWS_111:A key policy's Resource is always the key itself ("*"); the account root statement is AWS's default and delegates to IAM
  #checkov:skip=CKV_AWS_356:A key policy's Resource is always the key itself ("*")
  statement {
    sid       = "AccountAdministers"
    actions   = ["kms:*"]
    resources = ["*"]
    principals {
      type        = "AWS"
      identifiers = ["arn:${data.aws_partition.current.partition}:iam::${data.aws_caller_identity.current.account_id}:root"]
    }
  }

  # CloudWatch publishes alarm notifications to the topic and needs the key for that: only for alarms of this account.
  statement {
    sid       = "CloudWatchAlarmsPublish"
    actions   = ["kms:Decrypt", "kms:GenerateDataKey*"]
    resources = ["*"]
    principals {
      type        = "Service"
      identifiers = ["cloudwatch.amazonaws.com"]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [data.aws_caller_identity.current.account_id]
    }
  }
}

resource "aws_kms_key" "alarm_topic" {
  count = var.create_alarm_topic ? 1 : 0

  description         = "Encrypts the alarm topic of ${var.dashboard_name}"
  enable_key_rotation = true
  policy              = data.aws_iam_policy_document.topic_key[0].json
  tags                = var.tags
}

resource "aws_sns_topic" "alarms" {
  count = var.create_alarm_topic ? 1 : 0

  name              = "${var.dashboard_name}-alarms"
  display_name      = "aurora-proxy-kit alarms"
  kms_master_key_id = aws_kms_key.alarm_topic[0].arn
  tags              = var.tags
}

data "aws_iam_policy_document" "topic" {
  count = var.create_alarm_topic ? 1 : 0

  statement {
    sid       = "AllowPublishThroughSSLOnly"
    effect    = "Deny"
    actions   = ["sns:Publish"]
    resources = [aws_sns_topic.alarms[0].arn]
    principals {
      type        = "*"
      identifiers = ["*"]
    }
    condition {
      test     = "Bool"
      variable = "aws:SecureTransport"
      values   = ["false"]
    }
  }

  statement {
    sid       = "CloudWatchAlarmsOfThisAccountPublish"
    actions   = ["sns:Publish"]
    resources = [aws_sns_topic.alarms[0].arn]
    principals {
      type        = "Service"
      identifiers = ["cloudwatch.amazonaws.com"]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [data.aws_caller_identity.current.account_id]
    }
  }
}

resource "aws_sns_topic_policy" "alarms" {
  count = var.create_alarm_topic ? 1 : 0

  arn    = aws_sns_topic.alarms[0].arn
  policy = data.aws_iam_policy_document.topic[0].json
}
