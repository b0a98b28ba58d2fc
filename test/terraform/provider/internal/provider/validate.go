package provider

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tfprotov5"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// attrRule applies a rule at a dotted attribute path ("auth.secret_arn"). Blocks and collections
// on the way, and a collection at the end, are walked element by element, so a rule on a set of
// strings checks each string. Null and unknown values pass: the real provider checks those once
// they are known, at apply.
type attrRule struct {
	path   string
	check  rule
	source string // the provider source file and function the rule is ported from
	// framework: the resource is a terraform-plugin-framework one, whose attribute validators
	// report "Invalid Attribute Value" with the message as detail (SDKv2 puts it in the summary).
	framework bool
}

// configRule checks a whole configuration (conflicts, exactly-one-of, plan-time CustomizeDiff).
type configRule struct {
	check  func(cfg tftypes.Value) []*tfprotov5.Diagnostic
	source string
}

// typeRules are the plan-time checks of one resource or data source type.
type typeRules struct {
	attributes []attrRule
	config     []configRule // run when Terraform validates the configuration
	plan       []configRule // run when a create is planned (the provider's CustomizeDiff)
}

func errorAt(path *tftypes.AttributePath, summary, detail string) *tfprotov5.Diagnostic {
	return &tfprotov5.Diagnostic{Severity: tfprotov5.DiagnosticSeverityError, Summary: summary, Detail: detail, Attribute: path}
}

// validateConfig runs the attribute rules and config rules of t over cfg.
func (t typeRules) validateConfig(cfg tftypes.Value) []*tfprotov5.Diagnostic {
	var diags []*tfprotov5.Diagnostic
	for _, r := range t.attributes {
		steps := strings.Split(r.path, ".")
		diags = append(diags, applyRule(r, steps[len(steps)-1], steps, cfg, tftypes.NewAttributePath())...)
	}
	for _, r := range t.config {
		diags = append(diags, r.check(cfg)...)
	}
	return diags
}

func (t typeRules) validatePlan(cfg tftypes.Value) []*tfprotov5.Diagnostic {
	var diags []*tfprotov5.Diagnostic
	for _, r := range t.plan {
		diags = append(diags, r.check(cfg)...)
	}
	return diags
}

func applyRule(r attrRule, name string, steps []string, v tftypes.Value, at *tftypes.AttributePath) []*tfprotov5.Diagnostic {
	if v.IsNull() || !v.IsKnown() {
		return nil
	}
	switch v.Type().(type) {
	case tftypes.List, tftypes.Set:
		var elems []tftypes.Value
		if v.As(&elems) != nil {
			return nil
		}
		_, isSet := v.Type().(tftypes.Set)
		var diags []*tfprotov5.Diagnostic
		for i, e := range elems {
			p := at.WithElementKeyInt(i)
			if isSet {
				p = at.WithElementKeyValue(e)
			}
			diags = append(diags, applyRule(r, name, steps, e, p)...)
		}
		return diags
	case tftypes.Object:
		if len(steps) == 0 {
			return nil
		}
		attr, ok := attribute(v, steps[0])
		if !ok {
			return nil
		}
		return applyRule(r, name, steps[1:], attr, at.WithAttributeName(steps[0]))
	}
	if len(steps) != 0 {
		return nil
	}
	var diags []*tfprotov5.Diagnostic
	for _, msg := range r.check(name, v) {
		if r.framework {
			diags = append(diags, errorAt(at, "Invalid Attribute Value", msg))
		} else {
			diags = append(diags, errorAt(at, msg, ""))
		}
	}
	return diags
}

func attribute(obj tftypes.Value, name string) (tftypes.Value, bool) {
	var m map[string]tftypes.Value
	if obj.IsNull() || !obj.IsKnown() || obj.As(&m) != nil {
		return tftypes.Value{}, false
	}
	v, ok := m[name]
	return v, ok
}

