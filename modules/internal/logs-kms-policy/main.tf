data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}
data "aws_region" "current" {}

locals {
  # CloudWatch Logs names the log group in the encryption context (kms:EncryptionContext:aws:logs:arn);
  # exact names match with ArnEquals, a name pattern with * needs ArnLike.
  log_group_arns = [for name in var.log_group_names : "arn:${data.aws_partition.current.partition}:logs:${data.aws_region.current.region}:${data.aws_caller_identity.current.account_id}:log-group:${name}"]
  operator       = anytrue([for name in var.log_group_names : strcontains(name, "*")]) ? "ArnLike" : "ArnEquals"
  context_key    = "kms:EncryptionContext:aws:logs:arn"
}

data "aws_iam_policy_document" "this" {
  #checkov:skip=CKV_AWS_109:A key policy's Resource is always the key itself ("*"); the account root statement is AWS's default and delegates to IAM
  #checkov:skip=CKV_AWS_111:A key policy's Resource is always the key itself ("*"); the account root statement is AWS's default and delegates to IAM
  #checkov:skip=CKV_AWS_356:A key policy's Resource is always the key itself ("*")
  statement {
    sid       = "AccountAdministers"
    actions   = ["kms:*"]
    resources = ["*"]
    principals {
      type        = "AWS"
      identifiers = ["arn:${data.aws_partition.current.partition}:iam::${data.aws_caller_identity.current.account_id}:root"]
    }
  }

  statement {
    sid       = "CloudWatchLogsEncrypt"
    actions   = ["kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"]
    resources = ["*"]
    principals {
      type        = "Service"
      identifiers = ["logs.${data.aws_region.current.region}.amazonaws.com"]
    }
    condition {
      test     = local.operator
      variable = local.context_key
      values   = local.log_group_arns
    }
  }
}
