// Package provider is an offline stand-in for the hashicorp/aws Terraform provider: it serves the
// real provider's schema (generated from @cdktn/provider-aws, see cmd/gen-schema) so that
// `terraform init`, `validate` and `plan` run with Terraform's own checks, and it refuses to apply.
package provider

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/terraform-plugin-go/tfprotov5"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// ApplyRefusal is the summary of the error every apply gets.
const ApplyRefusal = "aurora-proxy-kit offline provider: this stand-in serves the hashicorp/aws schema for validate/plan only and cannot apply; install the real hashicorp/aws provider"

const applyDetail = "This hashicorp/aws provider is the offline stand-in from test/terraform/provider, installed " +
	"through a filesystem mirror named by TF_CLI_CONFIG_FILE. Unset TF_CLI_CONFIG_FILE (or point it at a " +
	"configuration without that mirror) and run `terraform init -upgrade` on a machine that reaches the " +
	"Terraform registry to use the real provider."

// DefaultRegion is what the stand-in reports when the provider configuration names no region.
const DefaultRegion = "us-east-1"

// AccountID is the placeholder account the stand-in reports.
const AccountID = "123456789012"

// Server implements tfprotov5.ProviderServer.
type Server struct {
	schemas *Schemas

	mu     sync.Mutex
	region string
}

var _ tfprotov5.ProviderServer = (*Server)(nil)

// New returns a server over the given schemas.
func New(s *Schemas) *Server { return &Server{schemas: s, region: DefaultRegion} }

func errorDiag(summary, detail string) []*tfprotov5.Diagnostic {
	return []*tfprotov5.Diagnostic{{Severity: tfprotov5.DiagnosticSeverityError, Summary: summary, Detail: detail}}
}

func (s *Server) resource(name string) (*Schema, []*tfprotov5.Diagnostic) {
	if r, ok := s.schemas.Resources[name]; ok {
		return r, nil
	}
	return nil, errorDiag("Unsupported resource type", fmt.Sprintf("The offline stand-in has no schema for %s: add `resource %s` to test/terraform/provider/schema/types.txt and regenerate.", name, name))
}

func (s *Server) dataSource(name string) (*Schema, []*tfprotov5.Diagnostic) {
	if d, ok := s.schemas.DataSources[name]; ok {
		return d, nil
	}
	return nil, errorDiag("Unsupported data source", fmt.Sprintf("The offline stand-in has no schema for %s: add `data %s` to test/terraform/provider/schema/types.txt and regenerate.", name, name))
}

func (s *Server) currentRegion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.region
}

// ---- provider ----

func (s *Server) GetMetadata(context.Context, *tfprotov5.GetMetadataRequest) (*tfprotov5.GetMetadataResponse, error) {
	resp := &tfprotov5.GetMetadataResponse{ServerCapabilities: &tfprotov5.ServerCapabilities{GetProviderSchemaOptional: false}}
	for _, name := range sortedKeys(s.schemas.Resources) {
		resp.Resources = append(resp.Resources, tfprotov5.ResourceMetadata{TypeName: name})
	}
	for _, name := range sortedKeys(s.schemas.DataSources) {
		resp.DataSources = append(resp.DataSources, tfprotov5.DataSourceMetadata{TypeName: name})
	}
	return resp, nil
}

func (s *Server) GetProviderSchema(context.Context, *tfprotov5.GetProviderSchemaRequest) (*tfprotov5.GetProviderSchemaResponse, error) {
	resp := &tfprotov5.GetProviderSchemaResponse{
		ServerCapabilities: &tfprotov5.ServerCapabilities{},
		Provider:           s.schemas.Provider.proto(),
		ResourceSchemas:    map[string]*tfprotov5.Schema{},
		DataSourceSchemas:  map[string]*tfprotov5.Schema{},
		Functions:          map[string]*tfprotov5.Function{},
	}
	for name, r := range s.schemas.Resources {
		resp.ResourceSchemas[name] = r.proto()
	}
	for name, d := range s.schemas.DataSources {
		resp.DataSourceSchemas[name] = d.proto()
	}
	return resp, nil
}

