# Consumers in a root of their own: a Lambda consumer and a dashboard added to a deployment planned and
# applied elsewhere (examples/complete), from that root's consumer_inputs output only. The data root never
# reads this one: the consumer's security-group rules and its rds-db:connect are made here, on the data
# root's endpoint group and proxy, so either root applies without the other changing.

terraform {
  required_version = ">= 1.5"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 6.0"
    }
  }
}

variable "deployment" {
  description = "The data root's consumer_inputs output (examples/complete), e.g. data.terraform_remote_state.data.outputs.consumer_inputs."
  type = object({
    vpc_id               = string
    subnet_ids           = list(string)
    endpoints            = map(any)
    connect_arn_prefix   = string
    database_name        = string
    database_users       = list(string)
    instance_identifiers = list(string)
    proxy_name           = string
    kms_key_arn          = string
  })
  nullable = false
}

variable "name" {
  description = "Name of the consumer function and the dashboard."
  type        = string
  default     = "aurora-proxy-kit-reporting"
  nullable    = false
}

variable "endpoint_name" {
  description = "The name of the data root's proxy endpoint the consumer connects through (a key of consumer_inputs.endpoints)."
  type        = string
  default     = "aurora-proxy-kit-ro"
  nullable    = false
}

variable "db_user" {
  description = "The database user the consumer logs in as: one the data root's proxy may log in as (its database_users) and its role bootstrap makes."
  type        = string
  default     = "app_reader"
  nullable    = false
}

variable "lambda_dir" {
  description = "Directory holding the release's read-handler.zip and write-handler.zip. null: <repository>/dist/lambda. Unused when lambda_s3 is set."
  type        = string
  default     = null
}

variable "lambda_s3" {
  description = "Where the release's zips were uploaded instead: bucket and key prefix."
  type = object({
    bucket     = string
    key_prefix = string
  })
  default = null
}

data "aws_region" "current" {}

locals {
  endpoint = var.deployment.endpoints[var.endpoint_name]
  zip      = local.endpoint.target_role == "READ_ONLY" ? "read-handler.zip" : "write-handler.zip"
}

module "consumer" {
  source = "../../lambda-consumer"

  function_name      = var.name
  filename           = var.lambda_s3 == null ? "${coalesce(var.lambda_dir, "${path.module}/../../../dist/lambda")}/${local.zip}" : null
  s3_bucket          = var.lambda_s3 == null ? null : var.lambda_s3.bucket
  s3_key             = var.lambda_s3 == null ? null : "${var.lambda_s3.key_prefix}${local.zip}"
  vpc_id             = var.deployment.vpc_id
  subnet_ids         = var.deployment.subnet_ids
  endpoint           = local.endpoint
  connect_arn_prefix = var.deployment.connect_arn_prefix
  db_user            = var.db_user
  database_name      = var.deployment.database_name
  create_kms_key     = false
  kms_key_arn        = var.deployment.kms_key_arn
}

module "dashboard" {
  source = "../../dashboard"

  dashboard_name       = var.name
  instance_identifiers = var.deployment.instance_identifiers
  proxy_name           = var.deployment.proxy_name
  proxy_endpoints      = { for name, e in var.deployment.endpoints : name => e.target_role }
  functions            = { Reporter = module.consumer.function_name }
}

output "function_name" {
  description = "The consumer function's name."
  value       = module.consumer.function_name

  # The proxy logs in to the cluster as each client's own user (end-to-end IAM): a user the data root did not
  # list would be granted here and refused by the proxy at connect time.
  precondition {
    condition     = contains(var.deployment.database_users, var.db_user)
    error_message = "db_user ${var.db_user} is not among the data root's database_users (${join(", ", var.deployment.database_users)}): the proxy may not log in as it; add it to the data root's proxy database_users and role bootstrap roles first"
  }
  # The data root's endpoint, VPC and proxy are regional: this root must run in the same region.
  precondition {
    condition     = strcontains(var.deployment.connect_arn_prefix, ":rds-db:${data.aws_region.current.region}:")
    error_message = "this root runs in ${data.aws_region.current.region}, but the data root's proxy (connect_arn_prefix ${var.deployment.connect_arn_prefix}) is in another region: its endpoint and VPC are regional, so configure this root's provider with the data root's region"
  }
}
