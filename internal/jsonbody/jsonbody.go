// Package jsonbody decodes JSON request bodies into Go values and turns every
// decoding failure into an apierr InvalidRequest that names the offending
// field, so callers get a clear 400 rather than a Go error string.
//
// The HTTP surfaces (proxy, mgmt) and llm import it. It imports apierr only.
package jsonbody

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
)

// Decode unmarshals the JSON object in body into v. With strict, fields v does
// not declare are an error. Data after the object is an error.
func Decode(body []byte, v any, strict bool) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return apierr.New(apierr.InvalidRequest, "invalid_json", "request body is empty; expected a JSON object")
	}
	if body[0] != '{' {
		return apierr.New(apierr.InvalidRequest, "invalid_json", "request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return Error(err)
	}
	if dec.More() {
		return apierr.New(apierr.InvalidRequest, "invalid_json", "request body has data after the JSON object")
	}
	return nil
}

// Error maps an encoding/json error to an InvalidRequest.
func Error(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "body"
		}
		return &apierr.Error{Kind: apierr.InvalidRequest, Code: "invalid_type", Param: field,
			Message: fmt.Sprintf("invalid type for %s: expected %s, got %s", field, typeName(te.Type), te.Value), Err: err}
	case errors.As(err, &se):
		return &apierr.Error{Kind: apierr.InvalidRequest, Code: "invalid_json",
			Message: fmt.Sprintf("request body is not valid JSON (at byte %d)", se.Offset), Err: err}
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		field := strings.Trim(name, `"`)
		return &apierr.Error{Kind: apierr.InvalidRequest, Code: "unknown_field", Param: field,
			Message: fmt.Sprintf("unknown field %q", field), Err: err}
	}
	return &apierr.Error{Kind: apierr.InvalidRequest, Code: "invalid_json", Message: "request body is not valid JSON", Err: err}
}

func typeName(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Slice:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return typeName(t.Elem())
	}
	return t.String()
}