func (s *Server) GetResourceIdentitySchemas(context.Context, *tfprotov5.GetResourceIdentitySchemasRequest) (*tfprotov5.GetResourceIdentitySchemasResponse, error) {
	return &tfprotov5.GetResourceIdentitySchemasResponse{IdentitySchemas: map[string]*tfprotov5.ResourceIdentitySchema{}}, nil
}

func (s *Server) PrepareProviderConfig(_ context.Context, req *tfprotov5.PrepareProviderConfigRequest) (*tfprotov5.PrepareProviderConfigResponse, error) {
	return &tfprotov5.PrepareProviderConfigResponse{PreparedConfig: req.Config}, nil
}

func (s *Server) ConfigureProvider(_ context.Context, req *tfprotov5.ConfigureProviderRequest) (*tfprotov5.ConfigureProviderResponse, error) {
	region := DefaultRegion
	if req.Config != nil {
		v, err := req.Config.Unmarshal(s.schemas.Provider.ValueType())
		if err != nil {
			return &tfprotov5.ConfigureProviderResponse{Diagnostics: errorDiag("Invalid provider configuration", err.Error())}, nil
		}
		var m map[string]tftypes.Value
		if v.IsKnown() && !v.IsNull() && v.As(&m) == nil {
			if r, ok := m["region"]; ok && r.IsKnown() && !r.IsNull() {
				var str string
				if r.As(&str) == nil && str != "" {
					region = str
				}
			}
		}
	}
	s.mu.Lock()
	s.region = region
	s.mu.Unlock()
	return &tfprotov5.ConfigureProviderResponse{}, nil
}

func (s *Server) StopProvider(context.Context, *tfprotov5.StopProviderRequest) (*tfprotov5.StopProviderResponse, error) {
	return &tfprotov5.StopProviderResponse{}, nil
}

// ---- managed resources ----

// ValidateResourceTypeConfig runs the real provider's plan-time validators (validators.go) after
// Terraform core's own checks against the schema. Terraform calls it at validate with what is
// known then, and again at plan with the evaluated configuration.
func (s *Server) ValidateResourceTypeConfig(_ context.Context, req *tfprotov5.ValidateResourceTypeConfigRequest) (*tfprotov5.ValidateResourceTypeConfigResponse, error) {
	r, diags := s.resource(req.TypeName)
	if diags != nil {
		return &tfprotov5.ValidateResourceTypeConfigResponse{Diagnostics: diags}, nil
	}
	return &tfprotov5.ValidateResourceTypeConfigResponse{Diagnostics: validateConfig(resourceRules, req.TypeName, r, req.Config)}, nil
}

// validateConfig runs the rules of typeName, if it has any, over a configuration.
func validateConfig(table map[string]typeRules, typeName string, sch *Schema, raw *tfprotov5.DynamicValue) []*tfprotov5.Diagnostic {
	rules, ok := table[typeName]
	if !ok || raw == nil {
		return nil
	}
	cfg, err := raw.Unmarshal(sch.ValueType())
	if err != nil {
		return errorDiag("Cannot read configuration", err.Error())
	}
	return rules.validateConfig(cfg)
}

func (s *Server) UpgradeResourceState(_ context.Context, req *tfprotov5.UpgradeResourceStateRequest) (*tfprotov5.UpgradeResourceStateResponse, error) {
	r, diags := s.resource(req.TypeName)
	if diags != nil {
		return &tfprotov5.UpgradeResourceStateResponse{Diagnostics: diags}, nil
	}
	t := r.ValueType()
	v := tftypes.NewValue(t, nil)
	if req.RawState != nil {
		var err error
		v, err = req.RawState.UnmarshalWithOpts(t, tfprotov5.UnmarshalOpts{ValueFromJSONOpts: tftypes.ValueFromJSONOpts{IgnoreUndefinedAttributes: true}})
		if err != nil {
			return &tfprotov5.UpgradeResourceStateResponse{Diagnostics: errorDiag("Cannot read prior state", err.Error())}, nil
		}
	}
	dv, err := tfprotov5.NewDynamicValue(t, v)
	if err != nil {
		return nil, err
	}
	return &tfprotov5.UpgradeResourceStateResponse{UpgradedState: &dv}, nil
}

