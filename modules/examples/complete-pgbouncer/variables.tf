variable "region" {
  description = "AWS region to deploy to."
  type        = string
  default     = "us-east-1"
}

variable "name" {
  description = "Name prefix of everything the example creates (cluster identifier, PgBouncer fleet, endpoints)."
  type        = string
  default     = "apk-pgbouncer"
}

variable "readers" {
  description = "Number of readers; the read-only listener pools for each."
  type        = number
  default     = 2
}

variable "hosts" {
  description = "PgBouncer hosts of the fleet."
  type        = number
  default     = 2
}

variable "instance_type" {
  description = "Graviton instance type of the PgBouncer hosts."
  type        = string
  default     = "c7g.large"
}

variable "pooler_image_id" {
  description = "The PgBouncer hosts' AMI (Debian 13 arm64 in var.region), pinned: aws ssm get-parameter --name /aws/service/debian/release/13/latest/arm64 --query Parameter.Value --output text; set a new one on purpose (every host is replaced, one at a time)."
  type        = string
}

variable "packages_bucket" {
  description = "The bucket holding the PgBouncer packages object (make package uploads it)."
  type        = string
  default     = "aurora-proxy-kit-packages"
}

variable "packages_key" {
  description = "The packages object's key."
  type        = string
  default     = "pgbouncer/packages.tar"
}

variable "lambda_dir" {
  description = "Directory holding the release's pooler-certificate.zip, role-bootstrap.zip, read-handler.zip and write-handler.zip (make lambda-zip builds them into dist/lambda). null: <repository>/dist/lambda."
  type        = string
  default     = null
}

variable "deletion_protection" {
  description = "Protect the cluster from deletion (false lets terraform destroy remove it)."
  type        = bool
  default     = true
}
