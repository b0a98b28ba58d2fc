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

# backup_retention_period is a number: a word where a number goes must be rejected.
resource "aws_rds_cluster" "db" {
  cluster_identifier      = "selftest"
  engine                  = "aurora-postgresql"
  backup_retention_period = "seven"
}