func (s *Server) UpgradeResourceIdentity(context.Context, *tfprotov5.UpgradeResourceIdentityRequest) (*tfprotov5.UpgradeResourceIdentityResponse, error) {
	return &tfprotov5.UpgradeResourceIdentityResponse{Diagnostics: errorDiag("Resource identity not supported", "The offline stand-in has no resource identities.")}, nil
}

func (s *Server) ReadResource(_ context.Context, req *tfprotov5.ReadResourceRequest) (*tfprotov5.ReadResourceResponse, error) {
	return &tfprotov5.ReadResourceResponse{NewState: req.CurrentState, Private: req.Private}, nil
}

// PlanResourceChange plans a create with every computed attribute the configuration leaves null
// unknown ("known after apply"); updates keep the proposed state (prior computed values).
func (s *Server) PlanResourceChange(_ context.Context, req *tfprotov5.PlanResourceChangeRequest) (*tfprotov5.PlanResourceChangeResponse, error) {
	r, diags := s.resource(req.TypeName)
	if diags != nil {
		return &tfprotov5.PlanResourceChangeResponse{Diagnostics: diags}, nil
	}
	t := r.ValueType()
	proposed, err := req.ProposedNewState.Unmarshal(t)
	if err != nil {
		return &tfprotov5.PlanResourceChangeResponse{Diagnostics: errorDiag("Cannot read proposed state", err.Error())}, nil
	}
	prior := tftypes.NewValue(t, nil)
	if req.PriorState != nil {
		if prior, err = req.PriorState.Unmarshal(t); err != nil {
			return &tfprotov5.PlanResourceChangeResponse{Diagnostics: errorDiag("Cannot read prior state", err.Error())}, nil
		}
	}
	planned := proposed
	if prior.IsNull() && !proposed.IsNull() && req.Config != nil {
		// The provider's CustomizeDiff checks of a create.
		if cfg, err := req.Config.Unmarshal(t); err == nil {
			if diags := resourceRules[req.TypeName].validatePlan(cfg); len(diags) > 0 {
				return &tfprotov5.PlanResourceChangeResponse{Diagnostics: diags}, nil
			}
		}
	}
	if prior.IsNull() && !proposed.IsNull() {
		if planned, err = unknownComputed(r.Block, proposed); err != nil {
			return &tfprotov5.PlanResourceChangeResponse{Diagnostics: errorDiag("Cannot plan", err.Error())}, nil
		}
	}
	dv, err := tfprotov5.NewDynamicValue(t, planned)
	if err != nil {
		return nil, err
	}
	return &tfprotov5.PlanResourceChangeResponse{PlannedState: &dv, PlannedPrivate: req.PriorPrivate}, nil
}

// ApplyResourceChange always refuses.
func (s *Server) ApplyResourceChange(context.Context, *tfprotov5.ApplyResourceChangeRequest) (*tfprotov5.ApplyResourceChangeResponse, error) {
	return &tfprotov5.ApplyResourceChangeResponse{Diagnostics: errorDiag(ApplyRefusal, applyDetail)}, nil
}

// ImportResourceState imports an object with only its id set (the stand-in cannot read AWS).
func (s *Server) ImportResourceState(_ context.Context, req *tfprotov5.ImportResourceStateRequest) (*tfprotov5.ImportResourceStateResponse, error) {
	r, diags := s.resource(req.TypeName)
	if diags != nil {
		return &tfprotov5.ImportResourceStateResponse{Diagnostics: diags}, nil
	}
	set := map[string]tftypes.Value{}
	if a, ok := r.Block.Attributes["id"]; ok && a.Type.Is(tftypes.String) {
		set["id"] = tftypes.NewValue(tftypes.String, req.ID)
	}
	v := emptyState(r.Block, set)
	dv, err := tfprotov5.NewDynamicValue(r.ValueType(), v)
	if err != nil {
		return nil, err
	}
	return &tfprotov5.ImportResourceStateResponse{ImportedResources: []*tfprotov5.ImportedResource{{TypeName: req.TypeName, State: &dv}}}, nil
}

