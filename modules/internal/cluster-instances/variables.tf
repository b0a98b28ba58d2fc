variable "identifiers" {
  description = "DB instance identifiers, one instance each, created together."
  type        = list(string)
  nullable    = false
}

variable "promotion_tiers" {
  description = "Failover priority of each instance (0 first), in the order of identifiers."
  type        = list(number)
  nullable    = false
}

variable "settings" {
  description = "What every instance shares: the cluster it joins, its class, the KMS key of Performance Insights and the days kept, enhanced monitoring's interval and role, automatic minor upgrades (Aurora needs them on the cluster too), tags."
  type = object({
    cluster_identifier                  = string
    instance_class                      = string
    kms_key_arn                         = string
    performance_insights_retention_days = number
    monitoring_interval                 = number
    monitoring_role_arn                 = string
    auto_minor_version_upgrade          = bool
    tags                                = map(string)
  })
  nullable = false
}
