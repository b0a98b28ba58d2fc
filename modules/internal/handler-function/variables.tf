variable "function_name" {
  description = "Name of the function; its log group is /aws/lambda/<function_name>, its security group's name starts with it."
  type        = string
  nullable    = false

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,64}$", var.function_name))
    error_message = "function_name ${jsonencode(var.function_name)} is not a Lambda function name: use 1 to 64 letters, digits, hyphens and underscores"
  }
}

variable "description" {
  description = "The function's description."
  type        = string
  nullable    = false
}

variable "code" {
  description = "Where the zip comes from: filename (a local file), or s3_bucket and s3_key (and s3_object_version) of an uploaded one; source_code_hash redeploys on change (default: the local file's hash). The callers check which combination is given, against their own variable names."
  type = object({
    filename          = optional(string)
    s3_bucket         = optional(string)
    s3_key            = optional(string)
    s3_object_version = optional(string)
    source_code_hash  = optional(string)
  })
  nullable = false
}

variable "handler" {
  description = "The handler the runtime calls: file.export of the bundle."
  type        = string
  default     = "index.handler"
  nullable    = false
}

variable "memory_size" {
  description = "Memory in MB (the callers check their own bound)."
  type        = number
  nullable    = false
}

variable "timeout" {
  description = "Timeout in seconds (the callers check their own bound)."
  type        = number
  nullable    = false
}

variable "reserved_concurrent_executions" {
  description = "Concurrency reserved for the function; null reserves none (Lambda's -1)."
  type        = number
  default     = null
}

variable "environment" {
  description = "The function's environment, as the resource's block: variables by name; null for none."
  type = object({
    variables = map(string)
  })
  default = null
}

variable "vpc" {
  description = "Where the function runs in a VPC: the VPC, its subnets and the description of the security group made for it (without rules: the caller adds the egress it needs, output security_group). Null for a function outside any VPC."
  type = object({
    vpc_id                     = string
    subnet_ids                 = list(string)
    security_group_description = string
  })
  default = null

  validation {
    condition     = var.vpc == null ? true : length(var.vpc.subnet_ids) > 0
    error_message = "vpc.subnet_ids is empty: a function in a VPC needs at least one subnet (two in different Availability Zones for availability)"
  }
}

variable "role" {
  description = "The execution role's name prefix (IAM allows at most 38 characters) and description."
  type = object({
    name_prefix = string
    description = optional(string)
  })
  nullable = false

  validation {
    condition     = length(var.role.name_prefix) <= 38
    error_message = "role.name_prefix ${jsonencode(var.role.name_prefix)} is ${length(var.role.name_prefix)} characters: IAM takes at most 38 in a name prefix, so shorten it"
  }
}

variable "policy" {
  description = "The role's inline policy (name and JSON document): what the function does beyond logging, tracing aside, granted by the caller."
  type = object({
    name = string
    json = string
  })
  nullable = false
}

variable "log_retention_days" {
  description = "Days the function's log is kept."
  type        = number
  nullable    = false
}

variable "log_group_skip_destroy" {
  description = "Whether terraform destroy leaves the function's log group (and its logs) in place and only forgets it; null leaves the argument unset (the provider's false), as the certificate function always had it."
  type        = bool
  default     = null
}

variable "create_kms_key" {
  description = "Whether the module creates the KMS key of the function's environment and log group (rotation on, CloudWatch Logs limited to the function's log group, 30-day deletion window); false: pass kms_key_arn (the callers check it is set)."
  type        = bool
  nullable    = false
}

variable "kms_key_arn" {
  description = "Key that encrypts the function's environment and log group when create_kms_key is false; its policy must let CloudWatch Logs use it for /aws/lambda/<function_name> (internal/logs-kms-policy writes such a policy)."
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags of every resource made."
  type        = map(string)
  default     = {}
  nullable    = false
}
