output "function" {
  description = "The aws_lambda_function (function_name, arn, invoke_arn and the rest of its attributes)."
  value       = aws_lambda_function.this
}

output "role" {
  description = "The execution role (aws_iam_role)."
  value       = aws_iam_role.this
}

output "log_group" {
  description = "The function's log group (aws_cloudwatch_log_group)."
  value       = aws_cloudwatch_log_group.this
}

output "security_group" {
  description = "The function's security group (aws_security_group, without rules), or null outside a VPC."
  value       = local.in_vpc ? aws_security_group.this[0] : null
}

output "kms_key_arn" {
  description = "The key of the function's environment and log group: the module's, or kms_key_arn."
  value       = local.kms_key_arn
}

output "kms_key" {
  description = "The KMS key the module made (aws_kms_key), or null when create_kms_key is false."
  value       = var.create_kms_key ? aws_kms_key.this[0] : null
}

output "kms_key_logs_condition" {
  description = "The condition of the module's key policy on CloudWatch Logs (internal/logs-kms-policy's logs_condition: this function's log group only), or null when create_kms_key is false."
  value       = var.create_kms_key ? module.key_policy[0].logs_condition : null
}
