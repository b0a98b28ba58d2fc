terraform {
  required_version = ">= 1.5"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 6.0"
    }
  }
}

# RDS identifiers are lower case (the provider's validIdentifier): an underscore is refused.
resource "aws_db_proxy" "db" {
  name           = "selftest_proxy"
  engine_family  = "POSTGRESQL"
  role_arn       = "arn:aws:iam::123456789012:role/proxy"
  vpc_subnet_ids = ["subnet-1", "subnet-2"]
}
