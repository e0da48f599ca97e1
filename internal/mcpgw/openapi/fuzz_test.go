package openapi

import (
	"errors"
	"net/http"
	"testing"
)

// FuzzParse feeds Parse arbitrary documents: it must never panic, must
// answer a *SpecError when it refuses, and what it accepts must make tools
// and a server (whose AddTool panics on a bad schema) without panicking.
func FuzzParse(f *testing.F) {
	// Small seeds: the fuzzer minimises every input that finds new coverage,
	// and minimising the fixtures (tens of kilobytes) takes it minutes.
	f.Add([]byte(mini))
	f.Add([]byte("openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /a/{id}:\n    get:\n      parameters: [{name: id, in: path, required: true, schema: {type: [string, 'null']}}]\n"))
	f.Add([]byte(`{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {"/a": {"post": {"requestBody":
	  {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/R"}}}}, "responses": {"200": {"description": "ok"}}}}},
	  "components": {"schemas": {"R": {"type": "object", "nullable": true, "properties": {"r": {"$ref": "#/components/schemas/R"}},
	  "minimum": 1, "exclusiveMinimum": true}}}}`))
	f.Add([]byte("swagger: '2.0'\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Fuzz(func(t *testing.T, spec []byte) {
		d, err := Parse(spec)
		if err != nil {
			var se *SpecError
			if !errors.As(err, &se) || se.Problem == "" {
				t.Fatalf("Parse: got %T %v, want a *SpecError with a problem", err, err)
			}
			return
		}
		if _, err := d.Tools(nil); err != nil {
			var se *SpecError
			if !errors.As(err, &se) && !errors.Is(err, ErrNoOperations) {
				t.Fatalf("Tools: got %T %v", err, err)
			}
			return
		}
		if _, err := NewServer(d, Options{BaseURL: "https://api.example.com", Client: http.DefaultClient}); err != nil {
			t.Fatalf("NewServer: %v", err)
		}
	})
}
