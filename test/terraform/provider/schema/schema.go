// Package schema embeds the generated hashicorp/aws schema (see cmd/gen-schema and types.txt).
package schema

import _ "embed"

// JSON is schema/aws-provider-schema.json: Terraform's `providers schema -json` format,
// restricted to the types in types.txt, plus a generated_from record.
//
//go:embed aws-provider-schema.json
var JSON []byte