func (s *Server) MoveResourceState(context.Context, *tfprotov5.MoveResourceStateRequest) (*tfprotov5.MoveResourceStateResponse, error) {
	return &tfprotov5.MoveResourceStateResponse{Diagnostics: errorDiag("Move not supported", "The offline stand-in does not move resource state between types.")}, nil
}

// ---- data sources ----

func (s *Server) ValidateDataSourceConfig(_ context.Context, req *tfprotov5.ValidateDataSourceConfigRequest) (*tfprotov5.ValidateDataSourceConfigResponse, error) {
	d, diags := s.dataSource(req.TypeName)
	if diags != nil {
		return &tfprotov5.ValidateDataSourceConfigResponse{Diagnostics: diags}, nil
	}
	return &tfprotov5.ValidateDataSourceConfigResponse{Diagnostics: validateConfig(dataSourceRules, req.TypeName, d, req.Config)}, nil
}

// ReadDataSource returns the configuration with every computed attribute it leaves null filled:
// with a rendering where the stand-in can compute one (aws_iam_policy_document), with fixed
// offline facts for the account/region/partition data sources, and with typed placeholders
// otherwise (Terraform requires a data source's result to be wholly known).
func (s *Server) ReadDataSource(_ context.Context, req *tfprotov5.ReadDataSourceRequest) (*tfprotov5.ReadDataSourceResponse, error) {
	d, diags := s.dataSource(req.TypeName)
	if diags != nil {
		return &tfprotov5.ReadDataSourceResponse{Diagnostics: diags}, nil
	}
	t := d.ValueType()
	cfg, err := req.Config.Unmarshal(t)
	if err != nil {
		return &tfprotov5.ReadDataSourceResponse{Diagnostics: errorDiag("Cannot read data source configuration", err.Error())}, nil
	}
	facts, err := s.dataSourceFacts(req.TypeName, cfg)
	if err != nil {
		return &tfprotov5.ReadDataSourceResponse{Diagnostics: errorDiag("Cannot read "+req.TypeName, err.Error())}, nil
	}
	out, err := walkBlock(d.Block, cfg, nil, func(path []string, attr *Attribute, cur tftypes.Value) (tftypes.Value, error) {
		if !attr.Computed || !cur.IsNull() {
			return cur, nil
		}
		if len(path) == 1 {
			if f, ok := facts[path[0]]; ok {
				return fromGo(cur.Type(), f)
			}
		}
		return placeholder(cur.Type(), "offline-"+path[len(path)-1]), nil
	})
	if err != nil {
		return &tfprotov5.ReadDataSourceResponse{Diagnostics: errorDiag("Cannot read "+req.TypeName, err.Error())}, nil
	}
	dv, err := tfprotov5.NewDynamicValue(t, out)
	if err != nil {
		return nil, err
	}
	return &tfprotov5.ReadDataSourceResponse{State: &dv}, nil
}

func configString(cfg tftypes.Value, name string) string {
	var m map[string]tftypes.Value
	if cfg.As(&m) != nil {
		return ""
	}
	v, ok := m[name]
	if !ok || v.IsNull() || !v.IsKnown() || !v.Type().Is(tftypes.String) {
		return ""
	}
	var str string
	_ = v.As(&str)
	return str
}

