variable "name" {
  description = "Name of the proxy (also the ProxyName dimension of its metrics)."
  type        = string
  nullable    = false
  # BEGIN generated proxy-name by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = (can(regex("^[a-z][a-z0-9-]{0,59}$", var.name)) && !strcontains(var.name, "--") && !endswith(var.name, "-"))
    error_message = "name ${var.name} is not a valid proxy name: use 1 to 60 lower-case letters, digits and hyphens, starting with a letter, without \"--\" or a trailing hyphen"
  }
  # END generated proxy-name
}

variable "cluster_identifier" {
  description = "Identifier of the Aurora cluster the proxy pools connections to: pass module.aurora.cluster_identifier, which is known only once every instance exists, so the proxy target is registered after them."
  type        = string
  nullable    = false
}

variable "readers" {
  description = "Number of reader instances in the cluster (e.g. length(module.aurora.reader_instance_identifiers)); a READ_ONLY endpoint needs at least one."
  type        = number
  nullable    = false
}

variable "cluster_security_group_id" {
  description = "The cluster's security group; the module lets the proxy, and only the proxy, reach it on 5432."
  type        = string
  nullable    = false
}

variable "cluster_resource_id" {
  description = "The cluster's resource ID (module.aurora.cluster_resource_id): the proxy logs in to the cluster with IAM (end-to-end IAM authentication), as each of database_users."
  type        = string
  nullable    = false
}

variable "database_users" {
  description = "Database users the proxy may log in to the cluster as (rds-db:connect on dbuser:<cluster_resource_id>/<user>): every consumer's own role, never the master user. Clients log in as them with IAM tokens."
  type        = list(string)
  default     = []
  nullable    = false
}

variable "vpc_id" {
  description = "VPC of the proxy and its default endpoint (the cluster's VPC)."
  type        = string
  nullable    = false
}

variable "subnet_ids" {
  description = "Subnets of the proxy's default (READ_WRITE) endpoint, in the cluster's VPC, at least two Availability Zones."
  type        = list(string)
  nullable    = false
}

variable "max_connections" {
  description = "The target's max_connections (e.g. module.aurora.max_connections), to output the pool's server connections per instance. null: not computed."
  type        = number
  default     = null
}

# BEGIN generated pool-settings by bin/generate-terraform.ts from lib/terraform/pool-variables.ts and lib/model (DEFAULT_POOL_SETTINGS, rules.ts); edit there (make terraform-generate)
variable "max_connections_percent" {
  description = "Share of each target's max_connections the proxy may open (bounds: the max-connections-percent rule; see the Rules column of the module README); the proxy is given at most the share that leaves the reserved connections (99 on every catalog class)."
  type        = number
  default     = 100
  nullable    = false

  validation {
    condition     = floor(var.max_connections_percent) == var.max_connections_percent && var.max_connections_percent >= 1 && var.max_connections_percent <= 100
    error_message = "max_connections_percent ${var.max_connections_percent} is out of range: set the share of the target's max_connections the proxy may use (an integer from 1 to 100)"
  }
}

variable "max_idle_connections_percent" {
  description = "Share of max_connections kept open while idle (0..max_connections_percent)."
  type        = number
  default     = 5
  nullable    = false

  validation {
    condition     = floor(var.max_idle_connections_percent) == var.max_idle_connections_percent && var.max_idle_connections_percent >= 0 && var.max_idle_connections_percent <= 100
    error_message = "max_idle_connections_percent ${var.max_idle_connections_percent} is out of range: set the share of max_connections kept open while idle (an integer from 0 to 100)"
  }
}

