# The smallest useful deployment: one VPC, an Optimized Reads cluster with one reader, and an RDS Proxy
# with one READ_ONLY endpoint beside its default READ_WRITE one. Bring your own consumers: give each a
# database role (modules/database-role-bootstrap, as examples/complete does) and list it in the proxy's
# database_users. The proxy uses end-to-end IAM authentication and reads no secret, so the VPC needs no
# Secrets Manager endpoint or NAT.

terraform {
  required_version = ">= 1.5"

  required_providers {
    # 6.15: aws_db_proxy's default_auth_scheme (end-to-end IAM authentication, in modules/rds-proxy).
    aws = {
      source  = "hashicorp/aws"
      version = ">= 6.15"
    }
  }
}

provider "aws" {
  region = "us-east-1"
}

data "aws_availability_zones" "available" {
  state = "available"
}

resource "aws_vpc" "this" {
  cidr_block           = "10.30.0.0/16"
  enable_dns_support   = true
  enable_dns_hostnames = true
}

resource "aws_subnet" "isolated" {
  count = 2

  vpc_id            = aws_vpc.this.id
  availability_zone = data.aws_availability_zones.available.names[count.index]
  cidr_block        = cidrsubnet(aws_vpc.this.cidr_block, 6, count.index)
}

module "database" {
  source = "../../aurora-optimized-reads"

  cluster_identifier = "minimal"
  vpc_id             = aws_vpc.this.id
  subnet_ids         = aws_subnet.isolated[*].id
  readers            = 1
}

module "proxy" {
  source = "../../rds-proxy"

  name                      = "minimal"
  cluster_identifier        = module.database.cluster_identifier
  readers                   = length(module.database.reader_instance_identifiers)
  cluster_security_group_id = module.database.security_group_id
  cluster_resource_id       = module.database.cluster_resource_id
  vpc_id                    = aws_vpc.this.id
  subnet_ids                = aws_subnet.isolated[*].id
  endpoints = {
    minimal-ro = { vpc_id = aws_vpc.this.id, subnet_ids = aws_subnet.isolated[*].id, target_role = "READ_ONLY" }
  }
}

output "read_only_endpoint" {
  description = "The READ_ONLY proxy endpoint."
  value       = module.proxy.endpoints["minimal-ro"].endpoint
}

output "tiered_cache_gib" {
  description = "Optimized Reads tiered cache per instance (GiB)."
  value       = module.database.tiered_cache_gib
}
