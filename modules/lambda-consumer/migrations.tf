# The function, its role, security group, log group and key are made by internal/handler-function, as
# database-role-bootstrap's and pgbouncer-proxy's certificate function are; state made before moves to
# the module instead of replacing them.
moved {
  from = aws_kms_key.this
  to   = module.function.aws_kms_key.this
}

moved {
  from = aws_cloudwatch_log_group.this
  to   = module.function.aws_cloudwatch_log_group.this
}

moved {
  from = aws_security_group.this
  to   = module.function.aws_security_group.this[0]
}

moved {
  from = aws_iam_role.this
  to   = module.function.aws_iam_role.this
}

moved {
  from = aws_iam_role_policy_attachment.basic
  to   = module.function.aws_iam_role_policy_attachment.basic
}

moved {
  from = aws_iam_role_policy_attachment.vpc
  to   = module.function.aws_iam_role_policy_attachment.vpc[0]
}

moved {
  from = aws_iam_role_policy.function
  to   = module.function.aws_iam_role_policy.this
}

moved {
  from = aws_lambda_function.this
  to   = module.function.aws_lambda_function.this
}
