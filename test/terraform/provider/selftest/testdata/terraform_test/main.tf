terraform {
  required_providers {
    aws = { source = "hashicorp/aws", version = ">= 6.0" }
  }
}
variable "retention" { type = number }
resource "aws_cloudwatch_log_group" "lg" {
  name              = "/aws/lambda/x"
  retention_in_days = var.retention
}
data "aws_caller_identity" "me" {}
output "account" { value = data.aws_caller_identity.me.account_id }
