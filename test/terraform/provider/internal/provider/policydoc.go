package provider

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"sort"
	"strconv"
)

// A rendering of data.aws_iam_policy_document that follows the real provider's output closely
// enough for modules to feed it to policies and for tests to read it: same key order, a single
// value rendered as a string, several as a reverse-sorted list (as the real provider does),
// "Principal": "*" for type "*" with identifier "*", source_policy_documents merged first,
// statements with a matching Sid overriding, override_policy_documents last.

type policyStatement struct {
	Sid          string         `json:"Sid,omitempty"`
	Effect       string         `json:"Effect,omitempty"`
	Action       any            `json:"Action,omitempty"`
	NotAction    any            `json:"NotAction,omitempty"`
	Resource     any            `json:"Resource,omitempty"`
	NotResource  any            `json:"NotResource,omitempty"`
	Principal    any            `json:"Principal,omitempty"`
	NotPrincipal any            `json:"NotPrincipal,omitempty"`
	Condition    map[string]any `json:"Condition,omitempty"`
}

type policyDocument struct {
	Version   string             `json:"Version,omitempty"`
	Id        string             `json:"Id,omitempty"`
	Statement []*policyStatement `json:"Statement"`
}

func stringsOf(x any) []string {
	list, _ := x.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// oneOrList renders one string as itself and several as a reverse-sorted list (real provider order).
func oneOrList(values []string) any {
	switch len(values) {
	case 0:
		return nil
	case 1:
		return values[0]
	}
	s := append([]string(nil), values...)
	sort.Sort(sort.Reverse(sort.StringSlice(s)))
	return s
}

func principalsOf(x any) any {
	blocks, _ := x.([]any)
	if len(blocks) == 0 {
		return nil
	}
	byType := map[string][]string{}
	for _, b := range blocks {
		m, _ := b.(map[string]any)
		t, _ := m["type"].(string)
		byType[t] = append(byType[t], stringsOf(m["identifiers"])...)
	}
	if ids, ok := byType["*"]; ok && len(byType) == 1 && len(ids) == 1 && ids[0] == "*" {
		return "*"
	}
	out := map[string]any{}
	for t, ids := range byType {
		out[t] = oneOrList(ids)
	}
	return out
}

func conditionsOf(x any) map[string]any {
	blocks, _ := x.([]any)
	if len(blocks) == 0 {
		return nil
	}
	values := map[string]map[string][]string{}
	for _, b := range blocks {
		m, _ := b.(map[string]any)
		test, _ := m["test"].(string)
		variable, _ := m["variable"].(string)
		if values[test] == nil {
			values[test] = map[string][]string{}
		}
		values[test][variable] = append(values[test][variable], stringsOf(m["values"])...)
	}
	out := map[string]any{}
	for test, vars := range values {
		inner := map[string]any{}
		for v, vals := range vars {
			if len(vals) == 1 {
				inner[v] = vals[0]
			} else {
				inner[v] = vals // condition values keep their order
			}
		}
		out[test] = inner
	}
	return out
}

func mergeStatements(into []*policyStatement, add []*policyStatement) []*policyStatement {
	for _, st := range add {
		replaced := false
		if st.Sid != "" {
			for i, existing := range into {
				if existing.Sid == st.Sid {
					into[i] = st
					replaced = true
					break
				}
			}
		}
		if !replaced {
			into = append(into, st)
		}
	}
	return into
}

func parsePolicies(x any, attr string) ([][]*policyStatement, error) {
	var out [][]*policyStatement
	for i, s := range stringsOf(x) {
		if s == "" {
			continue
		}
		var doc policyDocument
		if err := json.Unmarshal([]byte(s), &doc); err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", attr, i, err)
		}
		out = append(out, doc.Statement)
	}
	return out, nil
}

// renderPolicyDocument returns (json, minified_json, id) for a data.aws_iam_policy_document config.
func renderPolicyDocument(cfg map[string]any) (string, string, string, error) {
	doc := &policyDocument{Version: "2012-10-17"}
	if v, _ := cfg["version"].(string); v != "" {
		doc.Version = v
	}
	doc.Id, _ = cfg["policy_id"].(string)

	sources, err := parsePolicies(cfg["source_policy_documents"], "source_policy_documents")
	if err != nil {
		return "", "", "", err
	}
	if s, _ := cfg["source_json"].(string); s != "" {
		more, err := parsePolicies([]any{s}, "source_json")
		if err != nil {
			return "", "", "", err
		}
		sources = append(more, sources...)
	}
	for _, stmts := range sources {
		doc.Statement = append(doc.Statement, stmts...)
	}

	var own []*policyStatement
	blocks, _ := cfg["statement"].([]any)
	for _, b := range blocks {
		m, _ := b.(map[string]any)
		st := &policyStatement{Effect: "Allow"}
		st.Sid, _ = m["sid"].(string)
		if e, _ := m["effect"].(string); e != "" {
			st.Effect = e
		}
		st.Action = oneOrList(stringsOf(m["actions"]))
		st.NotAction = oneOrList(stringsOf(m["not_actions"]))
		st.Resource = oneOrList(stringsOf(m["resources"]))
		st.NotResource = oneOrList(stringsOf(m["not_resources"]))
		st.Principal = principalsOf(m["principals"])
		st.NotPrincipal = principalsOf(m["not_principals"])
		st.Condition = conditionsOf(m["condition"])
		own = append(own, st)
	}
	doc.Statement = mergeStatements(doc.Statement, own)

	overrides, err := parsePolicies(cfg["override_policy_documents"], "override_policy_documents")
	if err != nil {
		return "", "", "", err
	}
	if s, _ := cfg["override_json"].(string); s != "" {
		more, err := parsePolicies([]any{s}, "override_json")
		if err != nil {
			return "", "", "", err
		}
		overrides = append(overrides, more...)
	}
	for _, stmts := range overrides {
		doc.Statement = mergeStatements(doc.Statement, stmts)
	}
	if doc.Statement == nil {
		doc.Statement = []*policyStatement{}
	}

	pretty, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return "", "", "", err
	}
	minified, err := json.Marshal(doc)
	if err != nil {
		return "", "", "", err
	}
	id := strconv.FormatUint(uint64(crc32.ChecksumIEEE(pretty)), 10)
	return string(pretty), string(minified), id, nil
}
