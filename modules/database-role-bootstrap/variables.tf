variable "function_name" {
  description = "Name of the bootstrap function (also its log group /aws/lambda/<function_name>)."
  type        = string
  nullable    = false
}

variable "filename" {
  description = "Path of the role bootstrap zip: the release's role-bootstrap.zip, or make lambda-zip's dist/lambda/role-bootstrap.zip in a checkout. null: the zip is in S3 (s3_bucket, s3_key)."
  type        = string
  default     = null
}

variable "s3_bucket" {
  description = "Bucket holding the role bootstrap zip (the release's role-bootstrap.zip, uploaded by you), instead of filename: what a configuration without Node.js or a local copy of the zip uses."
  type        = string
  default     = null
}

variable "s3_key" {
  description = "Key of the role bootstrap zip in s3_bucket."
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

variable "roles" {
  description = "One database role per consumer: name (lower-case identifier, not the master user), access (READ_ONLY reads; READ_WRITE also writes and creates tables) and, for a consumer of the PgBouncer engine (and its read-only server role), password_secret_arn: the secret ({\"username\", \"password\"}) whose derived SCRAM verifier becomes the role's password instead of IAM authentication."
  type        = list(object({ name = string, access = string, password_secret_arn = optional(string) }))
  nullable    = false

  validation {
    condition     = length(var.roles) > 0 && alltrue([for r in var.roles : can(regex("^[a-z_][a-z0-9_]{0,62}$", r.name)) && !startswith(r.name, "pg_") && !startswith(r.name, "rds") && contains(["READ_ONLY", "READ_WRITE"], r.access)])
    error_message = "roles: each name must be a lower-case identifier not starting with pg_ or rds, each access READ_ONLY or READ_WRITE"
  }

  validation {
    condition     = alltrue([for r in var.roles : r.password_secret_arn == null || can(regex("^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:.+$", r.password_secret_arn))])
    error_message = "roles: a password_secret_arn must be a Secrets Manager secret ARN: use arn:<partition>:secretsmanager:<region>:<account>:secret:<name>"
  }
}

variable "cluster_identifier" {
  description = "The cluster's identifier (module.aurora.cluster_identifier, known once every instance exists): the bootstrap runs after them, and again when it changes."
  type        = string
  nullable    = false
}

variable "cluster_endpoint" {
  description = "The cluster (writer) endpoint the bootstrap logs in to."
  type        = string
  nullable    = false
}

variable "cluster_security_group_id" {
  description = "The cluster's security group; the module lets the bootstrap function reach it on 5432."
  type        = string
  nullable    = false
}

variable "database_name" {
  description = "The database whose schema the roles may use."
  type        = string
  nullable    = false
}

variable "master_user_secret_arn" {
  description = "The cluster's RDS-managed master secret, the only secret the function may read."
  type        = string
  nullable    = false
}

variable "secret_kms_key_arn" {
  description = "KMS key of the master secret; the function may decrypt with it through Secrets Manager only."
  type        = string
  nullable    = false
}

variable "vpc_id" {
  description = "The cluster's VPC, where the function runs."
  type        = string
  nullable    = false
}

variable "subnet_ids" {
  description = "Subnets of the function, in the cluster's VPC; they must reach Secrets Manager (e.g. an interface endpoint)."
  type        = list(string)
  nullable    = false
}

variable "invocation_depends_on" {
  description = "Values the bootstrap's invocation waits for (ids): e.g. the Secrets Manager interface endpoint's id, so the function does not run before the endpoint it reads the secrets through exists. For what depends_on on the module call cannot carry: an endpoint whose policy names this module's role would make that a cycle."
  type        = list(string)
  default     = []
  nullable    = false
}

variable "secrets_manager_security_group_ids" {
  description = "Security groups of a Secrets Manager interface endpoint in the VPC; the function gets egress to them on 443. The same as vpc_endpoints' secretsmanager entry."
  type        = list(string)
  default     = []
  nullable    = false
}

variable "kms_key_arn" {
  description = "Key that encrypts the function's environment and log group; its policy must let CloudWatch Logs use it for /aws/lambda/<function_name>."
  type        = string
  nullable    = false
}

variable "log_retention_days" {
  description = "Retention of the function's log group."
  type        = number
  default     = 30
  nullable    = false
}

variable "tags" {
  description = "Tags for every taggable resource."
  type        = map(string)
  default     = {}
  nullable    = false
}

variable "subnets_have_egress" {
  description = "Whether subnet_ids route to a NAT gateway or an internet gateway, so that the function reaches AWS's APIs without VPC endpoints. false (an isolated VPC): each API needs an entry in vpc_endpoints, or the plan fails naming the missing ones."
  type        = bool
  default     = false
  nullable    = false
}

variable "vpc_endpoints" {
  description = "The VPC endpoints the function calls AWS through, by the last label of the service name (secretsmanager): for an interface endpoint its security group id (the function gets HTTPS to it), for the S3 gateway endpoint its id. Their policies must pass those calls."
  type        = map(string)
  default     = {}
  nullable    = false
}
