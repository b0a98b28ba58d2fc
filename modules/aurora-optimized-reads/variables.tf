variable "cluster_identifier" {
  description = "Cluster identifier; instances are named <cluster_identifier>-writer and <cluster_identifier>-reader-<n>, the PostgreSQL log group /aws/rds/cluster/<cluster_identifier>/postgresql."
  type        = string
  nullable    = false
  # BEGIN generated cluster-identifier by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = (can(regex("^[a-z][a-z0-9-]{0,49}$", var.cluster_identifier)) && !strcontains(var.cluster_identifier, "--") && !endswith(var.cluster_identifier, "-"))
    error_message = "cluster_identifier ${var.cluster_identifier} is not a valid cluster identifier: use 1 to 50 lower-case letters, digits and hyphens, starting with a letter, without \"--\" or a trailing hyphen"
  }
  # END generated cluster-identifier
}

variable "vpc_id" {
  description = "VPC of the cluster's security group."
  type        = string
  nullable    = false
}

variable "subnet_ids" {
  description = "Subnets of the cluster's DB subnet group (isolated subnets in at least two Availability Zones)."
  type        = list(string)
  nullable    = false
}

variable "instance_class" {
  description = "DB instance class of the writer and every reader; an Optimized Reads (NVMe) class: db.r6gd.*, db.r6id.* or db.r8gd.*."
  type        = string
  default     = "db.r6gd.xlarge"
  nullable    = false
  # BEGIN generated instance-class by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = can(regex("^db\\.([a-z0-9-]+)\\.([a-z0-9]+)$", var.instance_class))
    error_message = "instance_class ${var.instance_class} is not a DB instance class: use the form db.<family>.<size>, e.g. db.r6gd.xlarge"
  }

  validation {
    condition     = !can(regex("^db\\.([a-z0-9-]+)\\.([a-z0-9]+)$", var.instance_class)) || contains(["r6gd", "r6id", "r8gd"], try(regex("^db\\.([a-z0-9-]+)\\.([a-z0-9]+)$", var.instance_class)[0], ""))
    error_message = "instance_class ${var.instance_class} has no local NVMe: Optimized Reads needs db.r6gd, db.r6id, db.r8gd (e.g. db.r6gd.xlarge)"
  }

  validation {
    condition     = !can(regex("^db\\.([a-z0-9-]+)\\.([a-z0-9]+)$", var.instance_class)) || !contains(["r6gd", "r6id", "r8gd"], try(regex("^db\\.([a-z0-9-]+)\\.([a-z0-9]+)$", var.instance_class)[0], "")) || contains(["db.r6gd.xlarge", "db.r6gd.2xlarge", "db.r6gd.4xlarge", "db.r6gd.8xlarge", "db.r6gd.12xlarge", "db.r6gd.16xlarge", "db.r6id.xlarge", "db.r6id.2xlarge", "db.r6id.4xlarge", "db.r6id.8xlarge", "db.r6id.12xlarge", "db.r6id.16xlarge", "db.r6id.24xlarge", "db.r6id.32xlarge", "db.r8gd.xlarge", "db.r8gd.2xlarge", "db.r8gd.4xlarge", "db.r8gd.8xlarge", "db.r8gd.12xlarge", "db.r8gd.16xlarge", "db.r8gd.24xlarge", "db.r8gd.48xlarge"], var.instance_class)
    error_message = replace(lookup({ r6gd = "instance_class @VALUE@ is not offered by Aurora PostgreSQL: choose a size of r6gd from xlarge, 2xlarge, 4xlarge, 8xlarge, 12xlarge, 16xlarge", r6id = "instance_class @VALUE@ is not offered by Aurora PostgreSQL: choose a size of r6id from xlarge, 2xlarge, 4xlarge, 8xlarge, 12xlarge, 16xlarge, 24xlarge, 32xlarge", r8gd = "instance_class @VALUE@ is not offered by Aurora PostgreSQL: choose a size of r8gd from xlarge, 2xlarge, 4xlarge, 8xlarge, 12xlarge, 16xlarge, 24xlarge, 48xlarge" }, try(regex("^db\\.([a-z0-9-]+)\\.([a-z0-9]+)$", var.instance_class)[0], ""), ""), "@VALUE@", var.instance_class)
  }
  # END generated instance-class
}

variable "readers" {
  description = "Number of reader instances (bounds: the readers rule; see the Rules column of the module README). Reader 1 is the preferred failover target (promotion tier 1), the rest tier 2."
  type        = number
  default     = 2
  nullable    = false
  # BEGIN generated readers by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = floor(var.readers) == var.readers && var.readers >= 0 && var.readers <= 15
    error_message = "readers ${var.readers} is out of range: Aurora allows up to 15 readers per cluster (an integer from 0 to 15)"
  }
  # END generated readers
}

