output "function_name" {
  description = "Name of the bootstrap function."
  value       = module.function.function.function_name
}

output "role_arn" {
  description = "The function's role (the only principal that reads the master secret)."
  value       = module.function.role.arn
}

output "security_group_id" {
  description = "The function's security group (allow it into a Secrets Manager endpoint on 443)."
  value       = module.function.security_group.id
}

output "roles" {
  description = "The roles made, by name, once the bootstrap has run: consumers log in as them (db_user)."
  value       = { for r in var.roles : r.name => r.access if aws_lambda_invocation.this.result != null }
}
