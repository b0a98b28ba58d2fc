package provider

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/aurora-proxy-kit/aurora-proxy-kit/test/terraform/provider/schema"
)

// The embedded schema must hold exactly the types listed in schema/types.txt: a line added there
// without regenerating fails here.
func TestSchemaMatchesTypesList(t *testing.T) {
	s, err := LoadSchemas(schema.JSON)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join("..", "..", "schema", "types.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	wantRes, wantData := map[string]bool{}, map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(strings.SplitN(sc.Text(), "#", 2)[0])
		if len(fields) == 2 && fields[0] == "resource" {
			wantRes[fields[1]] = true
		} else if len(fields) == 2 && fields[0] == "data" {
			wantData[fields[1]] = true
		}
	}
	check := func(kind string, want map[string]bool, got map[string]*Schema) {
		for name := range want {
			if got[name] == nil {
				t.Errorf("%s %s is in types.txt but not in the generated schema: run ./generate-schema.sh", kind, name)
			}
		}
		for name := range got {
			if !want[name] {
				t.Errorf("%s %s is in the generated schema but not in types.txt: run ./generate-schema.sh", kind, name)
			}
		}
	}
	check("resource", wantRes, s.Resources)
	check("data", wantData, s.DataSources)
	if s.Provider.Block.Attributes["region"] == nil || !s.Provider.Block.Attributes["region"].Optional {
		t.Errorf("provider schema lacks optional region")
	}
	if s.ProviderVersion == "" {
		t.Errorf("no provider_version")
	}
}

func TestUnknownComputed(t *testing.T) {
	s, err := LoadSchemas(schema.JSON)
	if err != nil {
		t.Fatal(err)
	}
	r := s.Resources["aws_kms_alias"]
	cfg := emptyState(r.Block, map[string]tftypes.Value{"name": tftypes.NewValue(tftypes.String, "alias/x")})
	planned, err := unknownComputed(r.Block, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]tftypes.Value
	if err := planned.As(&m); err != nil {
		t.Fatal(err)
	}
	if m["arn"].IsKnown() {
		t.Errorf("computed arn should be unknown")
	}
	if !m["name"].IsKnown() || m["name"].IsNull() {
		t.Errorf("configured name should stay known")
	}
	if !m["target_key_id"].IsNull() || !m["target_key_id"].IsKnown() {
		t.Errorf("required, not computed target_key_id should stay null")
	}
}

func TestRenderPolicyDocument(t *testing.T) {
	cfg := map[string]any{
		"policy_id": "p1",
		"source_policy_documents": []any{
			`{"Version":"2012-10-17","Statement":[{"Sid":"Keep","Effect":"Allow","Action":"s3:GetObject","Resource":"*"},{"Sid":"Replace","Effect":"Allow","Action":"s3:*","Resource":"*"}]}`,
		},
		"statement": []any{
			map[string]any{
				"sid": "Replace", "effect": nil,
				"actions":   []any{"kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey"},
				"resources": []any{"*"},
				"principals": []any{
					map[string]any{"type": "*", "identifiers": []any{"*"}},
				},
				"condition": []any{
					map[string]any{"test": "Bool", "variable": "aws:SecureTransport", "values": []any{"false"}},
				},
			},
			map[string]any{
				"effect": "Deny", "actions": []any{"s3:*"}, "not_resources": []any{"arn:aws:s3:::a", "arn:aws:s3:::b"},
				"principals": []any{
					map[string]any{"type": "AWS", "identifiers": []any{"arn:aws:iam::1:root"}},
					map[string]any{"type": "Service", "identifiers": []any{"logs.amazonaws.com", "sns.amazonaws.com"}},
				},
			},
		},
	}
	pretty, minified, id, err := renderPolicyDocument(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Version":"2012-10-17","Id":"p1","Statement":[` +
		`{"Sid":"Keep","Effect":"Allow","Action":"s3:GetObject","Resource":"*"},` +
		`{"Sid":"Replace","Effect":"Allow","Action":["kms:GenerateDataKey","kms:Encrypt","kms:Decrypt"],"Resource":"*","Principal":"*","Condition":{"Bool":{"aws:SecureTransport":"false"}}},` +
		`{"Effect":"Deny","Action":"s3:*","NotResource":["arn:aws:s3:::b","arn:aws:s3:::a"],"Principal":{"AWS":"arn:aws:iam::1:root","Service":["sns.amazonaws.com","logs.amazonaws.com"]}}]}`
	if minified != want {
		t.Errorf("minified_json\n got %s\nwant %s", minified, want)
	}
	var a, b any
	if json.Unmarshal([]byte(pretty), &a) != nil || json.Unmarshal([]byte(minified), &b) != nil {
		t.Fatalf("invalid JSON")
	}
	if !strings.Contains(pretty, "\n  \"Statement\": [") {
		t.Errorf("json is not indented like the real provider's:\n%s", pretty)
	}
	if id == "" {
		t.Errorf("empty id")
	}
}
