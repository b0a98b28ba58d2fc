output "endpoints" {
  description = "The PgBouncer endpoints in the consumer VPC: host, port, role and security group of each."
  value       = module.pooler.endpoints
}

output "client_ca_certificate" {
  description = "The CA certificate (PEM) consumers verify the endpoints against (verify-full by the endpoint's DNS name)."
  value       = module.pooler.client_ca_certificate
}

output "consumer_secret_arns" {
  description = "The consumers' secrets ({\"username\", \"password\"}) by user name."
  value       = module.pooler.consumer_secret_arns
}

output "read_only_server_secret_arn" {
  description = "The read-only listener's server role's secret."
  value       = module.pooler.read_only_server_secret_arn
}

output "load_balancer_arn" {
  description = "The fleet's internal Network Load Balancer."
  value       = module.pooler.load_balancer_arn
}

output "autoscaling_group_name" {
  description = "The PgBouncer hosts' Auto Scaling group."
  value       = module.pooler.autoscaling_group_name
}

output "writer_endpoint" {
  description = "The cluster (writer) endpoint the read/write pools follow."
  value       = module.database.writer_endpoint
}

output "bootstrap_variables" {
  description = "The values the hosts' bootstrap template is rendered with."
  value       = module.pooler.bootstrap_variables
}

output "dashboard_name" {
  description = "CloudWatch dashboard of the cluster and the fleet."
  value       = module.dashboard.dashboard_name
}

output "alarm_topic_arn" {
  description = "The topic every alarm notifies."
  value       = module.dashboard.alarm_topic_arn
}
