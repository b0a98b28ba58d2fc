mock_provider "aws" {
  mock_data "aws_availability_zones" {
    defaults = { names = ["us-east-1a", "us-east-1b"] }
  }
}

run "one_vpc_one_reader_one_read_only_endpoint" {
  command = plan

  assert {
    condition     = module.database.instance_class == "db.r6gd.xlarge" && length(module.database.instance_identifiers) == 2
    error_message = "a writer and one reader"
  }
  assert {
    condition     = output.tiered_cache_gib == 134.7
    error_message = "sizing output"
  }
}