// dataSourceFacts gives the values of top-level computed attributes the stand-in can state.
func (s *Server) dataSourceFacts(typeName string, cfg tftypes.Value) (map[string]any, error) {
	region := configString(cfg, "region")
	if region == "" {
		region = s.currentRegion()
	}
	switch typeName {
	case "aws_caller_identity":
		return map[string]any{
			"id": AccountID, "account_id": AccountID,
			"arn": "arn:aws:iam::" + AccountID + ":user/offline-stand-in", "user_id": "AIDAOFFLINESTANDIN0000",
		}, nil
	case "aws_region":
		name := configString(cfg, "name")
		if name == "" {
			name = region
		}
		return map[string]any{
			"id": name, "name": name, "region": name,
			"endpoint": "ec2." + name + ".amazonaws.com", "description": "offline stand-in region " + name,
		}, nil
	case "aws_partition":
		return map[string]any{"id": "aws", "partition": "aws", "dns_suffix": "amazonaws.com", "reverse_dns_prefix": "com.amazonaws"}, nil
	case "aws_availability_zones":
		names, ids := []string{}, []string{}
		for i, z := range []string{"a", "b", "c"} {
			names = append(names, region+z)
			ids = append(ids, fmt.Sprintf("%s-az%d", region, i+1))
		}
		return map[string]any{"id": region, "names": names, "zone_ids": ids, "group_names": []string{region}}, nil
	case "aws_secretsmanager_secret":
		name := configString(cfg, "name")
		if name == "" {
			name = "offline-secret"
		}
		arn := configString(cfg, "arn")
		if arn == "" {
			arn = "arn:aws:secretsmanager:" + region + ":" + AccountID + ":secret:" + name + "-AbCdEf"
		}
		return map[string]any{"id": arn, "arn": arn, "name": name}, nil
	case "aws_iam_policy_document":
		g, err := toGo(cfg)
		if err != nil {
			return nil, err
		}
		m, _ := g.(map[string]any)
		pretty, minified, id, err := renderPolicyDocument(m)
		if err != nil {
			return nil, err
		}
		return map[string]any{"json": pretty, "minified_json": minified, "id": id}, nil
	}
	return map[string]any{}, nil
}

// ---- functions and ephemeral resources: none ----

func (s *Server) GetFunctions(context.Context, *tfprotov5.GetFunctionsRequest) (*tfprotov5.GetFunctionsResponse, error) {
	return &tfprotov5.GetFunctionsResponse{Functions: map[string]*tfprotov5.Function{}}, nil
}

func (s *Server) CallFunction(_ context.Context, req *tfprotov5.CallFunctionRequest) (*tfprotov5.CallFunctionResponse, error) {
	return &tfprotov5.CallFunctionResponse{Error: &tfprotov5.FunctionError{Text: "the offline stand-in has no function " + req.Name}}, nil
}

func (s *Server) ValidateEphemeralResourceConfig(_ context.Context, req *tfprotov5.ValidateEphemeralResourceConfigRequest) (*tfprotov5.ValidateEphemeralResourceConfigResponse, error) {
	return &tfprotov5.ValidateEphemeralResourceConfigResponse{Diagnostics: errorDiag("Unsupported ephemeral resource", "The offline stand-in has no ephemeral resource "+req.TypeName+".")}, nil
}

func (s *Server) OpenEphemeralResource(_ context.Context, req *tfprotov5.OpenEphemeralResourceRequest) (*tfprotov5.OpenEphemeralResourceResponse, error) {
	return &tfprotov5.OpenEphemeralResourceResponse{Diagnostics: errorDiag("Unsupported ephemeral resource", "The offline stand-in has no ephemeral resource "+req.TypeName+".")}, nil
}

func (s *Server) RenewEphemeralResource(context.Context, *tfprotov5.RenewEphemeralResourceRequest) (*tfprotov5.RenewEphemeralResourceResponse, error) {
	return &tfprotov5.RenewEphemeralResourceResponse{}, nil
}

func (s *Server) CloseEphemeralResource(context.Context, *tfprotov5.CloseEphemeralResourceRequest) (*tfprotov5.CloseEphemeralResourceResponse, error) {
	return &tfprotov5.CloseEphemeralResourceResponse{}, nil
}
