output "dashboard_name" {
  description = "Name of the dashboard."
  value       = aws_cloudwatch_dashboard.this.dashboard_name
}

output "dashboard_arn" {
  description = "ARN of the dashboard."
  value       = aws_cloudwatch_dashboard.this.dashboard_arn
}

output "dashboard_body" {
  description = "The dashboard body JSON (known at plan when its inputs are)."
  value       = aws_cloudwatch_dashboard.this.dashboard_body
}

output "alarm_topic_arn" {
  description = "The topic every alarm notifies."
  value       = local.alarm_topic_arn
}

output "alarm_names" {
  description = "Names of every alarm."
  value = concat(
    [for a in aws_cloudwatch_metric_alarm.metric : a.alarm_name],
    [for a in aws_cloudwatch_metric_alarm.expression : a.alarm_name],
  )
}

output "thresholds" {
  description = "The alarm thresholds in effect (the kit's defaults for any left out)."
  value       = local.thresholds
}