variable "engine_version" {
  description = "Aurora PostgreSQL engine version, MAJOR.MINOR, at or above the Optimized Reads floor of the instance family and still offered by RDS."
  type        = string
  default     = "17.9"
  nullable    = false
  # BEGIN generated engine-version by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = can(regex("^[0-9]+\\.[0-9]+$", var.engine_version))
    error_message = "engine_version ${var.engine_version} is not of the form MAJOR.MINOR: use e.g. 18.6"
  }

  validation {
    condition     = !can(regex("^[0-9]+\\.[0-9]+$", var.engine_version)) || try(tonumber(split(".", var.engine_version)[0]) >= 14, false)
    error_message = "engine_version ${var.engine_version} predates Optimized Reads: use 14.x or later, e.g. 18.6"
  }
  # END generated engine-version
}

variable "auto_minor_version_upgrade" {
  description = "Whether RDS applies minor engine upgrades by itself, to the cluster and every instance. Off by default: RDS cannot downgrade, so after an upgrade engine_version is below the running version and the next plan proposes a downgrade; when on, plan warns (check block) and you raise engine_version to the running version (output engine_version_actual) after each upgrade."
  type        = bool
  default     = false
  nullable    = false
}

variable "master_username" {
  description = "Name of the master user; RDS keeps its password in Secrets Manager (encrypted with the cluster key) and rotates it."
  type        = string
  default     = "postgres"
  nullable    = false
}

variable "database_name" {
  description = "Name of the database created in the cluster."
  type        = string
  default     = "app"
  nullable    = false
}

variable "create_kms_key" {
  description = "Whether the module creates its KMS key (rotation on, CloudWatch Logs limited to the PostgreSQL log group, 30-day deletion window); false: pass kms_key_arn. A flag rather than a null check, so kms_key_arn may be unknown until apply. terraform destroy schedules the module's key for deletion (cancel within 30 days to restore a final snapshot); to keep the key, create it in your configuration with lifecycle { prevent_destroy = true } and pass it."
  type        = bool
  default     = true
  nullable    = false
}

variable "kms_key_arn" {
  description = "KMS key that encrypts storage, the master secret, Performance Insights and the PostgreSQL log. Its policy must let CloudWatch Logs use it for the log group /aws/rds/cluster/<cluster_identifier>/postgresql (modules/internal/logs-kms-policy writes such a policy). Used when create_kms_key is false."
  type        = string
  default     = null
}

variable "deletion_protection" {
  description = "Whether the cluster refuses to be deleted."
  type        = bool
  default     = true
  nullable    = false
}

variable "skip_final_snapshot" {
  description = "Whether deleting the cluster skips the final snapshot (the CDK construct's RemovalPolicy.SNAPSHOT is false)."
  type        = bool
  default     = false
  nullable    = false
}

variable "backup_retention_days" {
  description = "Days of automated backups (bounds: the backup-retention rule; see the Rules column of the module README)."
  type        = number
  default     = 7
  nullable    = false
  # BEGIN generated backup-retention by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = floor(var.backup_retention_days) == var.backup_retention_days && var.backup_retention_days >= 7 && var.backup_retention_days <= 35
    error_message = "backup_retention_days ${var.backup_retention_days} is out of range: keep at least a week of backups; RDS allows at most 35 days (an integer from 7 to 35)"
  }
  # END generated backup-retention
}

variable "monitoring_interval" {
  description = "Seconds between enhanced monitoring samples (1, 5, 10, 15, 30 or 60)."
  type        = number
  default     = 60
  nullable    = false
  # BEGIN generated monitoring-interval by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = contains([1, 5, 10, 15, 30, 60], var.monitoring_interval)
    error_message = "monitoring_interval ${var.monitoring_interval} is not an enhanced monitoring interval: use 1, 5, 10, 15, 30 or 60 seconds"
  }
  # END generated monitoring-interval
}

variable "performance_insights_retention_days" {
  description = "Days of Performance Insights data (7, or a multiple of 31 up to 731)."
  type        = number
  default     = 7
  nullable    = false
}

variable "log_retention_days" {
  description = "Days the exported PostgreSQL log is kept."
  type        = number
  default     = 30
  nullable    = false
}

variable "log_group_skip_destroy" {
  description = "Whether terraform destroy leaves the PostgreSQL log group (and its logs) in place and only forgets it, as the CDK construct retains it."
  type        = bool
  default     = true
  nullable    = false
}

variable "parameters" {
  description = "Extra cluster parameters, merged over the kit's. rds.force_ssl cannot be turned off, and shared_preload_libraries is added to pg_stat_statements rather than replacing it."
  type        = map(string)
  default     = {}
  nullable    = false
  # BEGIN generated parameters-keep-tls by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = lookup(var.parameters, "rds.force_ssl", "1") == "1"
    error_message = "parameters rds.force_ssl=${lookup(var.parameters, "rds.force_ssl", "")} would let clients connect without TLS: remove it (the kit sets rds.force_ssl=1)"
  }
  # END generated parameters-keep-tls
}

variable "tags" {
  description = "Tags for every resource of the module."
  type        = map(string)
  default     = {}
  nullable    = false
}
