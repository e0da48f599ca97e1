package openai_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/provider/openai"
)

// TestPatchBody covers PatchBody's edges, beyond the golden cases: where the
// fast path must keep bytes, where it must give way to the merge, and the
// errors.
func TestPatchBody(t *testing.T) {
	const ins = `"stream_options":{"include_usage":true}`
	tests := []struct {
		name      string
		raw       string
		setModel  bool
		model     string
		wantUsage bool
		// Exactly one of these: the exact bytes, the JSON value, or the
		// error's code and param.
		wantBytes string
		wantJSON  string
		wantCode  string
		wantParam string
	}{
		{name: "nothing to do", raw: `{"model":"m", "stream":false}`, wantBytes: `{"model":"m", "stream":false}`},
		{name: "fast path", raw: `{"model":"m","stream":true}`, wantUsage: true,
			wantBytes: `{` + ins + `,"model":"m","stream":true}`},
		{name: "fast path, empty object", raw: `{}`, wantUsage: true, wantBytes: `{` + ins + `}`},
		{name: "fast path, blank object", raw: "{ \n}", wantUsage: true, wantBytes: `{` + ins + " \n}"},
		{name: "fast path, leading space", raw: "\n {\"a\":1}", wantUsage: true, wantBytes: "\n {" + ins + `,"a":1}`},
		{name: "fast path, key named only inside a string", raw: `{"messages":[{"role":"user","content":"what is \"stream_options\"?"}]}`, wantUsage: true,
			wantBytes: `{` + ins + `,"messages":[{"role":"user","content":"what is \"stream_options\"?"}]}`},
		{name: "fast path, escapes of other characters", raw: `{"content":"caf\u00e9 \u003cb\u003e \u00E9"}`, wantUsage: true,
			wantBytes: `{` + ins + `,"content":"caf\u00e9 \u003cb\u003e \u00E9"}`},
		{name: "escaped key is merged, not duplicated", raw: `{"stream\u005foptions":{"include_usage":false},"a":1}`, wantUsage: true,
			wantJSON: `{"stream_options":{"include_usage":true},"a":1}`},
		{name: "escaped key, upper-case hex", raw: `{"\u0073tream_options":null,"\u006Dodel":"m"}`, wantUsage: true,
			wantJSON: `{"stream_options":{"include_usage":true},"model":"m"}`},
		{name: "nested stream_options is not the option", raw: `{"metadata":{"stream_options":"x"},"a":1}`, wantUsage: true,
			wantJSON: `{"metadata":{"stream_options":"x"},"a":1,"stream_options":{"include_usage":true}}`},
		{name: "merge keeps the caller's other options", raw: `{"stream_options":{"include_usage":false,"include_obfuscation":false}}`, wantUsage: true,
			wantJSON: `{"stream_options":{"include_usage":true,"include_obfuscation":false}}`},
		{name: "null options", raw: `{"stream_options": null}`, wantUsage: true, wantJSON: `{"stream_options":{"include_usage":true}}`},
		{name: "options not an object", raw: `{"stream_options":[true]}`, wantUsage: true, wantCode: "invalid_value", wantParam: "stream_options"},
		{name: "set model keeps numbers' bytes", raw: `{"model":"openai/gpt-4o","seed":9007199254740993,"x":1.50}`, setModel: true, model: "gpt-4o",
			wantJSON: `{"model":"gpt-4o","seed":9007199254740993,"x":1.50}`},
		{name: "set model where there was none", raw: `{"a":[]}`, setModel: true, model: "gpt-4o", wantJSON: `{"a":[],"model":"gpt-4o"}`},
		{name: "set model and usage", raw: `{"model":"a/b","stream_options":{"include_usage":false}}`, setModel: true, model: "b", wantUsage: true,
			wantJSON: `{"model":"b","stream_options":{"include_usage":true}}`},
		{name: "invalid JSON", raw: `{"model":`, setModel: true, model: "m", wantCode: "invalid_json"},
		{name: "null body", raw: `null`, setModel: true, model: "m", wantCode: "invalid_json"},
		{name: "null body, usage", raw: `null`, wantUsage: true, wantCode: "invalid_json"},
		{name: "not an object", raw: `"text"`, wantUsage: true, wantCode: "invalid_json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := openai.PatchBody([]byte(tt.raw), tt.setModel, tt.model, tt.wantUsage)
			if tt.wantCode != "" {
				var e *apierr.Error
				if !errors.As(err, &e) {
					t.Fatalf("got %q, %v; want an *apierr.Error %s", out, err, tt.wantCode)
				}
				if e.Kind != apierr.InvalidRequest || e.Code != tt.wantCode || e.Param != tt.wantParam {
					t.Errorf("got kind %d code %q param %q, want InvalidRequest %q %q", e.Kind, e.Code, e.Param, tt.wantCode, tt.wantParam)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if tt.wantBytes != "" && string(out) != tt.wantBytes {
				t.Errorf("got %s, want %s", out, tt.wantBytes)
			}
			if tt.wantJSON != "" {
				if diff := cmp.Diff(jsonOf(t, []byte(tt.wantJSON)), jsonOf(t, out)); diff != "" {
					t.Errorf("got %s, want %s (-want +got):\n%s", out, tt.wantJSON, diff)
				}
			}
			for k, vs := range topLevel(t, out) {
				if len(vs) > 1 && (k == "model" || k == "stream_options") {
					t.Errorf("got %d %q keys in %s, want one", len(vs), k, out)
				}
			}
		})
	}
}

// jsonOf decodes b, keeping numbers as they are written.
func jsonOf(t testing.TB, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

// topLevel returns the values of each top-level key of the object b, every
// occurrence in order, keys decoded as a provider decodes them.
func topLevel(t testing.TB, b []byte) map[string][]json.RawMessage {
	t.Helper()
	m, err := topLevelKeys(b)
	if err != nil {
		t.Fatalf("%q: %v", b, err)
	}
	return m
}

func topLevelKeys(b []byte) (map[string][]json.RawMessage, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not an object (%v, %v)", tok, err)
	}
	m := map[string][]json.RawMessage{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, err
		}
		k := tok.(string)
		m[k] = append(m[k], v)
	}
	if _, err := d.Token(); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the object")
	}
	return m, nil
}

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(a, b []byte) bool {
	dec := func(b []byte) (any, error) {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var v any
		err := d.Decode(&v)
		return v, err
	}
	va, errA := dec(a)
	vb, errB := dec(b)
	return errA == nil && errB == nil && reflect.DeepEqual(va, vb)
}
