output "endpoints" {
  description = "Each consumer endpoint by name: host (the interface endpoint's regional DNS name), port, role and its security_group_id (grant clients ingress to it)."
  value = {
    for name, e in var.endpoints : name => {
      host              = aws_vpc_endpoint.this[name].dns_entry[0].dns_name
      port              = local.listeners[e.role].port
      role              = e.role
      security_group_id = aws_security_group.endpoint[name].id
    }
  }
}

output "ports" {
  description = "The listener port of each role: READ_WRITE (the writer) and READ_ONLY (the readers)."
  value       = { for role, l in local.listeners : role => l.port }
}

output "read_only_server_secret_arn" {
  description = "The read-only listener's server role's secret ({\"username\", \"password\"}): the role bootstrap gives the role this password."
  value       = aws_secretsmanager_secret.server.arn
}

output "consumer_secret_arns" {
  description = "Each consumer user's secret ({\"username\", \"password\"}) by user name: the consumer logs in with it."
  value       = { for u, s in aws_secretsmanager_secret.consumer : u => s.arn }
}

output "load_balancer_arn" {
  description = "The internal Network Load Balancer."
  value       = aws_lb.this.arn
}

output "load_balancer_dns_name" {
  description = "The internal Network Load Balancer's DNS name (reachable in the cluster's VPC)."
  value       = aws_lb.this.dns_name
}

output "endpoint_service_name" {
  description = "The VPC endpoint service on the load balancer, for interface endpoints made outside the module."
  value       = aws_vpc_endpoint_service.this.service_name
}

output "autoscaling_group_name" {
  description = "The hosts' Auto Scaling group."
  value       = aws_autoscaling_group.this.name
}

output "host_role_arn" {
  description = "The hosts' IAM role."
  value       = aws_iam_role.host.arn
}

output "host_security_group_id" {
  description = "The hosts' security group."
  value       = aws_security_group.hosts.id
}

output "vcpus_per_host" {
  description = "vCPUs of instance_type: PgBouncer processes per listener on each host."
  value       = local.vcpus
}

output "bootstrap_variables" {
  description = "The values of the bootstrap template's placeholders, as the launch template's user data substitutes them."
  value       = local.bootstrap_variables
}
