terraform {
  required_version = ">= 1.5"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 6.0"
    }
  }
}

# An IAM role name_prefix leaves room for the 26-character unique suffix: at most 38 characters.
resource "aws_iam_role" "proxy" {
  name_prefix        = "selftest-proxy-role-with-a-long-prefix-"
  assume_role_policy = jsonencode({ Version = "2012-10-17", Statement = [] })
}
