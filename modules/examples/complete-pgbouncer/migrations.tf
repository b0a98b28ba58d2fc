# The data VPC's Secrets Manager and CloudWatch endpoints became resources of their own (each with its
# policy); state made before moves to them instead of replacing them.
moved {
  from = aws_vpc_endpoint.host_services["secretsmanager"]
  to   = aws_vpc_endpoint.secrets_manager
}

moved {
  from = aws_vpc_endpoint.host_services["monitoring"]
  to   = aws_vpc_endpoint.monitoring
}
