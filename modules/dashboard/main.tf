data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}
data "aws_region" "current" {}

locals {
  alarm_name_prefix = "${var.dashboard_name}-"

  # The PgBouncer fleet's inputs come together or not at all (the dashboard's precondition says which are
  # missing). Whether it is charted hangs on the name alone: the ARN suffixes are known only after apply.
  pgbouncer_inputs  = { pgbouncer_fleet_name = var.pgbouncer_fleet_name, pgbouncer_targets = var.pgbouncer_targets, pgbouncer_load_balancer_arn_suffix = var.pgbouncer_load_balancer_arn_suffix, pgbouncer_target_group_arn_suffixes = var.pgbouncer_target_group_arn_suffixes, pgbouncer_hosts = var.pgbouncer_hosts }
  pgbouncer_missing = [for name, value in local.pgbouncer_inputs : name if value == null]
  pgbouncer         = var.pgbouncer_fleet_name != null
  # The fleet's listeners: both transaction ones, and each session-pooling one it has a target group for (the
  # map's keys are known at plan), as Dashboard charts those its proxy's endpoints added.
  pooler_listeners = [for l in local.pooler_listener_series : l if !l.session || contains(try(keys(var.pgbouncer_target_group_arn_suffixes), []), lower(l.listener))]

  # The lines of each scope, as Dashboard draws them: one per instance, endpoint, target role or
  # function, with its label, the start of its alarms' names, the instance selections it falls under
  # (metric_catalog and alarm_catalog's `instances`), and the values of its dimensions (scope_dimensions).
  series = {
    instance = [
      for i, id in var.instance_identifiers : {
        label      = i == 0 ? "writer" : "reader-${i}"
        alarm_name = i == 0 ? "Writer" : "Reader${i}"
        selections = ["all", i == 0 ? "writer" : "readers"]
        subject    = { instance_identifier = id }
      }
    ]
    proxy-endpoint = var.proxy_name == null ? [] : concat(
      [{ label = local.default_endpoint_name, alarm_name = null, selections = ["all"], subject = { proxy_name = var.proxy_name, endpoint_name = local.default_endpoint_name } }],
      [for name, role in var.proxy_endpoints : { label = "${name} (${role})", alarm_name = null, selections = ["all"], subject = { proxy_name = var.proxy_name, endpoint_name = name } }],
    )
    proxy-target-role = var.proxy_name == null ? [] : [
      for t in local.target_role_series : { label = t.role, alarm_name = t.alarm_name, selections = ["all"], subject = { proxy_name = var.proxy_name, target_role = t.role } }
    ]
    # The PgBouncer engine: one line per listener and pool target (READ_WRITE's one target, READ_ONLY's
    # readers numbered as the instances are), and per listener's load balancer target group.
    pooler-target = !local.pgbouncer || var.pgbouncer_targets == null ? [] : flatten([
      for l in local.pooler_listeners : [
        for i, target in flatten([var.pgbouncer_targets[lower(l.role)]]) : {
          label      = l.numbered ? "${l.role} ${l.target_label}-${i + 1}" : "${l.role} ${l.target_label}"
          alarm_name = l.numbered ? "${l.alarm_name}${i + 1}" : l.alarm_name
          selections = ["all"]
          subject    = { fleet_name = var.pgbouncer_fleet_name, listener = l.listener, target = target }
        }
      ]
    ])
    pooler-target-group = !local.pgbouncer || var.pgbouncer_target_group_arn_suffixes == null ? [] : [
      for l in local.pooler_listeners : {
        label      = l.listener
        alarm_name = l.target_group_alarm_name
        selections = ["all"]
        subject    = { load_balancer = var.pgbouncer_load_balancer_arn_suffix, target_group = var.pgbouncer_target_group_arn_suffixes[lower(l.listener)] }
      }
    ]
    function = [for label, name in var.functions : { label = label, alarm_name = label, selections = ["all"], subject = { function_name = name } }]
  }

  # Each line's dimensions: its subject's values, or the scope's fixed ones.
  dimensions = {
    for scope, lines in local.series : scope => [
      for s in lines : { for d in local.scope_dimensions[scope] : d.name => d.value != null ? d.value : s.subject[d.subject] }
    ]
  }

  sections = [
    for s in [
      { title = "Aurora instances", scope = "instance" },
      { title = "RDS Proxy endpoints (client side)", scope = "proxy-endpoint" },
      { title = "RDS Proxy target roles (database side)", scope = "proxy-target-role" },
      { title = "PgBouncer listeners per pool target", scope = "pooler-target" },
      { title = "PgBouncer load balancer target groups", scope = "pooler-target-group" },
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
        # One line per series and statistic: [namespace, metric, dimension, value, ..., options]. (concat, not
        # flatten: flatten would merge the lines into one list.)
        metrics = concat([], [
          for i, s in local.series[m.scope] : [
            for stat in m.statistics : concat(
              [m.namespace, m.metric_name], flatten([for name, value in local.dimensions[m.scope][i] : [name, value]]),
              [{ label = length(m.statistics) > 1 ? "${s.label} ${stat}" : s.label, period = local.metric_period, stat = stat }],
            )
          ] if contains(s.selections, m.instances)
        ]...)
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

  lifecycle {
    precondition {
      condition     = length(local.pgbouncer_missing) == 0 || length(local.pgbouncer_missing) == length(local.pgbouncer_inputs)
      error_message = "the PgBouncer fleet is charted from ${join(", ", keys(local.pgbouncer_inputs))} together: ${join(", ", local.pgbouncer_missing)} missing (pass the pgbouncer-proxy module's name, metric_targets, load_balancer_arn_suffix, target_group_arn_suffixes and hosts)"
    }
  }
}

# --- Alarms: alarm_catalog (metrics.tf) on each line of its scope ------------------------------------

locals {
  thresholds = var.thresholds

  # "<line's alarm name><alarm name>" (WriterCpu, ProxyReadOnlyPinned, ReaderErrors) => the alarm with its line.
  alarms = merge([
    for a in local.alarm_catalog : {
      for i, s in local.series[a.scope] : "${s.alarm_name}${a.name}" => merge(a, { label = s.label, dimensions = local.dimensions[a.scope][i] })
      if contains(s.selections, a.instances)
    }
  ]...)

  alarm_topic_arn = var.create_alarm_topic ? aws_sns_topic.alarms[0].arn : var.alarm_topic_arn
}

resource "aws_cloudwatch_metric_alarm" "metric" {
  for_each = { for name, a in local.alarms : name => a if a.expression == null }

  alarm_name          = "${local.alarm_name_prefix}${each.key}"
  alarm_description   = "aurora-proxy-kit ${var.dashboard_name}: ${each.key} ${each.value.symbol} ${local.thresholds[each.value.threshold]}"
  namespace           = each.value.inputs[0].namespace
  metric_name         = each.value.inputs[0].metric_name
  dimensions          = each.value.dimensions
  statistic           = each.value.inputs[0].statistic
  period              = local.metric_period
  threshold           = local.thresholds[each.value.threshold]
  comparison_operator = each.value.comparison
  evaluation_periods  = each.value.evaluation_periods
  datapoints_to_alarm = each.value.datapoints_to_alarm
  # No data means no traffic (or an instance without NVMe metrics yet), not a failure (the catalog's missing_data).
  treat_missing_data = each.value.missing_data
  alarm_actions      = [local.alarm_topic_arn]
  ok_actions         = [local.alarm_topic_arn]
  tags               = var.tags
}

resource "aws_cloudwatch_metric_alarm" "expression" {
  for_each = { for name, a in local.alarms : name => a if a.expression != null }

  alarm_name          = "${local.alarm_name_prefix}${each.key}"
  alarm_description   = "aurora-proxy-kit ${var.dashboard_name}: ${each.key} ${each.value.symbol} ${local.thresholds[each.value.threshold]}"
  threshold           = local.thresholds[each.value.threshold]
  comparison_operator = each.value.comparison
  evaluation_periods  = each.value.evaluation_periods
  datapoints_to_alarm = each.value.datapoints_to_alarm
  # MissingHosts: no data means no host registered, which counts as missing (the catalog's missing_data).
  treat_missing_data = each.value.missing_data
  alarm_actions      = [local.alarm_topic_arn]
  ok_actions         = [local.alarm_topic_arn]
  tags               = var.tags

  metric_query {
    id = "expression"
    # The fleet's host count where the expression has the catalog's token for it (a number, as metric math takes).
    expression  = var.pgbouncer_hosts == null ? each.value.expression : replace(each.value.expression, local.fleet_hosts_token, tostring(var.pgbouncer_hosts))
    label       = "${each.value.label} ${each.value.expression_label}"
    return_data = true
  }

  dynamic "metric_query" {
    for_each = each.value.inputs
    content {
      id = metric_query.value.id
      metric {
        namespace   = metric_query.value.namespace
        metric_name = metric_query.value.metric_name
        dimensions  = each.value.dimensions
        stat        = metric_query.value.statistic
        period      = local.metric_period
      }
    }
  }
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

  # CloudWatch publishes alarm notifications to the topic and needs the key for that: only for this module's alarms.
  statement {
    sid       = local.alarm_topic_sid
    actions   = local.alarm_key_actions
    resources = ["*"]
    principals {
      type        = "Service"
      identifiers = [local.alarm_topic_principal]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [data.aws_caller_identity.current.account_id]
    }
    condition {
      test     = "ArnLike"
      variable = "aws:SourceArn"
      values   = [local.alarm_source_arn]
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

  # The topic policy replaces SNS's default one: CloudWatch may publish only for this module's alarms.
  statement {
    sid       = local.alarm_topic_sid
    actions   = local.alarm_topic_actions
    resources = [aws_sns_topic.alarms[0].arn]
    principals {
      type        = "Service"
      identifiers = [local.alarm_topic_principal]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [data.aws_caller_identity.current.account_id]
    }
    condition {
      test     = "ArnLike"
      variable = "aws:SourceArn"
      values   = [local.alarm_source_arn]
    }
  }
}

resource "aws_sns_topic_policy" "alarms" {
  count = var.create_alarm_topic ? 1 : 0

  arn    = aws_sns_topic.alarms[0].arn
  policy = data.aws_iam_policy_document.topic[0].json
}
