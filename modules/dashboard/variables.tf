variable "dashboard_name" {
  description = "Name of the dashboard; alarms are named <dashboard_name>-<alarm>."
  type        = string
  nullable    = false
}

variable "instance_identifiers" {
  description = "The cluster's DB instance identifiers, writer first (the aurora-optimized-reads module's instance_identifiers)."
  type        = list(string)
  nullable    = false
  # BEGIN generated instance-identifiers by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = length(var.instance_identifiers) >= 1
    error_message = "instance_identifiers is empty: pass the writer first, then the readers"
  }
  # END generated instance-identifiers
}

variable "proxy_name" {
  description = "Name of the proxy whose endpoints and target roles are charted. null: no proxy widgets or alarms."
  type        = string
  default     = null
}

variable "proxy_endpoints" {
  description = "The proxy's additional endpoints charted, name => target role (READ_ONLY or READ_WRITE); the default endpoint is always charted."
  type        = map(string)
  default     = {}
  nullable    = false
}

variable "functions" {
  description = "The consumer functions charted, label (e.g. Reader) => function name. Empty: no Lambda widgets or alarms."
  type        = map(string)
  default     = {}
  nullable    = false
}

# BEGIN generated thresholds by bin/generate-terraform.ts from lib/model/metrics.ts and rules.ts; edit there (make terraform-generate)
variable "thresholds" {
  description = "Alarm thresholds; any left out take the kit's defaults (DEFAULT_ALARM_THRESHOLDS of lib/model)."
  type = object({
    cpu_utilization_percent        = optional(number, 80)
    freeable_memory_bytes          = optional(number, 1073741824)
    replica_lag_ms                 = optional(number, 1000)
    free_ephemeral_storage_bytes   = optional(number, 10737418240)
    proxy_pool_utilization_percent = optional(number, 90)
    pinned_connections             = optional(number, 10)
    function_errors                = optional(number, 1)
    function_throttles             = optional(number, 1)
  })
  default  = {}
  nullable = false

  validation {
    condition     = alltrue([for k, v in { "thresholds.cpu_utilization_percent" = var.thresholds.cpu_utilization_percent, "thresholds.proxy_pool_utilization_percent" = var.thresholds.proxy_pool_utilization_percent } : v > 0 && v <= 100])
    error_message = join("\n", [for k, v in { "thresholds.cpu_utilization_percent" = var.thresholds.cpu_utilization_percent, "thresholds.proxy_pool_utilization_percent" = var.thresholds.proxy_pool_utilization_percent } : "${k} ${v} is not a percentage: use a value above 0 and at most 100" if !(v > 0 && v <= 100)])
  }

  validation {
    condition     = alltrue([for k, v in { "thresholds.freeable_memory_bytes" = var.thresholds.freeable_memory_bytes, "thresholds.replica_lag_ms" = var.thresholds.replica_lag_ms, "thresholds.free_ephemeral_storage_bytes" = var.thresholds.free_ephemeral_storage_bytes, "thresholds.pinned_connections" = var.thresholds.pinned_connections, "thresholds.function_errors" = var.thresholds.function_errors, "thresholds.function_throttles" = var.thresholds.function_throttles } : v >= 0])
    error_message = join("\n", [for k, v in { "thresholds.freeable_memory_bytes" = var.thresholds.freeable_memory_bytes, "thresholds.replica_lag_ms" = var.thresholds.replica_lag_ms, "thresholds.free_ephemeral_storage_bytes" = var.thresholds.free_ephemeral_storage_bytes, "thresholds.pinned_connections" = var.thresholds.pinned_connections, "thresholds.function_errors" = var.thresholds.function_errors, "thresholds.function_throttles" = var.thresholds.function_throttles } : "${k} ${v} is negative: use 0 or more" if !(v >= 0)])
  }
}
# END generated thresholds

variable "create_alarm_topic" {
  description = "Whether the module creates the alarm topic: encrypted with a new KMS key (rotation on), TLS-only publishing, and only this module's alarms (named <dashboard_name>-*, of this account) may publish to it and use its key. false: pass alarm_topic_arn."
  type        = bool
  default     = true
  nullable    = false
}

variable "alarm_topic_arn" {
  description = "Topic every alarm notifies when create_alarm_topic is false. Its policy must let cloudwatch.amazonaws.com publish (sns:Publish) and its key policy let CloudWatch use the key (kms:Decrypt, kms:GenerateDataKey*), for the alarms named <dashboard_name>-*."
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags for every resource of the module."
  type        = map(string)
  default     = {}
  nullable    = false
}