variable "connection_borrow_timeout_seconds" {
  description = "Seconds a client waits to borrow a pooled connection (bounds: the borrow-timeout rule; see the Rules column of the module README)."
  type        = number
  default     = 120
  nullable    = false

  validation {
    condition     = floor(var.connection_borrow_timeout_seconds) == var.connection_borrow_timeout_seconds && var.connection_borrow_timeout_seconds >= 0 && var.connection_borrow_timeout_seconds <= 300
    error_message = "connection_borrow_timeout_seconds ${var.connection_borrow_timeout_seconds} is out of range: set how long a client waits for a pooled connection (an integer from 0 to 300)"
  }
}
# END generated pool-settings

variable "idle_client_timeout_seconds" {
  description = "Seconds an idle client connection stays open (bounds: the idle-client-timeout rule; see the Rules column of the module README)."
  type        = number
  default     = 1800
  nullable    = false
  # BEGIN generated idle-client-timeout by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = floor(var.idle_client_timeout_seconds) == var.idle_client_timeout_seconds && var.idle_client_timeout_seconds >= 1 && var.idle_client_timeout_seconds <= 28800
    error_message = "idle_client_timeout_seconds ${var.idle_client_timeout_seconds} is out of range: RDS Proxy closes idle client connections after 1 second to 8 hours (an integer from 1 to 28800)"
  }
  # END generated idle-client-timeout
}

variable "session_pinning_filters" {
  description = "Session pinning filters. RDS Proxy supports none for PostgreSQL; any value is rejected, so a configuration ported from MySQL fails loudly instead of silently."
  type        = list(string)
  default     = []
  nullable    = false
  # BEGIN generated session-pinning-filters by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = length(var.session_pinning_filters) == 0
    error_message = "session_pinning_filters ${join(",", var.session_pinning_filters)} is not supported by RDS Proxy for PostgreSQL (MySQL only): remove it"
  }
  # END generated session-pinning-filters
}

variable "debug_logging" {
  description = "Log SQL statements the proxy sees (may log sensitive data; for debugging only)."
  type        = bool
  default     = false
  nullable    = false
}

variable "endpoints" {
  description = "Additional proxy endpoints, keyed by endpoint name: each READ_ONLY (the readers) or READ_WRITE (the writer), in any VPC of the account and region (e.g. a consumer VPC), with a security group of its own that admits allowed_security_group_ids on 5432."
  type = map(object({
    vpc_id                     = string
    subnet_ids                 = list(string)
    target_role                = optional(string, "READ_ONLY")
    allowed_security_group_ids = optional(list(string), [])
  }))
  default  = {}
  nullable = false
  # BEGIN generated endpoint-count by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = length(var.endpoints) <= 20
    error_message = "endpoints ${length(var.endpoints)} exceeds the RDS Proxy limit of 20 endpoints per proxy: use a second proxy or fewer endpoints"
  }
  # END generated endpoint-count
  # BEGIN generated endpoint-name by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = alltrue([for n in keys(var.endpoints) : (can(regex("^[a-z][a-z0-9-]{0,62}$", n)) && !strcontains(n, "--") && !endswith(n, "-"))])
    error_message = "endpoints key ${try([for n in keys(var.endpoints) : n if !(can(regex("^[a-z][a-z0-9-]{0,62}$", n)) && !strcontains(n, "--") && !endswith(n, "-"))][0], "")} is not a valid proxy endpoint name: use 1 to 63 lower-case letters, digits and hyphens, starting with a letter, without \"--\" or a trailing hyphen"
  }
  # END generated endpoint-name
  # BEGIN generated endpoint-target-role by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = alltrue([for e in values(var.endpoints) : contains(["READ_ONLY", "READ_WRITE"], e.target_role)])
    error_message = "endpoints target_role ${try([for e in values(var.endpoints) : e.target_role if !(contains(["READ_ONLY", "READ_WRITE"], e.target_role))][0], "")} is not a proxy endpoint role: use READ_ONLY or READ_WRITE"
  }
  # END generated endpoint-target-role
}

variable "tags" {
  description = "Tags for every resource of the module."
  type        = map(string)
  default     = {}
  nullable    = false
}
