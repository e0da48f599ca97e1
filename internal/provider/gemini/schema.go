package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// schemaKeys are the JSON schema keys Gemini's Schema (a subset of OpenAPI
// 3.0) accepts, in function parameters and responseSchema alike. Every other
// key — $schema, $id, $ref, $defs, additionalProperties, strict, const,
// examples, allOf, not, patternProperties, … — is dropped, since Gemini
// rejects a request with an unknown schema field.
var schemaKeys = map[string]bool{
	"type": true, "format": true, "title": true, "description": true, "nullable": true,
	"enum": true, "items": true, "minItems": true, "maxItems": true,
	"properties": true, "required": true, "minProperties": true, "maxProperties": true,
	"minLength": true, "maxLength": true, "pattern": true, "example": true,
	"anyOf": true, "propertyOrdering": true, "default": true, "minimum": true, "maximum": true,
}

// CleanSchema returns an OpenAI JSON schema in the form Gemini accepts: keys
// Gemini rejects removed (at every level), oneOf read as anyOf, a type list
// with "null" read as nullable, and const read as a one-value enum. Keys keep
// the caller's order.
func CleanSchema(raw json.RawMessage) (json.RawMessage, error) {
	return cleanRaw(raw, false)
}

// cleanResponseSchema is CleanSchema for responseSchema: each object also
// gets propertyOrdering, the caller's order of its properties, which Gemini
// otherwise replaces by the alphabetical one in its output.
func cleanResponseSchema(raw json.RawMessage) (json.RawMessage, error) {
	return cleanRaw(raw, true)
}

func cleanRaw(raw json.RawMessage, ordering bool) (json.RawMessage, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber() // keep integers such as maxLength exact
	v, err := decodeOrdered(d, 0)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the schema")
	}
	o, ok := v.(*object)
	if !ok {
		return nil, errors.New("schema is not an object")
	}
	return json.Marshal(cleanSchema(o, ordering, 0))
}

// object is a JSON object that keeps its keys' order (the last of duplicate
// keys wins, at the place of the first).
type object struct {
	keys []string
	vals map[string]any
}

func newObject(n int) *object { return &object{vals: make(map[string]any, n)} }

func (o *object) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, k := range o.keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, kb...), ':'), vb...)
	}
	return append(b, '}'), nil
}

// maxSchemaDepth bounds recursion on hostile schemas.
const maxSchemaDepth = 64

// decodeOrdered reads one JSON value, objects as *object.
func decodeOrdered(d *json.Decoder, depth int) (any, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("schema nested deeper than %d levels", maxSchemaDepth)
	}
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		o := newObject(4)
		for d.More() {
			kt, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeOrdered(d, depth+1)
			if err != nil {
				return nil, err
			}
			o.set(kt.(string), v)
		}
		_, err := d.Token()
		return o, err
	case json.Delim('['):
		list := []any{}
		for d.More() {
			v, err := decodeOrdered(d, depth+1)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err := d.Token()
		return list, err
	}
	return t, nil
}

func cleanSchema(in *object, ordering bool, depth int) *object {
	out := newObject(len(in.keys))
	if depth > maxSchemaDepth {
		return out
	}
	for _, k := range in.keys {
		v := in.vals[k]
		switch k {
		case "properties":
			props, ok := v.(*object)
			if !ok {
				continue
			}
			clean := newObject(len(props.keys))
			order := make([]string, 0, len(props.keys))
			for _, name := range props.keys { // property names are data, not keys
				if pm, ok := props.vals[name].(*object); ok {
					clean.set(name, cleanSchema(pm, ordering, depth+1))
					order = append(order, name)
				}
			}
			out.set(k, clean)
			if _, given := in.vals["propertyOrdering"]; ordering && !given && len(order) > 1 {
				out.set("propertyOrdering", order)
			}
		case "items":
			if im, ok := v.(*object); ok {
				out.set(k, cleanSchema(im, ordering, depth+1))
			}
		case "anyOf", "oneOf":
			list, ok := v.([]any)
			if !ok {
				continue
			}
			clean := make([]any, 0, len(list))
			for _, s := range list {
				if sm, ok := s.(*object); ok {
					clean = append(clean, cleanSchema(sm, ordering, depth+1))
				}
			}
			out.set("anyOf", clean)
		case "type":
			switch t := v.(type) {
			case string:
				out.set(k, t)
			case []any:
				for _, e := range t {
					if s, ok := e.(string); ok {
						if s == "null" {
							out.set("nullable", true)
						} else if _, set := out.vals[k]; !set {
							out.set(k, s)
						}
					}
				}
			}
		case "const":
			if _, has := in.vals["enum"]; !has {
				out.set("enum", []any{v})
			}
		default:
			if schemaKeys[k] {
				out.set(k, v)
			}
		}
	}
	return out
}

// emptyObjectSchema reports whether s is {"type":"object"} with no
// properties, or {}: Gemini rejects an object schema without properties in a
// function declaration, so such parameters are left out.
func emptyObjectSchema(s json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(s, &m) != nil {
		return false
	}
	if p, ok := m["properties"]; ok && string(p) != "{}" {
		return false
	}
	for k := range m {
		if k != "type" && k != "properties" && k != "description" && k != "required" && k != "title" {
			return false
		}
	}
	return true
}
