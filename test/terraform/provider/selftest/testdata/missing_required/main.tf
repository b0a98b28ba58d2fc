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

# engine_family is required on aws_db_proxy.
resource "aws_db_proxy" "db" {
  name           = "selftest"
  role_arn       = "arn:aws:iam::123456789012:role/proxy"
  vpc_subnet_ids = ["subnet-1", "subnet-2"]
}
