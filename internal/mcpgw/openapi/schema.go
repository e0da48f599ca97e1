package openapi

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// maxInlineDepth bounds the nesting of schemas written inline (references
// are followed through $defs, not by nesting).
const maxInlineDepth = 100

// schemas translates OpenAPI schemas into JSON Schema 2020-12 for one tool's
// input schema. A referenced schema becomes a "$defs" entry, converted once
// (a worklist, so recursion and long reference chains cost no stack); the
// nodes written are counted against a bound.
type schemas struct {
	defs    map[string]any
	keys    map[*openapi3.Schema]string // a resolved schema → its $defs key
	taken   map[string]bool
	pending []*openapi3.Schema
	nodes   int
	limit   int
	err     error
}

func newSchemas(limit int) *schemas {
	return &schemas{
		defs:  map[string]any{},
		keys:  map[*openapi3.Schema]string{},
		taken: map[string]bool{},
		limit: limit,
	}
}

// finish converts the referenced schemas still waiting and returns the
// $defs (nil when none).
func (c *schemas) finish() map[string]any {
	for len(c.pending) > 0 && c.err == nil {
		s := c.pending[0]
		c.pending = c.pending[1:]
		c.defs[c.keys[s]] = c.value(s, 0)
	}
	if len(c.defs) == 0 {
		return nil
	}
	return c.defs
}

// ref converts a schema reference: a {"$ref": "#/$defs/…"} when it is one,
// else the schema inline. A nil reference accepts anything.
func (c *schemas) ref(r *openapi3.SchemaRef, depth int) map[string]any {
	if r == nil || r.Value == nil || c.err != nil {
		return map[string]any{}
	}
	if r.Ref == "" {
		return c.value(r.Value, depth)
	}
	if !c.count() {
		return map[string]any{}
	}
	key, ok := c.keys[r.Value]
	if !ok {
		key = c.key(r.Ref)
		c.keys[r.Value] = key
		c.pending = append(c.pending, r.Value)
	}
	return map[string]any{"$ref": "#/$defs/" + key}
}

// key names a reference's $defs entry: a component schema's name, else the
// reference's pointer, restricted to [A-Za-z0-9_.-] and made unique.
func (c *schemas) key(ref string) string {
	name := strings.TrimPrefix(ref, "#/")
	name = strings.TrimPrefix(name, "components/schemas/")
	name = sanitise(name, 100)
	if name == "" {
		name = "schema"
	}
	key := name
	for i := 2; c.taken[key]; i++ {
		key = fmt.Sprintf("%s_%d", name, i)
	}
	c.taken[key] = true
	return key
}

// count records one node and reports whether the bound still holds.
func (c *schemas) count() bool {
	c.nodes++
	if c.nodes > c.limit && c.err == nil {
		c.err = fmt.Errorf("its input schema has more than %d nodes", c.limit)
	}
	return c.err == nil
}

// value converts one schema object.
func (c *schemas) value(s *openapi3.Schema, depth int) map[string]any {
	if !c.count() {
		return map[string]any{}
	}
	if depth > maxInlineDepth {
		c.err = fmt.Errorf("a schema is nested more than %d levels deep", maxInlineDepth)
		return map[string]any{}
	}
	if s.Always != nil {
		if *s.Always {
			return map[string]any{}
		}
		return map[string]any{"not": map[string]any{}}
	}
	m := map[string]any{}
	c.annotations(m, s)
	c.types(m, s)
	numbers(m, s)
	c.arrays(m, s, depth)
	c.objects(m, s, depth)
	c.composition(m, s, depth)
	return m
}

func (c *schemas) annotations(m map[string]any, s *openapi3.Schema) {
	setString(m, "title", s.Title)
	setString(m, "description", s.Description)
	setString(m, "format", s.Format)
	setString(m, "pattern", s.Pattern)
	setString(m, "contentMediaType", s.ContentMediaType)
	setString(m, "contentEncoding", s.ContentEncoding)
	setJSON(m, "default", s.Default)
	setJSON(m, "const", s.Const)
	if len(s.Enum) > 0 {
		setJSON(m, "enum", s.Enum)
	}
	setBool(m, "deprecated", s.Deprecated)
	setBool(m, "readOnly", s.ReadOnly)
	setBool(m, "writeOnly", s.WriteOnly)
}

// types writes "type", adding "null" for 3.0's nullable.
func (c *schemas) types(m map[string]any, s *openapi3.Schema) {
	if s.Type == nil || len(*s.Type) == 0 {
		return
	}
	ts := append([]string(nil), (*s.Type)...)
	if s.Nullable && !s.Type.Includes("null") {
		ts = append(ts, "null")
	}
	if len(ts) == 1 {
		m["type"] = ts[0]
		return
	}
	list := make([]any, len(ts))
	for i, t := range ts {
		list[i] = t
	}
	m["type"] = list
}

