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

# serverlessv2_scaling_configuration is a list block with at most one item.
resource "aws_rds_cluster" "db" {
  cluster_identifier = "selftest"
  engine             = "aurora-postgresql"
  serverlessv2_scaling_configuration {
    min_capacity = 0.5
    max_capacity = 4
  }
  serverlessv2_scaling_configuration {
    min_capacity = 1
    max_capacity = 8
  }
}
