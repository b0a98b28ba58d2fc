output "endpoints" {
  description = "Each consumer endpoint by name, as the lambda-consumer module's endpoint takes it: endpoint (the interface endpoint's regional DNS name), port, target_role, its security_group_id (grant clients ingress to it) and tls_ca_certificate (the CA the listeners' certificate chains to, the only one consumers trust)."
  value = {
    for name, e in var.endpoints : name => {
      endpoint           = aws_vpc_endpoint.this[name].dns_entry[0].dns_name
      port               = local.endpoint_listeners[name].port
      target_role        = e.role
      security_group_id  = aws_security_group.endpoint[name].id
      tls_ca_certificate = local.client_ca_certificate
    }
  }
}

output "read_only_server_user" {
  description = "The read-only listener's server role on Aurora: the role bootstrap makes it (READ_ONLY) with read_only_server_secret_arn's password."
  value       = var.read_only_server_user
}

output "ports" {
  description = "The listener port of each role: READ_WRITE (the writer) and READ_ONLY (the readers); and of each session-pooling listener some endpoint uses, READ_WRITE_SESSION and READ_ONLY_SESSION."
  value       = { for role, l in local.active_listeners : role => l.port }
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

# What the dashboard module charts the fleet by (its pgbouncer_* inputs).
output "fleet_name" {
  description = "The Fleet dimension of the metrics the hosts publish: the module's name."
  value       = var.name
}

output "metric_targets" {
  description = "The Target dimension of each pool the hosts publish, the first label of its server's host name: read_write the cluster identifier, read_only each reader's instance identifier, in the order of reader_endpoints, then the writer instance's (after a failover, the promoted reader's pools pool for it)."
  value = {
    read_write = split(".", var.cluster_endpoint)[0]
    read_only  = [for e in concat(var.reader_endpoints, [var.writer_instance_endpoint]) : split(".", e)[0]]
  }
}

output "load_balancer_arn_suffix" {
  description = "The load balancer's ARN suffix (net/<name>/<id>): the LoadBalancer dimension of its AWS/NetworkELB metrics."
  value       = aws_lb.this.arn_suffix
}

output "target_group_arn_suffixes" {
  description = "Each listener's target group ARN suffix (targetgroup/<name>/<id>), read_write and read_only (and read_write_session, read_only_session where some endpoint uses session pooling): the TargetGroup dimension of their AWS/NetworkELB metrics."
  value       = { for role, tg in aws_lb_target_group.this : lower(role) => tg.arn_suffix }
}

output "client_ca_certificate" {
  description = "The CA certificate (PEM) consumers verify the listeners against (verify-full by an endpoint's DNS name): the module's own CA's, or tls_ca_certificate."
  value       = local.client_ca_certificate

  # BEGIN generated pooler-tls-certificate-pair by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)
  precondition {
    condition     = var.tls_secret_arn == null || var.tls_ca_certificate != null
    error_message = "tls_ca_certificate is not set: a certificate made outside the module (tls_secret_arn) comes with the CA consumers verify it against; pass that CA in tls_ca_certificate, or leave tls_secret_arn unset for the module's own CA"
  }
  precondition {
    condition     = var.tls_ca_certificate == null || var.tls_secret_arn != null
    error_message = "tls_secret_arn is not set: tls_ca_certificate is the CA of a certificate made outside the module, which the hosts read from a secret; pass that secret in tls_secret_arn, or leave tls_ca_certificate unset for the module's own CA"
  }
  # END generated pooler-tls-certificate-pair
}

output "tls_secret_arn" {
  description = "The secret the hosts read the listeners' certificate from: the module's, or tls_secret_arn."
  value       = local.tls_secret_arn
}

output "metrics_namespace" {
  description = "The CloudWatch namespace the hosts publish their metrics in: a CloudWatch interface endpoint's policy passes their PutMetricData in it."
  value       = local.metrics_namespace
}

output "hosts" {
  description = "Hosts of the fleet, a fixed-size group: the dashboard module's pgbouncer_hosts (its MissingHosts alarms)."
  value       = var.hosts
}
