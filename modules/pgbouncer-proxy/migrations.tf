# The listeners' certificate function, its role, log group and key are made by internal/handler-function,
# as lambda-consumer's and database-role-bootstrap's functions are; state made before moves to the module
# instead of replacing them.
moved {
  from = aws_kms_key.certificate[0]
  to   = module.certificate_function[0].aws_kms_key.this[0]
}

moved {
  from = aws_cloudwatch_log_group.certificate[0]
  to   = module.certificate_function[0].aws_cloudwatch_log_group.this
}

moved {
  from = aws_iam_role.certificate[0]
  to   = module.certificate_function[0].aws_iam_role.this
}

moved {
  from = aws_iam_role_policy_attachment.certificate_logs[0]
  to   = module.certificate_function[0].aws_iam_role_policy_attachment.basic
}

moved {
  from = aws_iam_role_policy.certificate[0]
  to   = module.certificate_function[0].aws_iam_role_policy.this
}

moved {
  from = aws_lambda_function.certificate[0]
  to   = module.certificate_function[0].aws_lambda_function.this
}
