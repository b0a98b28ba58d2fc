terraform {
  required_version = ">= 1.5"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 6.0"
    }
  }
}

# target_role is READ_WRITE or READ_ONLY.
resource "aws_db_proxy_endpoint" "reader" {
  db_proxy_name          = "selftest"
  db_proxy_endpoint_name = "selftest-ro"
  vpc_subnet_ids         = ["subnet-1", "subnet-2"]
  target_role            = "READ"
}
