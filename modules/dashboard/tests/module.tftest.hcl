mock_provider "aws" {
  mock_data "aws_region" {
    defaults = { region = "us-east-1" }
  }
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
      for m in local.metric_catalog : strcontains(aws_cloudwatch_dashboard.this.dashboard_body, "[\"${m.namespace}\",\"${m.metric_name}\",")
    ])
    error_message = "every metric of the catalog must be on the dashboard"
  }
  assert {
    condition     = length(local.metric_catalog) == 24
    error_message = "the catalog has 24 metrics"
  }
  assert {
    condition     = length(aws_cloudwatch_metric_alarm.instance) == 11 && length(aws_cloudwatch_metric_alarm.proxy_pool_utilization) == 2 && length(aws_cloudwatch_metric_alarm.proxy_pinned) == 2 && length(aws_cloudwatch_metric_alarm.function) == 4
    error_message = "19 alarms as DatabaseDashboard: 3 per instance + lag per reader, 2 per proxy role, 2 per function"
  }
  assert {
    condition     = aws_cloudwatch_metric_alarm.instance["WriterCpu"].threshold == 80 && aws_cloudwatch_metric_alarm.instance["Reader1ReplicaLag"].threshold == 1000 && aws_cloudwatch_metric_alarm.proxy_pool_utilization["ReadOnly"].threshold == 90
    error_message = "default thresholds from the model"
  }
  assert {
    condition     = !contains(keys(aws_cloudwatch_metric_alarm.instance), "WriterReplicaLag")
    error_message = "the writer has no replica lag alarm"
  }
  assert {
    condition     = length(aws_sns_topic.alarms) == 1 && aws_kms_key.alarm_topic[0].enable_key_rotation && anytrue([for s in data.aws_iam_policy_document.topic[0].statement : s.effect == "Deny" && s.condition != null])
    error_message = "the alarm topic is encrypted with a rotating key"
  }
}

run "no_proxy_no_functions" {
  command = plan

  variables {
    proxy_name = null
    functions  = {}
  }

  assert {
    condition     = length(aws_cloudwatch_metric_alarm.proxy_pinned) == 0 && length(aws_cloudwatch_metric_alarm.function) == 0
    error_message = "no proxy or Lambda alarms"
  }
  assert {
    condition     = length([for w in jsondecode(aws_cloudwatch_dashboard.this.dashboard_body).widgets : w if w.type == "text"]) == 1
    error_message = "only the Aurora section"
  }
}
