variable "name" {
  description = "Name of the fleet: prefixes its resources; the load balancer is named after it; its target groups get generated names (tagged Name <name>-rw and <name>-ro)."
  type        = string
  nullable    = false
  # BEGIN generated fleet-load-balancer-name by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = (can(regex("^[a-z][a-z0-9-]{0,28}$", var.name)) && !strcontains(var.name, "--") && !endswith(var.name, "-"))
    error_message = "name ${var.name} is not a valid load balancer name: use 1 to 29 lower-case letters, digits and hyphens, starting with a letter, without \"--\" or a trailing hyphen (the module names the load balancer after the fleet, at most 32 characters, and its role and instance profile <name>-pooler-<suffix>, a prefix of at most 38)"
  }
  # END generated fleet-load-balancer-name
  # BEGIN generated fleet-load-balancer-name-prefix by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = !startswith(var.name, "internal-")
    error_message = "name ${var.name} begins with \"internal-\", which Elastic Load Balancing reserves: the module names the load balancer after the fleet, so choose a name that does not"
  }
  # END generated fleet-load-balancer-name-prefix
}

variable "vpc_id" {
  description = "The cluster's VPC: the hosts and the Network Load Balancer run in it."
  type        = string
  nullable    = false
}

variable "subnet_ids" {
  description = "Subnets of the hosts and the Network Load Balancer, in the cluster's VPC, in at least two Availability Zones."
  type        = list(string)
  nullable    = false
}

variable "cluster_security_group_id" {
  description = "The cluster's security group (module.aurora.security_group_id); the module lets the hosts reach it on server_port."
  type        = string
  nullable    = false
}

variable "cluster_endpoint" {
  description = "The cluster (writer) endpoint's DNS name (module.aurora.writer_endpoint): the read/write pools follow it through a failover."
  type        = string
  nullable    = false
}

variable "reader_endpoints" {
  description = "Each reader instance's endpoint (module.aurora.reader_instance_endpoints): the read-only listener pools for each of them."
  type        = list(string)
  nullable    = false
  # BEGIN generated fleet-readers by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = floor(length(var.reader_endpoints)) == length(var.reader_endpoints) && length(var.reader_endpoints) >= 1 && length(var.reader_endpoints) <= 15
    error_message = "reader_endpoints ${length(var.reader_endpoints)} is out of range: the read-only listener needs at least one reader; Aurora allows 15 (an integer from 1 to 15)"
  }
  # END generated fleet-readers
}

variable "writer_instance_endpoint" {
  description = "The writer instance's own endpoint (module.aurora.writer_instance_endpoint): after a failover it is a reader, and the read-only pools of the promoted reader pool for it."
  type        = string
  nullable    = false

  validation {
    condition     = length(var.writer_instance_endpoint) > 0
    error_message = "writer_instance_endpoint is empty: give the writer instance's endpoint (module.aurora.writer_instance_endpoint)."
  }
}

variable "server_port" {
  description = "The cluster's PostgreSQL port (module.aurora.port)."
  type        = number
  default     = 5432
  nullable    = false
}

variable "database_name" {
  description = "The database the pools connect to (module.aurora.database_name)."
  type        = string
  nullable    = false
}

variable "max_connections" {
  description = "max_connections of each instance (module.aurora.max_connections): each target's pool is poolSizing() of it, split over the fleet's processes."
  type        = number
  nullable    = false
}

variable "packages_bucket" {
  description = "The S3 bucket holding the packages object (make pooler-packages): a tar of the Debian 13 arm64 packages (PgBouncer 1.25.2, the libraries the image lacks and AWS's SSM Agent for Session Manager), their SHA256SUMS and rds-ca-bundle.pem."
  type        = string
  nullable    = false
  # BEGIN generated pooler-packages-bucket by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = (can(regex("^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$", var.packages_bucket)))
    error_message = "packages_bucket ${var.packages_bucket} is not a valid packages bucket name: use 3 to 63 lower-case letters, digits and hyphens, starting and ending with a letter or digit, without dots (the hosts fetch from the bucket's virtual-hosted HTTPS name, and the wildcard certificate of s3.<region> covers one label)"
  }
  # END generated pooler-packages-bucket
}

variable "packages_key" {
  description = "The packages object's key in packages_bucket."
  type        = string
  nullable    = false
  # BEGIN generated pooler-packages-key by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = (can(regex("^[A-Za-z0-9!_.*'()/-]{1,128}$", var.packages_key)))
    error_message = "packages_key ${var.packages_key} is not a valid packages object key: use 1 to 128 of S3's safe characters, letters, digits and ! - _ . * ' ( ) / (the hosts' user data carries the key in a shell line)"
  }
  # END generated pooler-packages-key
}

