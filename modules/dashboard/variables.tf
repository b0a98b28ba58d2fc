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

variable "pgbouncer_fleet_name" {
  description = "Name of the PgBouncer fleet charted (the pgbouncer-proxy module's name: the Fleet dimension its hosts publish). null: no PgBouncer widgets or alarms; set it with pgbouncer_targets, pgbouncer_load_balancer_arn_suffix, pgbouncer_target_group_arn_suffixes and pgbouncer_hosts."
  type        = string
  default     = null

  validation {
    condition     = var.pgbouncer_fleet_name == null || try(length(var.pgbouncer_fleet_name) >= 1 && length(var.pgbouncer_fleet_name) <= 255, false)
    error_message = "pgbouncer_fleet_name \"${var.pgbouncer_fleet_name == null ? "" : var.pgbouncer_fleet_name}\" has ${length(var.pgbouncer_fleet_name == null ? "" : var.pgbouncer_fleet_name)} characters: use 1 to 255"
  }
}

variable "pgbouncer_targets" {
  description = "The PgBouncer fleet's pool targets, the Target dimension its hosts publish (the pgbouncer-proxy module's metric_targets): read_write the cluster identifier, read_only each reader's instance identifier, readers in order."
  type = object({
    read_write = string
    read_only  = list(string)
  })
  default = null

  validation {
    condition     = var.pgbouncer_targets == null || try(length(var.pgbouncer_targets.read_only) >= 1 && alltrue([for t in concat([var.pgbouncer_targets.read_write], var.pgbouncer_targets.read_only) : length(t) >= 1]), false)
    error_message = "pgbouncer_targets needs a non-empty read_write target and at least one non-empty read_only target: pass the pgbouncer-proxy module's metric_targets"
  }
}

variable "pgbouncer_load_balancer_arn_suffix" {
  description = "ARN suffix (net/<name>/<id>) of the PgBouncer fleet's Network Load Balancer, the LoadBalancer dimension of its AWS/NetworkELB metrics (the pgbouncer-proxy module's load_balancer_arn_suffix)."
  type        = string
  default     = null

  validation {
    condition     = var.pgbouncer_load_balancer_arn_suffix == null || can(regex("^net/[^/]+/[0-9a-f]+$", var.pgbouncer_load_balancer_arn_suffix))
    error_message = "pgbouncer_load_balancer_arn_suffix \"${var.pgbouncer_load_balancer_arn_suffix == null ? "" : var.pgbouncer_load_balancer_arn_suffix}\" is not a Network Load Balancer's ARN suffix: pass net/<name>/<id> (the pgbouncer-proxy module's load_balancer_arn_suffix)"
  }
}

variable "pgbouncer_target_group_arn_suffixes" {
  description = "ARN suffixes (targetgroup/<name>/<id>) of the PgBouncer fleet's target groups by listener, the TargetGroup dimension of their AWS/NetworkELB metrics (the pgbouncer-proxy module's target_group_arn_suffixes): read_write, read_only, and the session-pooling listeners' (read_write_session, read_only_session) where some endpoint uses them, which are then charted and alarmed too."
  # A map, not an object: its keys are known at plan (the values only after apply), so they can decide which
  # session listeners have lines and alarms.
  type    = map(string)
  default = null

  validation {
    condition     = var.pgbouncer_target_group_arn_suffixes == null || try(contains(keys(var.pgbouncer_target_group_arn_suffixes), "read_write") && contains(keys(var.pgbouncer_target_group_arn_suffixes), "read_only") && alltrue([for k, s in var.pgbouncer_target_group_arn_suffixes : contains(["read_write", "read_only", "read_write_session", "read_only_session"], k) && can(regex("^targetgroup/[^/]+/[0-9a-f]+$", s))]), false)
    error_message = "pgbouncer_target_group_arn_suffixes must be target groups' ARN suffixes, targetgroup/<name>/<id>, of read_write and read_only (and read_write_session, read_only_session where used): pass the pgbouncer-proxy module's target_group_arn_suffixes"
  }
}

variable "pgbouncer_hosts" {
  description = "Hosts of the PgBouncer fleet, a fixed-size group (the pgbouncer-proxy module's hosts): the MissingHosts alarms fire when a target group's healthy hosts fall below it."
  type        = number
  default     = null

  validation {
    condition     = var.pgbouncer_hosts == null || try(var.pgbouncer_hosts >= 1 && floor(var.pgbouncer_hosts) == var.pgbouncer_hosts, false)
    error_message = "pgbouncer_hosts ${var.pgbouncer_hosts == null ? "null" : var.pgbouncer_hosts} is not a host count: pass the pgbouncer-proxy module's hosts, a whole number of at least 1"
  }
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
    pooler_clients_waiting         = optional(number, 10)
    pooler_max_wait_seconds        = optional(number, 5)
    pooler_unhealthy_hosts         = optional(number, 1)
    pooler_missing_hosts           = optional(number, 1)
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
    condition     = alltrue([for k, v in { "thresholds.freeable_memory_bytes" = var.thresholds.freeable_memory_bytes, "thresholds.replica_lag_ms" = var.thresholds.replica_lag_ms, "thresholds.free_ephemeral_storage_bytes" = var.thresholds.free_ephemeral_storage_bytes, "thresholds.pinned_connections" = var.thresholds.pinned_connections, "thresholds.pooler_clients_waiting" = var.thresholds.pooler_clients_waiting, "thresholds.pooler_max_wait_seconds" = var.thresholds.pooler_max_wait_seconds, "thresholds.pooler_unhealthy_hosts" = var.thresholds.pooler_unhealthy_hosts, "thresholds.pooler_missing_hosts" = var.thresholds.pooler_missing_hosts, "thresholds.function_errors" = var.thresholds.function_errors, "thresholds.function_throttles" = var.thresholds.function_throttles } : v >= 0])
    error_message = join("\n", [for k, v in { "thresholds.freeable_memory_bytes" = var.thresholds.freeable_memory_bytes, "thresholds.replica_lag_ms" = var.thresholds.replica_lag_ms, "thresholds.free_ephemeral_storage_bytes" = var.thresholds.free_ephemeral_storage_bytes, "thresholds.pinned_connections" = var.thresholds.pinned_connections, "thresholds.pooler_clients_waiting" = var.thresholds.pooler_clients_waiting, "thresholds.pooler_max_wait_seconds" = var.thresholds.pooler_max_wait_seconds, "thresholds.pooler_unhealthy_hosts" = var.thresholds.pooler_unhealthy_hosts, "thresholds.pooler_missing_hosts" = var.thresholds.pooler_missing_hosts, "thresholds.function_errors" = var.thresholds.function_errors, "thresholds.function_throttles" = var.thresholds.function_throttles } : "${k} ${v} is negative: use 0 or more" if !(v >= 0)])
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