// numbers writes the numeric bounds; 3.0's boolean exclusive bounds become
// 2020-12's numeric ones.
func numbers(m map[string]any, s *openapi3.Schema) {
	setNumber(m, "minimum", s.Min)
	setNumber(m, "maximum", s.Max)
	setNumber(m, "multipleOf", s.MultipleOf)
	if v := s.ExclusiveMin.Value; v != nil {
		setNumber(m, "exclusiveMinimum", v)
	} else if s.ExclusiveMin.IsTrue() && s.Min != nil {
		delete(m, "minimum")
		setNumber(m, "exclusiveMinimum", s.Min)
	}
	if v := s.ExclusiveMax.Value; v != nil {
		setNumber(m, "exclusiveMaximum", v)
	} else if s.ExclusiveMax.IsTrue() && s.Max != nil {
		delete(m, "maximum")
		setNumber(m, "exclusiveMaximum", s.Max)
	}
	if s.MinLength > 0 {
		m["minLength"] = s.MinLength
	}
	setUint(m, "maxLength", s.MaxLength)
}

func (c *schemas) arrays(m map[string]any, s *openapi3.Schema, depth int) {
	if s.Items != nil {
		m["items"] = c.ref(s.Items, depth+1)
	}
	if len(s.PrefixItems) > 0 {
		m["prefixItems"] = c.list(s.PrefixItems, depth)
	}
	if s.Contains != nil {
		m["contains"] = c.ref(s.Contains, depth+1)
	}
	if s.MinItems > 0 {
		m["minItems"] = s.MinItems
	}
	setUint(m, "maxItems", s.MaxItems)
	setUint(m, "minContains", s.MinContains)
	setUint(m, "maxContains", s.MaxContains)
	setBool(m, "uniqueItems", s.UniqueItems)
	c.boolSchema(m, "unevaluatedItems", s.UnevaluatedItems, depth)
}

func (c *schemas) objects(m map[string]any, s *openapi3.Schema, depth int) {
	if len(s.Properties) > 0 {
		m["properties"] = c.named(s.Properties, depth)
	}
	if len(s.PatternProperties) > 0 {
		m["patternProperties"] = c.named(s.PatternProperties, depth)
	}
	if len(s.DependentSchemas) > 0 {
		m["dependentSchemas"] = c.named(s.DependentSchemas, depth)
	}
	if len(s.Required) > 0 {
		m["required"] = append([]string(nil), s.Required...)
	}
	if len(s.DependentRequired) > 0 {
		m["dependentRequired"] = s.DependentRequired
	}
	if s.PropertyNames != nil {
		m["propertyNames"] = c.ref(s.PropertyNames, depth+1)
	}
	if s.MinProps > 0 {
		m["minProperties"] = s.MinProps
	}
	setUint(m, "maxProperties", s.MaxProps)
	c.boolSchema(m, "additionalProperties", s.AdditionalProperties, depth)
	c.boolSchema(m, "unevaluatedProperties", s.UnevaluatedProperties, depth)
}

func (c *schemas) composition(m map[string]any, s *openapi3.Schema, depth int) {
	lists := []struct {
		key  string
		refs openapi3.SchemaRefs
	}{{"allOf", s.AllOf}, {"anyOf", s.AnyOf}, {"oneOf", s.OneOf}}
	for _, l := range lists {
		if len(l.refs) > 0 {
			m[l.key] = c.list(l.refs, depth)
		}
	}
	single := []struct {
		key string
		ref *openapi3.SchemaRef
	}{{"not", s.Not}, {"if", s.If}, {"then", s.Then}, {"else", s.Else}}
	for _, one := range single {
		if one.ref != nil {
			m[one.key] = c.ref(one.ref, depth+1)
		}
	}
}

func (c *schemas) list(refs openapi3.SchemaRefs, depth int) []any {
	out := make([]any, len(refs))
	for i, r := range refs {
		out[i] = c.ref(r, depth+1)
	}
	return out
}

func (c *schemas) named(refs openapi3.Schemas, depth int) map[string]any {
	names := make([]string, 0, len(refs))
	for name := range refs {
		names = append(names, name)
	}
	sort.Strings(names) // a stable order of $defs keys
	out := make(map[string]any, len(refs))
	for _, name := range names {
		out[name] = c.ref(refs[name], depth+1)
	}
	return out
}

func (c *schemas) boolSchema(m map[string]any, key string, b openapi3.BoolSchema, depth int) {
	switch {
	case b.Has != nil:
		m[key] = *b.Has
	case b.Schema != nil:
		m[key] = c.ref(b.Schema, depth+1)
	}
}

func setString(m map[string]any, key, v string) {
	if v != "" {
		m[key] = v
	}
}

func setBool(m map[string]any, key string, v bool) {
	if v {
		m[key] = true
	}
}

func setUint(m map[string]any, key string, v *uint64) {
	if v != nil {
		m[key] = *v
	}
}

// setNumber leaves out NaN and infinities, which JSON cannot hold (YAML's
// .nan and .inf can).
func setNumber(m map[string]any, key string, v *float64) {
	if v != nil && !math.IsNaN(*v) && !math.IsInf(*v, 0) {
		m[key] = *v
	}
}

// setJSON sets a value the document gave (a default, an enum) when it has
// a JSON encoding: YAML can write values JSON cannot hold.
func setJSON(m map[string]any, key string, v any) {
	if v == nil {
		return
	}
	if _, err := json.Marshal(v); err == nil {
		m[key] = v
	}
}
