// Package jsonbody decodes JSON request bodies into Go values and turns every
// decoding failure into an apierr InvalidRequest that names the offending
// field, so callers get a clear 400 rather than a Go error string; and
// query parameters the same way (QueryInt). Read (a bounded request body,
// 413 past the bound) and Write (a JSON answer) are the HTTP surfaces' one
// way to take and give JSON.
//
// Decoding is strict in the ways that matter for a gateway: object member
// names match case-sensitively and a name may not appear twice, so svc reads
// exactly the fields a provider will read (encoding/json would let
// {"model":"a","Model":"b"} pass svc's checks as b while the provider runs a).
// It uses the encoding/json/v2 prototype (github.com/go-json-experiment/json).
//
// The HTTP surfaces (proxy, mgmt), audit and llm import it. It imports apierr only.
package jsonbody

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/svc-gateway/svc/internal/apierr"
)

// Decode unmarshals the JSON object in body into v. With strict, members v
// does not declare are an error. Data after the object is an error.
func Decode(body []byte, v any, strict bool) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return apierr.New(apierr.InvalidRequest, "invalid_json", "request body is empty; expected a JSON object")
	}
	if body[0] != '{' {
		return apierr.New(apierr.InvalidRequest, "invalid_json", "request body must be a JSON object")
	}
	if err := json.Unmarshal(body, v, json.RejectUnknownMembers(strict)); err != nil {
		return Error(err)
	}
	return nil
}

// Unmarshal is Decode for nested values (custom unmarshalers): same rules,
// errors returned as they are so the outer Decode maps them with their path.
func Unmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// Invalid is an error a custom unmarshaler returns to say, in its own words,
// why a value is not acceptable; Error puts the field's path in front.
type Invalid string

func (e Invalid) Error() string { return string(e) }

// Error maps a decoding error to an InvalidRequest naming the field.
func Error(err error) error {
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae
	}
	var se *json.SemanticError
	var syn *jsontext.SyntacticError
	switch {
	case errors.As(err, &syn):
		param := Param(string(syn.JSONPointer))
		if errors.Is(syn.Err, jsontext.ErrDuplicateName) {
			return &apierr.Error{Kind: apierr.InvalidRequest, Code: "duplicate_field", Param: param,
				Message: fmt.Sprintf("field %s appears more than once", param), Err: err}
		}
		return &apierr.Error{Kind: apierr.InvalidRequest, Code: "invalid_json",
			Message: fmt.Sprintf("request body is not valid JSON (at byte %d)", syn.ByteOffset), Err: err}
	case errors.As(err, &se):
		param := Param(string(se.JSONPointer))
		if errors.Is(se.Err, json.ErrUnknownName) {
			return &apierr.Error{Kind: apierr.InvalidRequest, Code: "unknown_field", Param: param,
				Message: fmt.Sprintf("unknown field %s (names are case-sensitive)", param), Err: err}
		}
		if param == "" {
			param = "body"
		}
		var inv Invalid
		if errors.As(se.Err, &inv) {
			return &apierr.Error{Kind: apierr.InvalidRequest, Code: "invalid_value", Param: param,
				Message: fmt.Sprintf("invalid value for %s: %s", param, inv), Err: err}
		}
		return &apierr.Error{Kind: apierr.InvalidRequest, Code: "invalid_type", Param: param,
			Message: fmt.Sprintf("invalid value for %s: expected %s, got %s", param, typeName(se.GoType), kindName(se.JSONKind)), Err: err}
	}
	return &apierr.Error{Kind: apierr.InvalidRequest, Code: "invalid_json", Message: "request body is not valid JSON", Err: err}
}

// Param turns a JSON pointer (/messages/0/content) into the OpenAI param form
// (messages[0].content).
func Param(pointer string) string {
	if pointer == "" {
		return ""
	}
	var b strings.Builder
	for i, tok := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if _, err := strconv.Atoi(tok); err == nil && i > 0 {
			b.WriteString("[" + tok + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 'f', 't':
		return "a boolean"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "another value"
}

func typeName(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64, reflect.Uint32:
		return "an integer"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return typeName(t.Elem())
	}
	return t.String()
}
