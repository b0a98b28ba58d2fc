output "instance_class" {
  description = "DB instance class of every instance."
  value       = module.database.instance_class
}

output "engine_version" {
  description = "Aurora PostgreSQL engine version."
  value       = module.database.engine_version
}

output "tiered_cache_gib" {
  description = "Optimized Reads tiered cache per instance (GiB)."
  value       = module.database.tiered_cache_gib
}

output "temporary_objects_gib" {
  description = "NVMe space for temporary objects per instance (GiB)."
  value       = module.database.temporary_objects_gib
}

output "max_connections" {
  description = "Aurora's default max_connections per instance (AWS's published value for the class or one of its memory)."
  value       = module.database.max_connections
}

output "proxy_max_server_connections" {
  description = "Server connections the proxy may open per instance, leaving the reserved connections."
  value       = module.proxy.max_server_connections
}

output "reserved_connections" {
  description = "Connections of each instance the proxy leaves to rdsadmin, AWS's automation, the master user and the role bootstrap."
  value       = module.proxy.reserved_connections
}

output "read_only_endpoint" {
  description = "READ_ONLY proxy endpoint (consumer VPC)."
  value       = module.proxy.endpoints["${var.name}-ro"].endpoint
}

output "read_write_endpoint" {
  description = "READ_WRITE proxy endpoint (consumer VPC)."
  value       = module.proxy.endpoints["${var.name}-rw"].endpoint
}

output "reader_function" {
  description = "Lambda consumer on the read-only endpoint."
  value       = module.reader.function_name
}

output "writer_function" {
  description = "Lambda consumer on the read/write endpoint."
  value       = module.writer.function_name
}

output "dashboard_name" {
  description = "CloudWatch dashboard."
  value       = module.dashboard.dashboard_name
}

output "database_users" {
  description = "The roles the consumers log in as (made by the role bootstrap), and the proxy's own logins: the same users, never the master user."
  value       = { reader = local.db_users.reader, writer = local.db_users.writer, proxy = module.proxy.database_users }
}

output "consumer_inputs" {
  description = "What a root of its own needs to add consumers and a dashboard to this deployment (examples/split-consumers reads it, e.g. through terraform_remote_state): the consumer VPC and subnets, the proxy's endpoints and connect ARN prefix, the database and the users the proxy may log in as, the instances, the proxy's name and the logs key."
  value = {
    vpc_id               = aws_vpc.this["consumer"].id
    subnet_ids           = local.subnet_ids.consumer
    endpoints            = module.proxy.endpoints
    connect_arn_prefix   = module.proxy.connect_arn_prefix
    database_name        = module.database.database_name
    database_users       = module.proxy.database_users
    instance_identifiers = module.database.instance_identifiers
    proxy_name           = module.proxy.proxy_name
    kms_key_arn          = aws_kms_key.logs.arn
  }
}
