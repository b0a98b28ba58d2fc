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

# `storage_encrypted` misspelled: Terraform must reject it against the served schema.
resource "aws_rds_cluster" "db" {
  cluster_identifier = "selftest"
  engine             = "aurora-postgresql"
  stroage_encrypted  = true
}
