# The reference deployment with the PgBouncer engine: a data VPC holding the Optimized Reads cluster
# and a PgBouncer fleet behind an internal Network Load Balancer, and a consumer VPC reaching the
# fleet through PrivateLink (a read-only and a read/write interface endpoint). Neither VPC has
# internet access or NAT: the hosts install PgBouncer from an S3 object through the S3 gateway
# endpoint and reach Secrets Manager and Session Manager through interface endpoints.

data "aws_availability_zones" "available" {
  state = "available"
}

data "aws_region" "current" {}

# The listeners' certificate, made outside the example (a kit-managed CA, docs/PGBOUNCER-ENGINE.md).
data "aws_secretsmanager_secret" "tls" {
  name = var.tls_secret_name
}

locals {
  azs = slice(data.aws_availability_zones.available.names, 0, 2)
  vpcs = {
    data     = "10.10.0.0/16"
    consumer = "10.20.0.0/16"
  }
  subnets = merge([
    for vpc, cidr in local.vpcs : {
      for i, az in local.azs : "${vpc}-${i}" => { vpc = vpc, az = az, cidr = cidrsubnet(cidr, 6, i) }
    }
  ]...)
  subnet_ids = { for vpc in keys(local.vpcs) : vpc => [for i, _ in local.azs : aws_subnet.isolated["${vpc}-${i}"].id] }
  # The AWS services the hosts call, through interface endpoints in the data VPC.
  host_services = toset(["secretsmanager", "ssm", "ssmmessages", "ec2messages"])
  # Each consumer logs in as a role of its own (its secret is made by the fleet).
  db_users = { reader = "app_reader", writer = "app_writer" }
}

# --- Two isolated VPCs --------------------------------------------------------------------------------

resource "aws_vpc" "this" {
  for_each = local.vpcs

  cidr_block           = each.value
  enable_dns_support   = true
  enable_dns_hostnames = true
  tags                 = { Name = "${var.name}-${each.key}" }
}

resource "aws_subnet" "isolated" {
  for_each = local.subnets

  vpc_id            = aws_vpc.this[each.value.vpc].id
  availability_zone = each.value.az
  cidr_block        = each.value.cidr
  tags              = { Name = "${var.name}-${each.key}-isolated" }
}

resource "aws_route_table" "isolated" {
  for_each = local.subnets

  vpc_id = aws_vpc.this[each.value.vpc].id
  tags   = { Name = "${var.name}-${each.key}-isolated" }
}

resource "aws_route_table_association" "isolated" {
  for_each = local.subnets

  subnet_id      = aws_subnet.isolated[each.key].id
  route_table_id = aws_route_table.isolated[each.key].id
}

# --- The data VPC's endpoints: S3 for the packages, the services the hosts call ----------------------

resource "aws_vpc_endpoint" "s3" {
  vpc_id            = aws_vpc.this["data"].id
  service_name      = "com.amazonaws.${data.aws_region.current.region}.s3"
  vpc_endpoint_type = "Gateway"
  route_table_ids   = [for i, _ in local.azs : aws_route_table.isolated["data-${i}"].id]
  tags              = { Name = "${var.name}-s3" }
}

resource "aws_security_group" "host_services" {
  name_prefix = "${var.name}-host-services-"
  description = "Interface endpoints the PgBouncer hosts call over HTTPS"
  vpc_id      = aws_vpc.this["data"].id
}

resource "aws_vpc_security_group_ingress_rule" "host_services" {
  security_group_id            = aws_security_group.host_services.id
  referenced_security_group_id = module.pooler.host_security_group_id
  ip_protocol                  = "tcp"
  from_port                    = 443
  to_port                      = 443
  description                  = "HTTPS from the PgBouncer hosts"
}

resource "aws_vpc_endpoint" "host_services" {
  for_each = local.host_services

  vpc_id              = aws_vpc.this["data"].id
  service_name        = "com.amazonaws.${data.aws_region.current.region}.${each.key}"
  vpc_endpoint_type   = "Interface"
  subnet_ids          = local.subnet_ids.data
  security_group_ids  = [aws_security_group.host_services.id]
  private_dns_enabled = true
  tags                = { Name = "${var.name}-${each.key}" }
}

# --- The cluster and the fleet ---------------------------------------------------------------------

module "database" {
  source = "../../aurora-optimized-reads"

  cluster_identifier  = var.name
  vpc_id              = aws_vpc.this["data"].id
  subnet_ids          = local.subnet_ids.data
  readers             = var.readers
  deletion_protection = var.deletion_protection
  skip_final_snapshot = !var.deletion_protection
}

module "pooler" {
  source = "../../pgbouncer-proxy"

  name                      = var.name
  vpc_id                    = aws_vpc.this["data"].id
  subnet_ids                = local.subnet_ids.data
  cluster_security_group_id = module.database.security_group_id
  cluster_endpoint          = module.database.writer_endpoint
  reader_endpoints          = module.database.reader_instance_endpoints
  server_port               = module.database.port
  database_name             = module.database.database_name
  max_connections           = module.database.max_connections
  packages_bucket           = var.packages_bucket
  packages_key              = var.packages_key
  tls_secret_arn            = data.aws_secretsmanager_secret.tls.arn
  hosts                     = var.hosts
  instance_type             = var.instance_type
  consumer_users            = values(local.db_users)
  endpoints = {
    "${var.name}-ro" = { vpc_id = aws_vpc.this["consumer"].id, subnet_ids = local.subnet_ids.consumer, role = "READ_ONLY", allowed_security_group_ids = [aws_security_group.consumer.id] }
    "${var.name}-rw" = { vpc_id = aws_vpc.this["consumer"].id, subnet_ids = local.subnet_ids.consumer, role = "READ_WRITE", allowed_security_group_ids = [aws_security_group.consumer.id] }
  }
}

# --- A consumer in the consumer VPC: its security group reaches the endpoints --------------------------

resource "aws_security_group" "consumer" {
  name_prefix = "${var.name}-consumer-"
  description = "Consumers of the PgBouncer endpoints"
  vpc_id      = aws_vpc.this["consumer"].id
}

resource "aws_vpc_security_group_egress_rule" "consumer_to_endpoints" {
  for_each = module.pooler.ports

  security_group_id = aws_security_group.consumer.id
  cidr_ipv4         = aws_vpc.this["consumer"].cidr_block
  ip_protocol       = "tcp"
  from_port         = each.value
  to_port           = each.value
  description       = "PostgreSQL to the ${each.key} PgBouncer endpoint"
}
