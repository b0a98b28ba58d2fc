package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// When the npm package is at hand (CDKTN_PROVIDER_AWS_DIR, or where ../../generate-schema.sh
// installs it), regenerating must reproduce the committed schema byte for byte.
func TestCommittedSchemaIsRegenerated(t *testing.T) {
	cfg, err := ReadConfig(filepath.Join("..", "..", "schema", "types.txt"))
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("CDKTN_PROVIDER_AWS_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "..", "..", ".cache", "cdktn-provider-aws", "node_modules", cfg.PackageName)
	}
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
		t.Skipf("%s@%s not installed (run test/terraform/provider/generate-schema.sh to install it): regeneration not checked", cfg.PackageName, cfg.PackageVersion)
	}
	doc, _, err := Generate(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "..", "schema", "aws-provider-schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(append(got, '\n'), want) {
		t.Fatalf("schema/aws-provider-schema.json differs from what %s@%s generates: run ./generate-schema.sh", cfg.PackageName, cfg.PackageVersion)
	}
	// Spot checks against facts of the real hashicorp/aws schema.
	rs := doc.ProviderSchemas[providerAddress].ResourceSchemas
	if a := rs["aws_db_proxy"].Block.Attributes["engine_family"]; a == nil || !a.Required {
		t.Errorf("aws_db_proxy.engine_family should be required")
	}
	if b := rs["aws_rds_cluster"].Block.BlockTypes["serverlessv2_scaling_configuration"]; b == nil || b.NestingMode != "list" || b.MaxItems != 1 {
		t.Errorf("aws_rds_cluster.serverlessv2_scaling_configuration should be a list block of at most 1")
	}
	if b := rs["aws_db_proxy"].Block.BlockTypes["auth"]; b == nil || b.NestingMode != "set" {
		t.Errorf("aws_db_proxy.auth should be a set block")
	}
	if a := rs["aws_security_group"].Block.Attributes["ingress"]; a == nil || !a.Computed || !a.Optional {
		t.Errorf("aws_security_group.ingress should be an optional+computed attribute (attributes as blocks)")
	}
}
