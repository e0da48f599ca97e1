// Package goldentest holds what every adapter's golden-file tests share: the
// -update flag, writing and comparing want_* files by JSON value, and the
// form in which errors are recorded (ErrorOut). Adapters' _test files import
// it; nothing else does.
package goldentest

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/apierr"
)

// Update rewrites the want_* files from the adapter's current output.
var Update = flag.Bool("update", false, "rewrite the want_* files in testdata/ from the adapter's current output")

// Golden compares got with the JSON file dir/name (both decoded into T and
// compared by value), or writes it with -update.
func Golden[T any](t *testing.T, dir, name string, got *T) {
	t.Helper()
	path := filepath.Join(dir, name)
	enc := Encode(t, got)
	if *Update {
		if err := os.WriteFile(path, enc, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	// Decode got the same way, so both sides went through the same JSON.
	want, gotDec := new(T), new(T)
	MustUnmarshal(t, path, b, want)
	MustUnmarshal(t, path, enc, gotDec)
	if diff := cmp.Diff(want, gotDec, JSONValue); diff != "" {
		t.Errorf("%s: got != want (-want +got):\n%s", name, diff)
	}
}

// JSONValue compares embedded JSON documents by value, not by layout.
var JSONValue = cmp.Transformer("JSONValue", func(m json.RawMessage) any {
	if m == nil {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(m))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return fmt.Sprintf("invalid JSON %q: %v", m, err)
	}
	return v
})

// Encode is v as an indented want file.
func Encode(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Flatten joins a header's values, for want files.
func Flatten(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[k] = strings.Join(v, ", ")
	}
	return out
}

// ReadFile reads dir/name or fails the test.
func ReadFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// MustUnmarshal decodes b into v or fails the test naming the file.
func MustUnmarshal(t *testing.T, name string, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// ErrorOut is an error as want_error.json records it.
type ErrorOut struct {
	Kind    string `json:"kind"`
	Status  int    `json:"status"`
	Type    string `json:"type"`
	Code    string `json:"code,omitempty"`
	Param   string `json:"param,omitempty"`
	Message string `json:"message"`
	// RetryAfter is the error's RetryAfter, a time.Duration.
	RetryAfter string `json:"retry_after,omitempty"`
	// Header is what the caller's response carries (apierr SetHeaders).
	Header map[string]string `json:"header,omitempty"`
	// Cause is the wrapped error: logged, never sent to the caller.
	Cause string `json:"cause,omitempty"`
}

// ErrorOf is err as want_error.json records it (nil for nil).
func ErrorOf(err error) *ErrorOut {
	if err == nil {
		return nil
	}
	var e *apierr.Error
	if !errors.As(err, &e) {
		return &ErrorOut{Kind: "not an *apierr.Error", Message: err.Error()}
	}
	o := &ErrorOut{Kind: e.Kind.String(), Status: e.Status(), Type: e.Kind.Type(),
		Code: e.Code, Param: e.Param, Message: e.Message}
	if e.RetryAfter != 0 {
		o.RetryAfter = e.RetryAfter.String()
	}
	h := http.Header{}
	e.SetHeaders(h)
	if len(h) > 0 {
		o.Header = Flatten(h)
	}
	if e.Err != nil {
		o.Cause = e.Err.Error()
	}
	return o
}
