output "json" {
  description = "The key policy: the account administers the key (AWS's default statement), CloudWatch Logs of this region encrypts with it for the named log groups only."
  value       = data.aws_iam_policy_document.this.json
}

output "logs_condition" {
  description = "The condition of the CloudWatch Logs statement: test (ArnEquals, or ArnLike for a name pattern), variable (kms:EncryptionContext:aws:logs:arn) and values (the log group ARNs)."
  value       = { test = local.operator, variable = local.context_key, values = local.log_group_arns }
}
