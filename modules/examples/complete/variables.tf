variable "region" {
  description = "AWS region to deploy to."
  type        = string
  default     = "us-east-1"
}

variable "name" {
  description = "Name prefix of everything the example creates (cluster identifier, proxy, functions, dashboard)."
  type        = string
  default     = "aurora-proxy-kit"
}

variable "instance_class" {
  description = "DB instance class of every instance (an Optimized Reads class)."
  type        = string
  default     = "db.r6gd.xlarge"
}

variable "readers" {
  description = "Number of readers."
  type        = number
  default     = 2
}

variable "engine_version" {
  description = "Aurora PostgreSQL engine version."
  type        = string
  default     = "17.9"
}

variable "max_connections_percent" {
  description = "Share of max_connections the proxy may use."
  type        = number
  default     = 100
}

variable "read_only_endpoints" {
  description = "Number of READ_ONLY endpoints in the consumer VPC (the first serves the reader Lambda); with the READ_WRITE endpoint they share RDS Proxy's 20 endpoints."
  type        = number
  default     = 1
  # BEGIN generated read-only-endpoints by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = floor(var.read_only_endpoints) == var.read_only_endpoints && var.read_only_endpoints >= 1 && var.read_only_endpoints <= 19
    error_message = "read_only_endpoints ${var.read_only_endpoints} is out of range: the READ_WRITE endpoint and the READ_ONLY ones share RDS Proxy's limit of 20 (an integer from 1 to 19)"
  }
  # END generated read-only-endpoints
}

variable "deletion_protection" {
  description = "Whether the cluster refuses deletion (set false for a throw-away test deployment)."
  type        = bool
  default     = true
}

variable "lambda_dir" {
  description = "Directory holding the release's read-handler.zip, write-handler.zip and role-bootstrap.zip (make lambda-zip builds them into dist/lambda). null: <repository>/dist/lambda. Unused when lambda_s3 is set."
  type        = string
  default     = null
}

variable "lambda_s3" {
  description = "Where the release's zips were uploaded instead (bucket, and the key prefix they sit under, e.g. \"aurora-proxy-kit/v0.1.0/\"): no local copy and no Node.js needed. source_code_hashes maps a zip's name to its base64 SHA-256 (the release's lambda-artifacts.json), so a function is redeployed when its zip changes under the same key."
  type = object({
    bucket             = string
    key_prefix         = optional(string, "")
    source_code_hashes = optional(map(string), {})
  })
  default = null
}
