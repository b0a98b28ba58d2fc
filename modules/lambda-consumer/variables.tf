variable "function_name" {
  description = "Name of the function (also its log group /aws/lambda/<function_name> and the FunctionName dimension of its metrics)."
  type        = string
  nullable    = false
}

variable "filename" {
  description = "Path of the function's zip: the release's read-handler.zip or write-handler.zip (handler index.handler), or make lambda-zip's dist/lambda/ in a checkout. null: the zip is in S3 (s3_bucket, s3_key)."
  type        = string
  default     = null
}

variable "s3_bucket" {
  description = "Bucket holding the function's zip (the release's read-handler.zip or write-handler.zip, uploaded by you), instead of filename: what a configuration without Node.js or a local copy of the zip uses."
  type        = string
  default     = null
}

variable "s3_key" {
  description = "Key of the function's zip in s3_bucket."
  type        = string
  default     = null
}

variable "s3_object_version" {
  description = "Version of the S3 object, for a versioned bucket."
  type        = string
  default     = null
}

variable "source_code_hash" {
  description = "Base64 SHA-256 of the zip (the release's lambda-artifacts.json lists it), to redeploy when the code changes. null: filebase64sha256(filename) for a local zip; for an S3 object, nothing (a new key redeploys)."
  type        = string
  default     = null
}

variable "handler" {
  description = "The function's handler."
  type        = string
  default     = "index.handler"
  nullable    = false
}

variable "vpc_id" {
  description = "VPC of the function: the proxy endpoint's VPC."
  type        = string
  nullable    = false
}

variable "subnet_ids" {
  description = "Subnets of the function, in the endpoint's VPC."
  type        = list(string)
  nullable    = false
}

variable "endpoint" {
  description = "The endpoint the function connects through, an element of the rds-proxy or the pgbouncer-proxy module's endpoints output: host name, port, target role, security group, and how its certificate is checked. RDS Proxy's certificate names the default endpoint only, so a consumer of another endpoint checks it against proxy_default_endpoint (DB_TLS=verify-proxy-domain); set is_proxy_default_endpoint for the default endpoint itself (DB_TLS=verify-full). A PgBouncer engine endpoint gives tls_ca_certificate, the only CA its consumers trust (DB_TLS=verify-full with DB_TLS_CA)."
  type = object({
    endpoint                  = string
    target_role               = string
    security_group_id         = string
    port                      = optional(number, 5432)
    proxy_default_endpoint    = optional(string)
    is_proxy_default_endpoint = optional(bool, false)
    tls_ca_certificate        = optional(string)
  })
  nullable = false
  # BEGIN generated consumer-target-role by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = contains(["READ_ONLY", "READ_WRITE"], var.endpoint.target_role)
    error_message = "endpoint.target_role ${var.endpoint.target_role} is not a proxy endpoint role: use READ_ONLY or READ_WRITE"
  }
  # END generated consumer-target-role
  # BEGIN generated consumer-tls-server-name by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = var.endpoint.is_proxy_default_endpoint || var.endpoint.proxy_default_endpoint != null || var.endpoint.tls_ca_certificate != null
    error_message = "endpoint.proxy_default_endpoint is not set: a custom proxy endpoint's certificate names the proxy's default endpoint, not the endpoint, so pass the proxy's default endpoint host name (verify-full works on the default endpoint only)"
  }
  # END generated consumer-tls-server-name
}

variable "connect_arn_prefix" {
  description = "The rds-proxy module's connect_arn_prefix; the function gets rds-db:connect on <prefix><db_user> only. null for a PgBouncer engine endpoint (password_secret_arn)."
  type        = string
  default     = null
}

variable "auth" {
  description = "How the function logs in: iam (an IAM token through RDS Proxy: connect_arn_prefix) or secret (the password of password_secret_arn through a PgBouncer engine endpoint). A setting rather than a null check, so the secret's ARN may be unknown until apply."
  type        = string
  default     = "iam"
  nullable    = false
  # BEGIN generated consumer-auth by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = contains(["iam", "secret"], var.auth)
    error_message = "auth ${var.auth} is not a consumer credential: use iam or secret"
  }
  # END generated consumer-auth
}

variable "password_secret_arn" {
  description = "The secret ({\"username\", \"password\"}) the function logs in with through a PgBouncer engine endpoint: the pgbouncer-proxy module's consumer_secret_arns[db_user] (DB_AUTH=secret). null: an IAM token through RDS Proxy (connect_arn_prefix)."
  type        = string
  default     = null
}

variable "secrets_manager_security_group_id" {
  description = "The security group of the VPC's Secrets Manager interface endpoint: the function's HTTPS egress for its password secret goes to it only (admit the function's group, output security_group_id, on it). null: HTTPS egress to any address (a VPC with a NAT gateway). Used with auth secret."
  type        = string
  default     = null
}

