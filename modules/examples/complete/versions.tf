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
  region = var.region
}
