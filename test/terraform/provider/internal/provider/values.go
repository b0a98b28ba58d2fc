package provider

import (
	"fmt"
	"math/big"

	"github.com/hashicorp/terraform-plugin-go/tfprotov5"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// attrFunc decides the new value of one attribute of a block; it gets the attribute path
// (names only) and the current value.
type attrFunc func(path []string, attr *Attribute, v tftypes.Value) (tftypes.Value, error)

// walkBlock applies f to every attribute of the object v (a value of block b), recursing into
// nested blocks. Null or unknown objects are returned as they are.
func walkBlock(b *Block, v tftypes.Value, path []string, f attrFunc) (tftypes.Value, error) {
	if v.IsNull() || !v.IsKnown() {
		return v, nil
	}
	var m map[string]tftypes.Value
	if err := v.As(&m); err != nil {
		return v, fmt.Errorf("%v: %w", path, err)
	}
	for name, attr := range b.Attributes {
		cur, ok := m[name]
		if !ok {
			continue
		}
		nv, err := f(append(path, name), attr, cur)
		if err != nil {
			return v, err
		}
		m[name] = nv
	}
	for name, bt := range b.BlockTypes {
		cur, ok := m[name]
		if !ok || cur.IsNull() || !cur.IsKnown() {
			continue
		}
		p := append(path, name)
		switch cur.Type().(type) {
		case tftypes.List, tftypes.Set:
			var elems []tftypes.Value
			if err := cur.As(&elems); err != nil {
				return v, err
			}
			for i := range elems {
				e, err := walkBlock(bt.Block, elems[i], p, f)
				if err != nil {
					return v, err
				}
				elems[i] = e
			}
			m[name] = tftypes.NewValue(cur.Type(), elems)
		case tftypes.Map:
			var elems map[string]tftypes.Value
			if err := cur.As(&elems); err != nil {
				return v, err
			}
			for k := range elems {
				e, err := walkBlock(bt.Block, elems[k], p, f)
				if err != nil {
					return v, err
				}
				elems[k] = e
			}
			m[name] = tftypes.NewValue(cur.Type(), elems)
		case tftypes.Object:
			e, err := walkBlock(bt.Block, cur, p, f)
			if err != nil {
				return v, err
			}
			m[name] = e
		}
	}
	return tftypes.NewValue(v.Type(), m), nil
}

// unknownComputed marks computed attributes that are null (not set in the configuration) unknown,
// which Terraform shows as "(known after apply)".
func unknownComputed(b *Block, v tftypes.Value) (tftypes.Value, error) {
	return walkBlock(b, v, nil, func(_ []string, attr *Attribute, cur tftypes.Value) (tftypes.Value, error) {
		if attr.Computed && cur.IsNull() {
			return tftypes.NewValue(cur.Type(), tftypes.UnknownValue), nil
		}
		return cur, nil
	})
}

// placeholder is a wholly known value of type t: Terraform requires data source results to be
// wholly known, so attributes the stand-in cannot know get a typed placeholder.
func placeholder(t tftypes.Type, hint string) tftypes.Value {
	switch {
	case t.Is(tftypes.String):
		return tftypes.NewValue(t, hint)
	case t.Is(tftypes.Number):
		return tftypes.NewValue(t, big.NewFloat(0))
	case t.Is(tftypes.Bool):
		return tftypes.NewValue(t, false)
	}
	switch tt := t.(type) {
	case tftypes.List, tftypes.Set, tftypes.Tuple:
		return tftypes.NewValue(t, []tftypes.Value{})
	case tftypes.Map:
		return tftypes.NewValue(t, map[string]tftypes.Value{})
	case tftypes.Object:
		m := map[string]tftypes.Value{}
		for name, at := range tt.AttributeTypes {
			m[name] = placeholder(at, hint)
		}
		return tftypes.NewValue(t, m)
	}
	return tftypes.NewValue(t, nil) // dynamic: null
}

// emptyState is an object of block b with every attribute null and no nested blocks, then with
// the given attributes set.
func emptyState(b *Block, set map[string]tftypes.Value) tftypes.Value {
	t := b.proto.ValueType().(tftypes.Object)
	m := map[string]tftypes.Value{}
	for name, at := range t.AttributeTypes {
		if v, ok := set[name]; ok {
			m[name] = v
			continue
		}
		if bt, ok := b.BlockTypes[name]; ok && bt.Nesting != tfprotov5.SchemaNestedBlockNestingModeSingle { // list, set, map blocks: empty
			switch at.(type) {
			case tftypes.List, tftypes.Set:
				m[name] = tftypes.NewValue(at, []tftypes.Value{})
				continue
			case tftypes.Map:
				m[name] = tftypes.NewValue(at, map[string]tftypes.Value{})
				continue
			}
		}
		m[name] = tftypes.NewValue(at, nil)
	}
	return tftypes.NewValue(t, m)
}

// toGo converts a known tftypes value into plain Go values (string, float64, bool, []any,
// map[string]any, nil) for the data sources that compute from their configuration.
func toGo(v tftypes.Value) (any, error) {
	if v.IsNull() {
		return nil, nil
	}
	if !v.IsKnown() {
		return nil, fmt.Errorf("value is unknown")
	}
	t := v.Type()
	switch {
	case t.Is(tftypes.String):
		var s string
		err := v.As(&s)
		return s, err
	case t.Is(tftypes.Number):
		var f big.Float
		if err := v.As(&f); err != nil {
			return nil, err
		}
		x, _ := f.Float64()
		return x, nil
	case t.Is(tftypes.Bool):
		var b bool
		err := v.As(&b)
		return b, err
	}
	switch t.(type) {
	case tftypes.List, tftypes.Set, tftypes.Tuple:
		var elems []tftypes.Value
		if err := v.As(&elems); err != nil {
			return nil, err
		}
		out := make([]any, 0, len(elems))
		for _, e := range elems {
			g, err := toGo(e)
			if err != nil {
				return nil, err
			}
			out = append(out, g)
		}
		return out, nil
	case tftypes.Map, tftypes.Object:
		var elems map[string]tftypes.Value
		if err := v.As(&elems); err != nil {
			return nil, err
		}
		out := make(map[string]any, len(elems))
		for k, e := range elems {
			g, err := toGo(e)
			if err != nil {
				return nil, err
			}
			out[k] = g
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported type %s", t)
}

// fromGo builds a value of type t from a string or []string (the placeholders' shapes).
func fromGo(t tftypes.Type, x any) (tftypes.Value, error) {
	switch val := x.(type) {
	case string:
		if !t.Is(tftypes.String) {
			return tftypes.Value{}, fmt.Errorf("string placeholder for %s", t)
		}
		return tftypes.NewValue(t, val), nil
	case []string:
		var et tftypes.Type
		switch tt := t.(type) {
		case tftypes.List:
			et = tt.ElementType
		case tftypes.Set:
			et = tt.ElementType
		default:
			return tftypes.Value{}, fmt.Errorf("list placeholder for %s", t)
		}
		elems := make([]tftypes.Value, 0, len(val))
		for _, s := range val {
			elems = append(elems, tftypes.NewValue(et, s))
		}
		return tftypes.NewValue(t, elems), nil
	}
	return tftypes.Value{}, fmt.Errorf("unsupported placeholder %T", x)
}