variable "db_user" {
  description = "The database user the function logs in as (with an IAM token, or the password of password_secret_arn): a role the role bootstrap makes."
  type        = string
  nullable    = false
  # BEGIN generated consumer-db-user by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = can(regex("^[a-z_][a-z0-9_]{0,62}$", var.db_user))
    error_message = "db_user ${var.db_user} is not a database role name the role bootstrap makes: use lower-case letters, digits and underscores, not starting with a digit, at most 63 characters"
  }

  validation {
    condition     = !can(regex("^[a-z_][a-z0-9_]{0,62}$", var.db_user)) || !anytrue([for p in ["pg_", "rds"] : startswith(var.db_user, p)])
    error_message = "db_user ${var.db_user} starts with a prefix PostgreSQL and RDS keep for their own roles (pg_, rds): use a name that does not"
  }
  # END generated consumer-db-user
}

variable "database_name" {
  description = "The database to connect to."
  type        = string
  nullable    = false
}

variable "connection_mode" {
  description = "reuse keeps one connection across invocations; per-invocation opens one per call (the seeds' comparison)."
  type        = string
  default     = "reuse"
  nullable    = false
  # BEGIN generated connection-mode by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = contains(["reuse", "per-invocation"], var.connection_mode)
    error_message = "connection_mode ${var.connection_mode} is not a connection mode: use reuse or per-invocation"
  }
  # END generated connection-mode
}

variable "memory_size" {
  description = "Memory in MB (bounds: the memory-size rule; see the Rules column of the module README)."
  type        = number
  default     = 512
  nullable    = false
  # BEGIN generated memory-size by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = floor(var.memory_size) == var.memory_size && var.memory_size >= 128 && var.memory_size <= 10240
    error_message = "memory_size ${var.memory_size} is out of range: Lambda memory is 128 MB to 10,240 MB (an integer from 128 to 10240)"
  }
  # END generated memory-size
}

variable "timeout" {
  description = "Function timeout in seconds (bounds: the timeout rule; see the Rules column of the module README)."
  type        = number
  default     = 30
  nullable    = false
  # BEGIN generated timeout by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = floor(var.timeout) == var.timeout && var.timeout >= 1 && var.timeout <= 900
    error_message = "timeout ${var.timeout} is out of range: a Lambda function runs at most 15 minutes (an integer from 1 to 900)"
  }
  # END generated timeout
}

variable "reserved_concurrent_executions" {
  description = "Reserved concurrency (bounds: the reserved-concurrency rule; see the Rules column of the module README): caps the connections the function can open through the proxy. null: unreserved."
  type        = number
  default     = null
  # BEGIN generated reserved-concurrency by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = var.reserved_concurrent_executions == null ? true : (floor(var.reserved_concurrent_executions) == var.reserved_concurrent_executions && var.reserved_concurrent_executions >= 1 && var.reserved_concurrent_executions <= 900)
    error_message = "reserved_concurrent_executions ${var.reserved_concurrent_executions == null ? "null" : var.reserved_concurrent_executions} is out of range: Lambda keeps 100 of the default 1,000 account concurrency unreserved (an integer from 1 to 900)"
  }
  # END generated reserved-concurrency
}

variable "log_retention_days" {
  description = "Days the function's log is kept."
  type        = number
  default     = 30
  nullable    = false
}

variable "log_group_skip_destroy" {
  description = "Whether terraform destroy leaves the function's log group (and its logs) in place and only forgets it, as the CDK construct retains it."
  type        = bool
  default     = true
  nullable    = false
}

variable "create_kms_key" {
  description = "Whether the module creates its KMS key (rotation on, CloudWatch Logs limited to the function's log group, 30-day deletion window); false: pass kms_key_arn. A flag rather than a null check, so kms_key_arn may be unknown until apply."
  type        = bool
  default     = true
  nullable    = false
}

variable "kms_key_arn" {
  description = "Key that encrypts the function's environment and log group; its policy must let CloudWatch Logs use it for the log group /aws/lambda/<function_name> (modules/internal/logs-kms-policy writes such a policy). Used when create_kms_key is false."
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags for every resource of the module."
  type        = map(string)
  default     = {}
  nullable    = false
}

variable "subnets_have_egress" {
  description = "Whether subnet_ids route to a NAT gateway or an internet gateway, so that the function (auth secret: its password secret's read) reaches AWS's APIs without VPC endpoints. false (an isolated VPC): each API needs an entry in vpc_endpoints, or the plan fails naming the missing ones."
  type        = bool
  default     = false
  nullable    = false
}

variable "vpc_endpoints" {
  description = "The VPC endpoints the function (auth secret) calls AWS through, by the last label of the service name (secretsmanager): for an interface endpoint its security group id (the function's HTTPS egress goes to it; the same as secrets_manager_security_group_id), for the S3 gateway endpoint its id. Their policies must pass those calls."
  type        = map(string)
  default     = {}
  nullable    = false
}
