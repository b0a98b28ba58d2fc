output "function_name" {
  description = "Name of the function (the FunctionName dimension of its metrics)."
  value       = module.function.function.function_name
}

output "function_arn" {
  description = "ARN of the function."
  value       = module.function.function.arn
}

output "role_arn" {
  description = "The function's execution role."
  value       = module.function.role.arn
}

output "security_group_id" {
  description = "The function's security group (egress only to its endpoint)."
  value       = module.function.security_group.id
}

output "log_group_name" {
  description = "The function's log group."
  value       = module.function.log_group.name
}

output "target_role" {
  description = "Role of the endpoint the function uses (READ_ONLY or READ_WRITE)."
  value       = var.endpoint.target_role
}