// presence tells whether an attribute is set: known, non-null and, for a collection or block
// list, not empty (Terraform passes absent blocks as empty collections); unknown is reported apart
// (an unknown value may turn out null, so rules about presence skip it).
func presence(cfg tftypes.Value, name string) (set, unknown bool) {
	v, ok := attribute(cfg, name)
	if !ok || v.IsNull() {
		return false, false
	}
	if !v.IsKnown() {
		return false, true
	}
	switch v.Type().(type) {
	case tftypes.List, tftypes.Set, tftypes.Map:
		var n int
		var elems []tftypes.Value
		var entries map[string]tftypes.Value
		if v.As(&elems) == nil {
			n = len(elems)
		} else if v.As(&entries) == nil {
			n = len(entries)
		}
		return n > 0, false
	}
	return true, false
}

// conflictsWith is the SDKv2 ConflictsWith check between two attributes of the same block.
func conflictsWith(a, b, source string) configRule {
	return configRule{source: source, check: func(cfg tftypes.Value) []*tfprotov5.Diagnostic {
		aSet, _ := presence(cfg, a)
		bSet, _ := presence(cfg, b)
		if !aSet || !bSet {
			return nil
		}
		return []*tfprotov5.Diagnostic{errorAt(tftypes.NewAttributePath().WithAttributeName(a),
			"Conflicting configuration arguments",
			fmt.Sprintf("%q: conflicts with %s", a, b))}
	}}
}

// exactlyOneOf is the SDKv2 ExactlyOneOf check; it waits while any of the attributes is unknown.
func exactlyOneOf(source string, names ...string) configRule {
	return configRule{source: source, check: func(cfg tftypes.Value) []*tfprotov5.Diagnostic {
		var set []string
		for _, n := range names {
			isSet, unknown := presence(cfg, n)
			if unknown {
				return nil
			}
			if isSet {
				set = append(set, n)
			}
		}
		list := strings.Join(names, ",")
		at := tftypes.NewAttributePath().WithAttributeName(names[0])
		switch {
		case len(set) == 0:
			return []*tfprotov5.Diagnostic{errorAt(at, "Invalid combination of arguments",
				fmt.Sprintf("%q: one of `%s` must be specified", names[0], list))}
		case len(set) > 1:
			return []*tfprotov5.Diagnostic{errorAt(at, "Invalid combination of arguments",
				fmt.Sprintf("%q: only one of `%s` can be specified, but `%s` were specified.", names[0], list, strings.Join(set, ",")))}
		}
		return nil
	}}
}

// exactlyOneOfFramework is resourcevalidator.ExactlyOneOf of terraform-plugin-framework-validators,
// which words its diagnostic differently from SDKv2.
func exactlyOneOfFramework(source string, names ...string) configRule {
	return configRule{source: source, check: func(cfg tftypes.Value) []*tfprotov5.Diagnostic {
		count := 0
		for _, n := range names {
			isSet, unknown := presence(cfg, n)
			if unknown {
				return nil
			}
			if isSet {
				count++
			}
		}
		if count == 1 {
			return nil
		}
		return []*tfprotov5.Diagnostic{errorAt(nil, "Invalid Attribute Combination",
			fmt.Sprintf("Exactly one of these attributes must be configured: [%s]", strings.Join(names, ",")))}
	}}
}

// maxItems is the SDKv2 MaxItems check of a list or set attribute of primitives.
func maxItems(name string, limit int, source string) configRule {
	return configRule{source: source, check: func(cfg tftypes.Value) []*tfprotov5.Diagnostic {
		v, ok := attribute(cfg, name)
		var elems []tftypes.Value
		if !ok || v.IsNull() || !v.IsKnown() || v.As(&elems) != nil || len(elems) <= limit {
			return nil
		}
		return []*tfprotov5.Diagnostic{errorAt(tftypes.NewAttributePath().WithAttributeName(name), "Too many list items",
			fmt.Sprintf("Attribute supports %d item maximum, but config has %d declared.", limit, len(elems)))}
	}}
}
