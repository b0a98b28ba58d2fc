output "identifiers" {
  description = "The DB instance identifiers, in order."
  value       = aws_rds_cluster_instance.this[*].identifier
}

output "instances" {
  description = "The DB instances, in order of identifiers."
  value       = aws_rds_cluster_instance.this
}
