terraform {
  # 1.5: strcontains() in validations; optional() attributes with defaults (1.3); dynamic error messages (1.2).
  required_version = ">= 1.5"

  required_providers {
    # 6.15: aws_db_proxy's default_auth_scheme (end-to-end IAM authentication).
    aws = {
      source  = "hashicorp/aws"
      version = ">= 6.15"
    }
  }
}
