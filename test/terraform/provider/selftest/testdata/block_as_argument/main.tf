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

# vpc_config is a block on aws_lambda_function: assigning it like an argument must fail.
resource "aws_lambda_function" "fn" {
  function_name = "selftest"
  role          = "arn:aws:iam::123456789012:role/fn"
  vpc_config = {
    subnet_ids         = ["subnet-1"]
    security_group_ids = ["sg-1"]
  }
}
