package provider

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/hashicorp/terraform-plugin-go/tfprotov5"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// ProviderAddress is the source address whose schema the stand-in serves.
const ProviderAddress = "registry.terraform.io/hashicorp/aws"

// The JSON shapes of `terraform providers schema -json` (what cmd/gen-schema writes).
type jsonAttribute struct {
	Type      json.RawMessage `json:"type"`
	Required  bool            `json:"required"`
	Optional  bool            `json:"optional"`
	Computed  bool            `json:"computed"`
	Sensitive bool            `json:"sensitive"`
}

type jsonBlockType struct {
	NestingMode string     `json:"nesting_mode"`
	Block       *jsonBlock `json:"block"`
	MinItems    int64      `json:"min_items"`
	MaxItems    int64      `json:"max_items"`
}

type jsonBlock struct {
	Attributes map[string]*jsonAttribute `json:"attributes"`
	BlockTypes map[string]*jsonBlockType `json:"block_types"`
}

type jsonSchema struct {
	Version int64      `json:"version"`
	Block   *jsonBlock `json:"block"`
}

type jsonDocument struct {
	GeneratedFrom struct {
		Package         string `json:"package"`
		PackageVersion  string `json:"package_version"`
		ProviderVersion string `json:"provider_version"`
	} `json:"generated_from"`
	ProviderSchemas map[string]struct {
		Provider          *jsonSchema            `json:"provider"`
		ResourceSchemas   map[string]*jsonSchema `json:"resource_schemas"`
		DataSourceSchemas map[string]*jsonSchema `json:"data_source_schemas"`
	} `json:"provider_schemas"`
}

// Block is a schema block with its attribute types parsed, for walking values.
type Block struct {
	Attributes map[string]*Attribute
	BlockTypes map[string]*BlockType
	proto      *tfprotov5.SchemaBlock
}

type Attribute struct {
	Type                         tftypes.Type
	Required, Optional, Computed bool
}

type BlockType struct {
	Nesting tfprotov5.SchemaNestedBlockNestingMode
	Block   *Block
}

// Schema is one resource's, data source's or the provider's schema.
type Schema struct {
	Version int64
	Block   *Block
}

// ValueType is the object type of the whole configuration/state.
func (s *Schema) ValueType() tftypes.Type { return s.Block.proto.ValueType() }

func (s *Schema) proto() *tfprotov5.Schema {
	return &tfprotov5.Schema{Version: s.Version, Block: s.Block.proto}
}

// Schemas is everything the stand-in serves.
type Schemas struct {
	ProviderVersion string
	GeneratedFrom   string
	Provider        *Schema
	Resources       map[string]*Schema
	DataSources     map[string]*Schema
}

// LoadSchemas parses the generated JSON.
func LoadSchemas(raw []byte) (*Schemas, error) {
	var doc jsonDocument
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("schema JSON: %w", err)
	}
	ps, ok := doc.ProviderSchemas[ProviderAddress]
	if !ok {
		return nil, fmt.Errorf("schema JSON has no %s", ProviderAddress)
	}
	out := &Schemas{
		ProviderVersion: doc.GeneratedFrom.ProviderVersion,
		GeneratedFrom:   doc.GeneratedFrom.Package + "@" + doc.GeneratedFrom.PackageVersion,
		Resources:       map[string]*Schema{},
		DataSources:     map[string]*Schema{},
	}
	var err error
	if out.Provider, err = convertSchema("provider", ps.Provider); err != nil {
		return nil, err
	}
	for name, s := range ps.ResourceSchemas {
		if out.Resources[name], err = convertSchema(name, s); err != nil {
			return nil, err
		}
	}
	for name, s := range ps.DataSourceSchemas {
		if out.DataSources[name], err = convertSchema(name, s); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func convertSchema(name string, s *jsonSchema) (*Schema, error) {
	if s == nil || s.Block == nil {
		return nil, fmt.Errorf("%s: empty schema", name)
	}
	b, err := convertBlock(name, s.Block)
	if err != nil {
		return nil, err
	}
	return &Schema{Version: s.Version, Block: b}, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func convertBlock(path string, jb *jsonBlock) (*Block, error) {
	b := &Block{Attributes: map[string]*Attribute{}, BlockTypes: map[string]*BlockType{}, proto: &tfprotov5.SchemaBlock{}}
	for _, name := range sortedKeys(jb.Attributes) {
		ja := jb.Attributes[name]
		t, err := tftypes.ParseJSONType(ja.Type)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: type %s: %w", path, name, ja.Type, err)
		}
		b.Attributes[name] = &Attribute{Type: t, Required: ja.Required, Optional: ja.Optional, Computed: ja.Computed}
		b.proto.Attributes = append(b.proto.Attributes, &tfprotov5.SchemaAttribute{
			Name: name, Type: t, Required: ja.Required, Optional: ja.Optional, Computed: ja.Computed, Sensitive: ja.Sensitive,
		})
	}
	for _, name := range sortedKeys(jb.BlockTypes) {
		jbt := jb.BlockTypes[name]
		nested, err := convertBlock(path+"."+name, jbt.Block)
		if err != nil {
			return nil, err
		}
		var mode tfprotov5.SchemaNestedBlockNestingMode
		switch jbt.NestingMode {
		case "single":
			mode = tfprotov5.SchemaNestedBlockNestingModeSingle
		case "list":
			mode = tfprotov5.SchemaNestedBlockNestingModeList
		case "set":
			mode = tfprotov5.SchemaNestedBlockNestingModeSet
		case "map":
			mode = tfprotov5.SchemaNestedBlockNestingModeMap
		case "group":
			mode = tfprotov5.SchemaNestedBlockNestingModeGroup
		default:
			return nil, fmt.Errorf("%s.%s: unknown nesting mode %q", path, name, jbt.NestingMode)
		}
		b.BlockTypes[name] = &BlockType{Nesting: mode, Block: nested}
		b.proto.BlockTypes = append(b.proto.BlockTypes, &tfprotov5.SchemaNestedBlock{
			TypeName: name, Block: nested.proto, Nesting: mode, MinItems: jbt.MinItems, MaxItems: jbt.MaxItems,
		})
	}
	return b, nil
}
