# `terraform test` with the stand-in: plan-mode runs assert on planned values and data sources;
# a mock_provider run covers apply-mode assertions.
variables { retention = 30 }
run "plan" {
  command = plan
  assert {
    condition     = aws_cloudwatch_log_group.lg.retention_in_days == 30
    error_message = "retention"
  }
  assert {
    condition     = output.account == "123456789012"
    error_message = "account"
  }
}
run "mocked_apply" {
  command   = apply
  providers = { aws = aws.mock }
}
mock_provider "aws" { alias = "mock" }
