# A small valid configuration: nested blocks (list max 1, set, single), data sources feeding
# resources, computed attributes referenced before they are known.
terraform {
  required_version = ">= 1.5"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 6.0"
    }
  }
}

provider "aws" {
  region = "eu-west-1"
  default_tags {
    tags = { project = "aurora-proxy-kit" }
  }
}

data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_availability_zones" "available" {
  state = "available"
}

data "aws_iam_policy_document" "key" {
  statement {
    sid       = "AccountRoot"
    actions   = ["kms:*"]
    resources = ["*"]
    principals {
      type        = "AWS"
      identifiers = ["arn:${data.aws_partition.current.partition}:iam::${data.aws_caller_identity.current.account_id}:root"]
    }
  }
  statement {
    sid       = "Logs"
    actions   = ["kms:Encrypt*", "kms:Decrypt*"]
    resources = ["*"]
    principals {
      type        = "Service"
      identifiers = ["logs.${data.aws_region.current.region}.amazonaws.com"]
    }
    condition {
      test     = "ArnLike"
      variable = "kms:EncryptionContext:aws:logs:arn"
      values   = ["arn:aws:logs:*"]
    }
  }
}

resource "aws_kms_key" "db" {
  description         = "aurora"
  enable_key_rotation = true
  policy              = data.aws_iam_policy_document.key.json
}

resource "aws_rds_cluster" "db" {
  cluster_identifier          = "selftest"
  engine                      = "aurora-postgresql"
  engine_version              = "16.4"
  storage_type                = "aurora-iopt1"
  storage_encrypted           = true
  kms_key_id                  = aws_kms_key.db.arn
  manage_master_user_password = true
  master_username             = "postgres"
  backup_retention_period     = 7
  availability_zones          = slice(data.aws_availability_zones.available.names, 0, 3)

  serverlessv2_scaling_configuration {
    min_capacity = 0.5
    max_capacity = 4
  }

  timeouts {
    create = "2h"
  }
}

resource "aws_security_group" "proxy" {
  name   = "proxy"
  vpc_id = "vpc-0123456789abcdef0"
  egress {
    from_port   = 5432
    to_port     = 5432
    protocol    = "tcp"
    cidr_blocks = ["10.10.0.0/16"]
  }
}

resource "aws_db_proxy" "db" {
  name                   = "selftest"
  engine_family          = "POSTGRESQL"
  role_arn               = "arn:aws:iam::123456789012:role/proxy"
  vpc_subnet_ids         = ["subnet-1", "subnet-2"]
  vpc_security_group_ids = [aws_security_group.proxy.id]
  require_tls            = true
  auth {
    auth_scheme = "SECRETS"
    iam_auth    = "REQUIRED"
    secret_arn  = aws_rds_cluster.db.master_user_secret[0].secret_arn
  }
}

output "policy" {
  value = data.aws_iam_policy_document.key.json
}

output "zones" {
  value = data.aws_availability_zones.available.names
}

output "proxy_endpoint" {
  value = aws_db_proxy.db.endpoint
}