variable "packages_kms_key_arn" {
  description = "The KMS key packages_bucket is encrypted with, if a customer managed one: the hosts may decrypt with it. null: S3-managed encryption."
  type        = string
  default     = null
}

variable "tls_secret_arn" {
  description = "The listeners' TLS certificate, made outside the module: a secret holding JSON {\"certificate\", \"privateKey\", \"ca\"} (PEM), issued for the names consumers connect to; give its CA in tls_ca_certificate. null: the module issues one from a CA it manages (certificate_function)."
  type        = string
  default     = null
}

variable "tls_ca_certificate" {
  description = "The CA certificate (PEM) tls_secret_arn's certificate chains to: consumers verify the listeners against it (output client_ca_certificate). Only with tls_secret_arn."
  type        = string
  default     = null

  validation {
    condition     = var.tls_ca_certificate == null || can(regex("^\\s*-----BEGIN CERTIFICATE-----\\r?\\n[A-Za-z0-9+/=\\r\\n]+-----END CERTIFICATE-----\\s*$", var.tls_ca_certificate))
    error_message = "tls_ca_certificate is not one PEM certificate: pass the CA certificate (-----BEGIN CERTIFICATE----- ... -----END CERTIFICATE-----) that consumers verify the listeners against"
  }
}

variable "certificate_function" {
  description = "Without tls_secret_arn: where the release's pooler-certificate.zip is (make lambda-zip builds dist/lambda/pooler-certificate.zip): filename, or s3_bucket and s3_key; source_code_hash as lambda-artifacts.json lists it (null: filebase64sha256(filename))."
  type = object({
    filename         = optional(string)
    s3_bucket        = optional(string)
    s3_key           = optional(string)
    source_code_hash = optional(string)
  })
  default = null
}

variable "certificate_validity_days" {
  description = "Without tls_secret_arn: days the issued server certificate is valid (1..3650; the module's CA is valid 20 years). It is issued again when the endpoint service or this value changes; nothing renews it in between."
  type        = number
  default     = 1825
  nullable    = false

  validation {
    condition     = floor(var.certificate_validity_days) == var.certificate_validity_days && var.certificate_validity_days >= 1 && var.certificate_validity_days <= 3650
    error_message = "certificate_validity_days ${var.certificate_validity_days} is out of range: a whole number of days from 1 to 3650 (half the CA's 20 years: a re-issue keeps the CA for 10 years at least)"
  }
}

variable "certificate_kms_key_arn" {
  description = "Without tls_secret_arn: the key that encrypts the certificate function's environment and log group; its policy must let CloudWatch Logs use it for /aws/lambda/<name>-pooler-certificate. null: a new key with rotation on."
  type        = string
  default     = null
}

variable "hosts" {
  description = "Hosts of the fleet (2..20). The group has a fixed size: each process's pool is a share of each target's budget, so a host added by scaling would overrun max_connections."
  type        = number
  default     = 2
  nullable    = false
  # BEGIN generated fleet-hosts by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = floor(var.hosts) == var.hosts && var.hosts >= 2 && var.hosts <= 20
    error_message = "hosts ${var.hosts} is out of range: run at least two hosts, in two Availability Zones, so one can be replaced while the other serves (an integer from 2 to 20)"
  }
  # END generated fleet-hosts
}

variable "image_id" {
  description = "The hosts' AMI (Debian 13 arm64), pinned: look it up once with aws ssm get-parameter --name /aws/service/debian/release/13/latest/arm64 and change it on purpose; a new id replaces every host, one at a time."
  type        = string
  nullable    = false
  # BEGIN generated pooler-image-id by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = (can(regex("^ami-([0-9a-f]{8}|[0-9a-f]{17})$", var.image_id)))
    error_message = "image_id ${var.image_id} is not a valid AMI id: use the Debian 13 arm64 AMI of the Region, ami- and 8 or 17 hexadecimal digits, looked up once with aws ssm get-parameter --name /aws/service/debian/release/13/latest/arm64 --query Parameter.Value --output text --region <region> and changed on purpose (every host is replaced)"
  }
  # END generated pooler-image-id
}

variable "instance_type" {
  description = "Graviton instance type of the hosts; its vCPUs decide the PgBouncer processes per host."
  type        = string
  default     = "c7g.large"
  nullable    = false
  # BEGIN generated pooler-instance-graviton by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = (can(regex("^[a-z]+[0-9]+g[a-z]*\\.[a-z0-9]+$", var.instance_type)))
    error_message = "instance_type ${var.instance_type} is not a valid Graviton (arm64) instance type: use a Graviton type such as c7g.large: the hosts run the Debian 13 arm64 image"
  }
  # END generated pooler-instance-graviton
  # BEGIN generated pooler-instance-known by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = !can(regex("^[a-z]+[0-9]+g[a-z]*\\.[a-z0-9]+$", var.instance_type)) || (contains(["c7g", "m7g", "r7g", "c8g", "m8g", "r8g"], split(".", var.instance_type)[0]) && contains(["medium", "large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge"], try(split(".", var.instance_type)[1], "")))
    error_message = "instance_type ${var.instance_type} is not a pooler instance type the kit knows the vCPUs of: use a family of c7g, m7g, r7g, c8g, m8g, r8g in size medium, large, xlarge, 2xlarge, 4xlarge, 8xlarge, 12xlarge, 16xlarge"
  }
  # END generated pooler-instance-known
}

