# Values of the mocked hashicorp/aws provider shared by every module's `terraform test` files
# (`mock_provider "aws" { source = ".../test/terraform/mocks/aws" }`). Terraform's mock provider still
# runs the provider's own validation, so computed attributes that reach validated arguments (policy
# JSON, ARNs) must look like what AWS returns: random strings fail there, as they would with the real
# provider. One account, region and partition throughout, as in the examples' fixtures.

mock_data "aws_partition" {
  defaults = { partition = "aws", dns_suffix = "amazonaws.com" }
}

mock_data "aws_region" {
  defaults = { region = "us-east-1", name = "us-east-1" }
}

mock_data "aws_caller_identity" {
  defaults = { account_id = "123456789012", arn = "arn:aws:iam::123456789012:root" }
}

mock_data "aws_availability_zones" {
  defaults = { names = ["us-east-1a", "us-east-1b", "us-east-1c"] }
}

mock_data "aws_iam_policy_document" {
  defaults = { json = "{\"Version\":\"2012-10-17\",\"Statement\":[]}", minified_json = "{\"Version\":\"2012-10-17\",\"Statement\":[]}" }
}

mock_resource "aws_kms_key" {
  defaults = { arn = "arn:aws:kms:us-east-1:123456789012:key/00000000-0000-4000-8000-000000000001", key_id = "00000000-0000-4000-8000-000000000001" }
}

mock_resource "aws_iam_role" {
  defaults = { arn = "arn:aws:iam::123456789012:role/kit-mock-role" }
}

mock_resource "aws_sns_topic" {
  defaults = { arn = "arn:aws:sns:us-east-1:123456789012:kit-mock-topic" }
}

mock_resource "aws_cloudwatch_log_group" {
  defaults = { arn = "arn:aws:logs:us-east-1:123456789012:log-group:/kit/mock" }
}

mock_resource "aws_db_proxy" {
  defaults = { arn = "arn:aws:rds:us-east-1:123456789012:db-proxy:prx-0123456789abcdef0", endpoint = "kit.proxy-0123456789ab.us-east-1.rds.amazonaws.com" }
}

mock_resource "aws_rds_cluster" {
  defaults = {
    arn                 = "arn:aws:rds:us-east-1:123456789012:cluster:kit"
    cluster_resource_id = "cluster-ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    master_user_secret  = [{ secret_arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:rds!cluster-kit", kms_key_id = "arn:aws:kms:us-east-1:123456789012:key/00000000-0000-4000-8000-000000000001", secret_status = "active" }]
  }
}

mock_resource "aws_lambda_function" {
  defaults = { arn = "arn:aws:lambda:us-east-1:123456789012:function:kit-mock", invoke_arn = "arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/arn:aws:lambda:us-east-1:123456789012:function:kit-mock/invocations" }
}

mock_resource "aws_db_proxy_default_target_group" {
  defaults = { name = "default", arn = "arn:aws:rds:us-east-1:123456789012:target-group:prx-tg-0123456789abcdef0" }
}

# What the pooler certificate function returns (lambda/src/pooler-certificate.ts): the CA certificate and the serial, no key.
mock_resource "aws_lambda_invocation" {
  defaults = { result = "{\"PhysicalResourceId\":\"pooler-certificate:mock\",\"Data\":{\"CaCertificate\":\"-----BEGIN CERTIFICATE-----\\nTU9DSw==\\n-----END CERTIFICATE-----\\n\",\"CertificateSerial\":\"0123456789abcdef0123456789abcdef\"}}" }
}
