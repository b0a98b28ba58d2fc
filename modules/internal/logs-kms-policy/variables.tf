variable "log_group_names" {
  description = "Names of the log groups CloudWatch Logs may encrypt with the key (a name may end in * to match a prefix); the key serves no other log group."
  type        = list(string)
  nullable    = false

  validation {
    condition     = length(var.log_group_names) > 0
    error_message = "log_group_names is empty: name at least one log group the key encrypts"
  }
}
