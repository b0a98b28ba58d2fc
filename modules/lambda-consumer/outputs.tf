output "function_name" {
  description = "Name of the function (the FunctionName dimension of its metrics)."
  value       = aws_lambda_function.this.function_name
}

output "function_arn" {
  description = "ARN of the function."
  value       = aws_lambda_function.this.arn
}

output "role_arn" {
  description = "The function's execution role."
  value       = aws_iam_role.this.arn
}

output "security_group_id" {
  description = "The function's security group (egress only to its endpoint)."
  value       = aws_security_group.this.id
}

output "log_group_name" {
  description = "The function's log group."
  value       = aws_cloudwatch_log_group.this.name
}

output "target_role" {
  description = "Role of the endpoint the function uses (READ_ONLY or READ_WRITE)."
  value       = var.endpoint.target_role
}
