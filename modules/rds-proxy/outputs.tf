output "proxy_name" {
  description = "Name of the proxy (the ProxyName dimension of its metrics)."
  value       = aws_db_proxy.this.name
}

output "proxy_arn" {
  description = "ARN of the proxy."
  value       = aws_db_proxy.this.arn
}

output "default_endpoint" {
  description = "Host name of the proxy's default (READ_WRITE) endpoint, in the cluster's VPC."
  value       = aws_db_proxy.this.endpoint
}

output "security_group_id" {
  description = "Security group of the proxy's default endpoint."
  value       = aws_security_group.proxy.id
}

output "role_arn" {
  description = "The role the proxy assumes to log in to the cluster with IAM."
  value       = aws_iam_role.proxy.arn
}

output "endpoints" {
  description = "The additional endpoints by name: host name, ARN, target role, VPC, security group (grant clients ingress to it), and the proxy's default endpoint, the name their TLS certificate is checked against; each is the lambda-consumer module's endpoint input."
  value = {
    for name, e in aws_db_proxy_endpoint.this : name => {
      endpoint          = e.endpoint
      arn               = e.arn
      target_role       = e.target_role
      vpc_id            = var.endpoints[name].vpc_id
      security_group_id = aws_security_group.endpoint[name].id
      # The proxy's certificate names its default endpoint, not this one: consumers verify against it.
      proxy_default_endpoint    = aws_db_proxy.this.endpoint
      is_proxy_default_endpoint = false
    }
  }
}

output "connect_arn_prefix" {
  description = "rds-db:connect resource ARN prefix for IAM authentication through this proxy: append the database user name (arn:<partition>:rds-db:<region>:<account>:dbuser:<proxy resource id>/)."
  value       = "arn:${data.aws_partition.current.partition}:rds-db:${data.aws_region.current.region}:${data.aws_caller_identity.current.account_id}:dbuser:${split(":", aws_db_proxy.this.arn)[6]}/"
}

output "pool_settings" {
  description = "The pool settings applied to the default target group (max_connections_percent at most the share that leaves the reserved connections)."
  value = {
    max_connections_percent           = local.max_connections_percent
    max_idle_connections_percent      = local.max_idle_connections_percent
    connection_borrow_timeout_seconds = var.connection_borrow_timeout_seconds
  }
}

output "max_server_connections" {
  description = "Server connections the pool may open per instance (poolSizing: floor(max_connections * max_connections_percent / 100), never into the reserved connections); null without max_connections."
  value       = var.max_connections == null ? null : min(floor(var.max_connections * local.max_connections_percent / 100), max(0, var.max_connections - local.reserved_connections))
}

output "reserved_connections" {
  description = "Connections of each instance the pool leaves to rdsadmin, AWS's automation, the master user and the role bootstrap."
  value       = local.reserved_connections
}

output "database_users" {
  description = "The database users the proxy may log in to the cluster as (rds-db:connect on dbuser:<cluster resource id>/<user>)."
  value       = var.database_users
}
