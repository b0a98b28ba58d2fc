# The listeners' certificate: the module's own CA (the pooler certificate function, run at apply) when
# no tls_secret_arn is given, else the user's secret with its CA; and the checks written here of those
# inputs (the model's, certificate_function's source and tls_secret_arn with its CA, run in vectors.tftest.hcl).

mock_provider "aws" {
  source = "../../test/terraform/mocks/aws"
}

# Applied with the mock: an interface endpoint has its DNS names, as AWS gives them.
override_resource {
  target = aws_vpc_endpoint.this
  values = { dns_entry = [{ dns_name = "vpce-0fe5b17a0707d6abc-29p5708s.vpce-svc-0a1b2c3d4e5f60718.us-east-1.vpce.amazonaws.com", hosted_zone_id = "Z7HUB22UULQXV" }] }
}

variables {
  name       = "tests"
  vpc_id     = "vpc-data"
  subnet_ids = ["subnet-d1", "subnet-d2"]
  # The endpoints the hosts call AWS through (an isolated VPC).
  vpc_endpoints             = { s3 = "vpce-s3", secretsmanager = "sg-endpoints", monitoring = "sg-endpoints", ssm = "sg-endpoints", ssmmessages = "sg-endpoints", ec2messages = "sg-endpoints" }
  cluster_security_group_id = "sg-cluster"
  cluster_endpoint          = "tests.cluster-abc.us-east-1.rds.amazonaws.com"
  reader_endpoints          = ["tests-reader-1.abc.us-east-1.rds.amazonaws.com"]
  writer_instance_endpoint  = "tests-writer.abc.us-east-1.rds.amazonaws.com"
  database_name             = "app"
  max_connections           = 1000
  image_id                  = "ami-0123456789abcdef0"
  packages_bucket           = "tests-packages"
  packages_key              = "pgbouncer/packages.tar"
  certificate_function      = { s3_bucket = "tests-lambda", s3_key = "pooler-certificate.zip" }
  consumer_users            = ["app_reader"]
  endpoints = {
    tests-ro = { vpc_id = "vpc-consumer", subnet_ids = ["subnet-c1", "subnet-c2"], role = "READ_ONLY" }
  }
}

run "kit_certificate_issued" {
  command = apply

  assert {
    condition     = output.client_ca_certificate == "-----BEGIN CERTIFICATE-----\nTU9DSw==\n-----END CERTIFICATE-----\n"
    error_message = "consumers get the CA the function returns"
  }
  assert {
    condition     = output.tls_secret_arn == aws_secretsmanager_secret.tls[0].arn && output.bootstrap_variables.TlsSecretArn == aws_secretsmanager_secret.tls[0].arn
    error_message = "the hosts read the module's listener secret"
  }
  assert {
    condition = jsondecode(aws_lambda_invocation.certificate[0].input) == {
      serviceId    = aws_vpc_endpoint_service.this.id
      region       = "us-east-1"
      dnsSuffix    = "amazonaws.com"
      tlsSecretArn = aws_secretsmanager_secret.tls[0].arn
      caSecretArn  = aws_secretsmanager_secret.ca[0].arn
      validityDays = 1825
    }
    error_message = "the function is asked for the endpoint service's names, into the listeners' secret, with the CA kept in its own"
  }
  assert {
    condition     = aws_launch_template.this.tag_specifications[0].tags["aurora-proxy-kit:listener-certificate-serial"] == "0123456789abcdef0123456789abcdef"
    error_message = "a re-issued certificate is a new launch template version (the serial tags the hosts)"
  }
  assert {
    condition     = length(module.certificate_function[0].function.vpc_config) == 0 && module.certificate_function[0].function.runtime == "nodejs24.x" && module.certificate_function[0].function.s3_key == "pooler-certificate.zip"
    error_message = "the function runs the release's zip on Node.js 24, outside any VPC"
  }
  assert {
    condition     = module.certificate_function[0].log_group.kms_key_id == module.certificate_function[0].kms_key.arn && module.certificate_function[0].function.kms_key_arn == module.certificate_function[0].kms_key.arn
    error_message = "a key of its own encrypts the function's logs and environment"
  }
}

run "user_certificate" {
  command = plan
  variables {
    tls_secret_arn     = "arn:aws:secretsmanager:us-east-1:123456789012:secret:tests-tls-AbCdEf"
    tls_ca_certificate = "-----BEGIN CERTIFICATE-----\nVVNFUg==\n-----END CERTIFICATE-----\n"
  }

  assert {
    condition     = output.client_ca_certificate == var.tls_ca_certificate && output.tls_secret_arn == var.tls_secret_arn
    error_message = "the user's secret and CA"
  }
  assert {
    condition     = length(aws_lambda_invocation.certificate) == 0 && length(aws_secretsmanager_secret.ca) == 0 && length(module.certificate_function) == 0
    error_message = "no certificate is issued"
  }
}

run "tls_ca_certificate_not_pem" {
  command = plan
  variables {
    tls_secret_arn     = "arn:aws:secretsmanager:us-east-1:123456789012:secret:tests-tls-AbCdEf"
    tls_ca_certificate = "arn:aws:acm-pca:us-east-1:123456789012:certificate-authority/x"
  }
  expect_failures = [var.tls_ca_certificate]
}

run "certificate_validity_out_of_range" {
  command = plan
  variables { certificate_validity_days = 3651 }
  expect_failures = [var.certificate_validity_days]
}
