output "json" {
  description = "The key policy: the account administers the key (AWS's default statement), CloudWatch Logs of this region encrypts with it for the named log groups only."
  value       = data.aws_iam_policy_document.this.json
}

output "log_group_arns" {
  description = "The log group ARNs (or ARN patterns) the CloudWatch Logs statement admits."
  value       = local.log_group_arns
}