# BEGIN generated pool-settings by bin/generate-terraform.ts from lib/terraform/pool-variables.ts and lib/model (DEFAULT_POOL_SETTINGS, rules.ts); edit there (make terraform-generate)
variable "max_connections_percent" {
  description = "Share of each target's max_connections the whole fleet may open (bounds: the max-connections-percent rule; see the Rules column of the module README); the fleet never takes the reserved connections."
  type        = number
  default     = 100
  nullable    = false

  validation {
    condition     = floor(var.max_connections_percent) == var.max_connections_percent && var.max_connections_percent >= 1 && var.max_connections_percent <= 100
    error_message = "max_connections_percent ${var.max_connections_percent} is out of range: set the share of the target's max_connections the proxy may use (an integer from 1 to 100)"
  }
}

variable "max_idle_connections_percent" {
  description = "Share of max_connections the fleet keeps open while idle (0..max_connections_percent)."
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

variable "session_max_connections_percent" {
  description = "Share of each target's pool budget the session-pooling listener of its role takes (bounds: the fleet-session-max-connections-percent rule; see the Rules column of the module README), where some endpoint of the role has pool_mode session; the transaction pools keep the rest."
  type        = number
  default     = 25
  nullable    = false
  # BEGIN generated fleet-session-max-connections-percent by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = floor(var.session_max_connections_percent) == var.session_max_connections_percent && var.session_max_connections_percent >= 1 && var.session_max_connections_percent <= 99
    error_message = "session_max_connections_percent ${var.session_max_connections_percent} is out of range: the session pools take 1 to 99 percent of each target's budget, the transaction pools keep the rest (an integer from 1 to 99)"
  }
  # END generated fleet-session-max-connections-percent
}

variable "tcp_idle_timeout_seconds" {
  description = "The listeners' TCP idle timeout (60..6000 s); PgBouncer's keepalives and client idle timeout follow it."
  type        = number
  default     = 350
  nullable    = false
  # BEGIN generated fleet-tcp-idle-timeout by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = floor(var.tcp_idle_timeout_seconds) == var.tcp_idle_timeout_seconds && var.tcp_idle_timeout_seconds >= 60 && var.tcp_idle_timeout_seconds <= 6000
    error_message = "tcp_idle_timeout_seconds ${var.tcp_idle_timeout_seconds} is out of range: the NLB accepts a TCP idle timeout of 60 to 6000 seconds (an integer from 60 to 6000)"
  }
  # END generated fleet-tcp-idle-timeout
}

variable "read_only_server_user" {
  description = "The read-only listener's server role on Aurora (a role without write privileges); its password is generated into the server secret."
  type        = string
  default     = "apk_pooler_reader"
  nullable    = false
  # BEGIN generated pooler-user-name by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = (can(regex("^[a-z_][a-z0-9_]{0,62}$", var.read_only_server_user)))
    error_message = "read_only_server_user ${var.read_only_server_user} is not a valid database user name: use lower-case letters, digits and underscores, not starting with a digit, at most 63 characters"
  }
  # END generated pooler-user-name
}

variable "consumer_users" {
  description = "Consumer users (at most 15): a secret {\"username\", \"password\"} with a generated password each, which the hosts read. The roles on Aurora are made by the role bootstrap."
  type        = list(string)
  default     = []
  nullable    = false
  # BEGIN generated pooler-user-name-consumer-users by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = alltrue([for u in var.consumer_users : (can(regex("^[a-z_][a-z0-9_]{0,62}$", u)))])
    error_message = "consumer_users item ${try([for u in var.consumer_users : u if !(can(regex("^[a-z_][a-z0-9_]{0,62}$", u)))][0], "")} is not a valid database user name: use lower-case letters, digits and underscores, not starting with a digit, at most 63 characters"
  }
  # END generated pooler-user-name-consumer-users
  # BEGIN generated pooler-consumer-users by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = length(distinct(var.consumer_users)) == length(var.consumer_users)
    error_message = "consumer_users ${join(",", var.consumer_users)} names ${try([for i, u in var.consumer_users : u if index(var.consumer_users, u) != i][0], "")} more than once: name each user once, and let consumers of the same access share it"
  }

  validation {
    condition     = !(length(distinct(var.consumer_users)) == length(var.consumer_users)) || length(var.consumer_users) <= 15
    error_message = "consumer_users ${join(",", var.consumer_users)} are ${length(var.consumer_users)} users: the hosts take at most 15, as their user data carries each user's secret ARN and EC2 user data is limited to 16 KB; share a user between consumers of the same access"
  }
  # END generated pooler-consumer-users
}

