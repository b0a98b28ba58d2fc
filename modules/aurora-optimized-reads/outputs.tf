output "cluster_identifier" {
  description = "The cluster identifier, available once every instance exists (a proxy target registered with it needs them)."
  value       = aws_rds_cluster.this.cluster_identifier
  depends_on  = [module.writer, module.readers]
}

output "cluster_resource_id" {
  description = "The cluster's resource ID, the dbuser part of rds-db:connect ARNs for IAM logins to the cluster (the proxy's, with end-to-end IAM)."
  value       = aws_rds_cluster.this.cluster_resource_id
}

output "cluster_arn" {
  description = "ARN of the cluster."
  value       = aws_rds_cluster.this.arn
}

output "writer_endpoint" {
  description = "The cluster (writer) endpoint."
  value       = aws_rds_cluster.this.endpoint
}

output "reader_endpoint" {
  description = "The cluster's reader endpoint (connection-level round robin, no pooling: prefer a proxy READ_ONLY endpoint)."
  value       = aws_rds_cluster.this.reader_endpoint
}

output "engine_version_actual" {
  description = "The engine version the cluster runs; above engine_version after an automatic minor upgrade."
  value       = aws_rds_cluster.this.engine_version_actual
}

output "port" {
  description = "The PostgreSQL port."
  value       = aws_rds_cluster.this.port
}

output "master_username" {
  description = "Name of the master user."
  value       = var.master_username
}

output "database_name" {
  description = "Name of the database created in the cluster."
  value       = var.database_name
}

output "master_user_secret_arn" {
  description = "ARN of the RDS-managed master user secret (Secrets Manager), for the proxy."
  value       = aws_rds_cluster.this.master_user_secret[0].secret_arn
}

output "kms_key_arn" {
  description = "The key that encrypts storage, the master secret, Performance Insights and the log."
  value       = local.kms_key_arn
}

output "security_group_id" {
  description = "The cluster's security group (no ingress until a proxy is granted)."
  value       = aws_security_group.this.id
}

output "writer_instance_identifier" {
  description = "The writer's DB instance identifier."
  value       = module.writer.identifiers[0]
}

output "reader_instance_identifiers" {
  description = "The readers' DB instance identifiers, in order."
  value       = module.readers.identifiers
}

output "writer_instance_endpoint" {
  description = "The writer instance's own endpoint (DNS name): it keeps naming that instance after a failover, when it is a reader."
  value       = module.writer.instances[0].endpoint
}

output "reader_instance_endpoints" {
  description = "The readers' instance endpoints (DNS names), in order: a self-managed pooler pools for each reader."
  value       = [for i in module.readers.instances : i.endpoint]
}

output "instance_identifiers" {
  description = "Every DB instance identifier, writer first (known at plan: the module names them)."
  value       = concat([local.writer_identifier], local.reader_identifiers)
}

output "instance_class" {
  description = "DB instance class of every instance."
  value       = var.instance_class
}

output "engine_version" {
  description = "Aurora PostgreSQL engine version."
  value       = var.engine_version
}

output "log_group_name" {
  description = "The exported PostgreSQL log group."
  value       = aws_cloudwatch_log_group.postgresql.name
}

output "sizing" {
  description = "How Aurora splits each instance's NVMe storage (GiB: nvme, temporary_objects, internal, tiered_cache) and Aurora's default max_connections with how the kit knows it (max_connections_basis: published, published-same-memory, capped or deduced), from the kit's model."
  value = {
    instance_class        = var.instance_class
    nvme_gib              = local.spec.nvme_gib
    temporary_objects_gib = local.spec.temporary_objects_gib
    internal_gib          = local.spec.internal_gib
    tiered_cache_gib      = local.spec.tiered_cache_gib
    max_connections       = local.spec.max_connections
    max_connections_basis = local.spec.max_connections_basis
  }
}

output "tiered_cache_gib" {
  description = "Optimized Reads tiered cache per instance (GiB)."
  value       = local.spec.tiered_cache_gib
}

output "temporary_objects_gib" {
  description = "NVMe space for temporary objects per instance (GiB)."
  value       = local.spec.temporary_objects_gib
}

output "max_connections" {
  description = "Aurora's default max_connections per instance: LEAST(DBInstanceClassMemory/9531392, 5000), from AWS's published values (sizing.max_connections_basis)."
  value       = local.spec.max_connections
}
