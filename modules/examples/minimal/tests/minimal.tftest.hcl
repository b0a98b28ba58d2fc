mock_provider "aws" {
  source = "../../../test/terraform/mocks/aws"
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