variable "s3_prefix_list_id" {
  description = "The id of the Region's S3 managed prefix list (com.amazonaws.<region>.s3), to narrow the hosts' HTTPS egress to S3 and vpc_cidr_block (both or neither). null: HTTPS egress to any address, which in an isolated VPC reaches only its endpoints."
  type        = string
  default     = null
}

variable "vpc_cidr_block" {
  description = "The VPC's CIDR block, where the interface endpoints are: with s3_prefix_list_id (both or neither), the hosts' HTTPS egress goes to it and to S3. Must be known at plan (it decides the egress rules); s3_prefix_list_id may come from a gateway endpoint made in the same apply."
  type        = string
  default     = null
}

variable "endpoints" {
  description = "Endpoints in consumer VPCs by name: an interface endpoint of the fleet's endpoint service each, with a security group of its own admitting allowed_security_group_ids on the port of its role and pool_mode (transaction: READ_WRITE 5432, READ_ONLY 5433; session: 5434, 5435). pool_mode session gives each client a server connection for its whole session (LISTEN, session advisory locks, temporary tables, SET across transactions) through a listener of its own, whose pools take session_max_connections_percent of each target's budget. The subnets' zones must be zones of the load balancer."
  type = map(object({
    vpc_id                     = string
    subnet_ids                 = list(string)
    role                       = string
    allowed_security_group_ids = optional(list(string), [])
    pool_mode                  = optional(string, "transaction")
  }))
  default  = {}
  nullable = false
  # BEGIN generated endpoint-target-role by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = alltrue([for e in values(var.endpoints) : contains(["READ_ONLY", "READ_WRITE"], e.role)])
    error_message = "endpoints role ${try([for e in values(var.endpoints) : e.role if !(contains(["READ_ONLY", "READ_WRITE"], e.role))][0], "")} is not a proxy endpoint role: use READ_ONLY or READ_WRITE"
  }
  # END generated endpoint-target-role
  # BEGIN generated pooler-endpoint-pool-mode by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = alltrue([for e in values(var.endpoints) : contains(["transaction", "session"], e.pool_mode)])
    error_message = "endpoints pool_mode ${try([for e in values(var.endpoints) : e.pool_mode if !(contains(["transaction", "session"], e.pool_mode))][0], "")} is not a pool mode: use transaction or session"
  }
  # END generated pooler-endpoint-pool-mode
  # BEGIN generated pooler-endpoint-name by bin/generate-terraform.ts from lib/model/rules.ts; edit there (make terraform-generate)

  validation {
    condition     = alltrue([for n in keys(var.endpoints) : (can(regex("^[a-z][a-z0-9-]{0,62}$", n)) && !strcontains(n, "--") && !endswith(n, "-"))])
    error_message = "endpoints key ${try([for n in keys(var.endpoints) : n if !(can(regex("^[a-z][a-z0-9-]{0,62}$", n)) && !strcontains(n, "--") && !endswith(n, "-"))][0], "")} is not a valid PgBouncer endpoint name: use 1 to 63 lower-case letters, digits and hyphens, starting with a letter, without \"--\" or a trailing hyphen (as an RDS Proxy endpoint's)"
  }
  # END generated pooler-endpoint-name
}

variable "hosts_depend_on" {
  description = "Values the hosts wait for (ids, names): the Auto Scaling group is created once what they come from exists, e.g. the names of the roles the role bootstrap has made (read-only logins fail until the roles exist). For what depends_on on the module call cannot carry: a bootstrap that takes this module's secrets would make that a cycle."
  type        = list(string)
  default     = []
  nullable    = false
}

variable "tags" {
  description = "Tags of every resource the module creates."
  type        = map(string)
  default     = {}
  nullable    = false
}

variable "subnets_have_egress" {
  description = "Whether subnet_ids route to a NAT gateway or an internet gateway, so that the hosts reaches AWS's APIs without VPC endpoints. false (an isolated VPC): each API needs an entry in vpc_endpoints, or the plan fails naming the missing ones."
  type        = bool
  default     = false
  nullable    = false
}

variable "vpc_endpoints" {
  description = "The VPC endpoints the hosts calls AWS through, by the last label of the service name (s3, secretsmanager, monitoring, cloudformation, ssm, ssmmessages, ec2messages): for an interface endpoint its security group id (the hosts' HTTPS egress is set by s3_prefix_list_id and vpc_cidr_block), for the S3 gateway endpoint its id. Their policies must pass those calls."
  type        = map(string)
  default     = {}
  nullable    = false
}
