terraform {
  # 1.5: strcontains() in validations; optional() attributes with defaults (1.3); dynamic error messages (1.2).
  required_version = ">= 1.5"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 6.0"
    }
  }
}
