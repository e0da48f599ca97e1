package openai_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/provider/openai"
)

// FuzzPatchBody checks PatchBody on any input: it never panics, and for a
// JSON object the output is a JSON object in which, as a provider reads it,
// "model" is the requested model (when setModel), stream_options has
// include_usage true (when wantUsage), each of them once, and every other
// top-level field keeps its value. The only error it may return for an object
// is InvalidRequest for a stream_options that is not an object.
func FuzzPatchBody(f *testing.F) {
	seeds := []string{
		`{}`, `{ }`, `null`, `[]`, `"{"`, `{"model":"m"}`, `{"stream_options":null}`,
		`{"stream_options":{"include_usage":false,"include_obfuscation":false}}`,
		`{"stream_options":"x"}`, `{"stream\u005foptions":{"include_usage":false}}`,
		`{"\u0073tream_options":1}`, `{"a":"\u00e9\u003c","a":2}`, `{"model":"a","model":"b"}`,
		`{"metadata":{"stream_options":{}},"messages":[]}`, " \t{\"x\":[1,2.50,1e3]}\n",
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*", "request.json"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, string(b))
	}
	for i, s := range seeds {
		f.Add([]byte(s), i%2 == 0, "gpt-4o", i%3 != 0)
	}
	f.Fuzz(func(t *testing.T, raw []byte, setModel bool, model string, wantUsage bool) {
		in := bytes.Clone(raw)
		out, err := openai.PatchBody(raw, setModel, model, wantUsage)
		if !bytes.Equal(raw, in) {
			t.Fatalf("PatchBody changed its input: got %q, want %q", raw, in)
		}
		if !json.Valid(raw) {
			return
		}
		inKeys, kerr := topLevelKeys(raw)
		if kerr != nil {
			return // valid JSON, not an object
		}
		if err != nil {
			var e *apierr.Error
			if !errors.As(err, &e) || e.Kind != apierr.InvalidRequest {
				t.Fatalf("got error %v, want none or an InvalidRequest", err)
			}
			opts := inKeys["stream_options"]
			if !wantUsage || len(opts) == 0 || isNullOrObject(opts[len(opts)-1]) {
				t.Fatalf("input %q: got error %v, want none (stream_options is fine)", raw, err)
			}
			return
		}
		if !setModel && !wantUsage && !bytes.Equal(out, raw) {
			t.Fatalf("nothing to patch: got %q, want the input", out)
		}
		if !json.Valid(out) {
			t.Fatalf("input %q: got invalid JSON %q", raw, out)
		}
		outKeys, err := topLevelKeys(out)
		if err != nil {
			t.Fatalf("input %q: output %q: %v", raw, out, err)
		}
		if setModel {
			// The model as JSON can carry it: invalid UTF-8 becomes U+FFFD.
			var want, got string
			b, _ := json.Marshal(model)
			_ = json.Unmarshal(b, &want)
			ms := outKeys["model"]
			if len(ms) != 1 || json.Unmarshal(ms[0], &got) != nil || got != want {
				t.Fatalf("input %q: got model %q, want one model %q", raw, ms, want)
			}
		}
		if wantUsage {
			ss := outKeys["stream_options"]
			var opts struct {
				IncludeUsage *bool `json:"include_usage"`
			}
			if len(ss) != 1 || json.Unmarshal(ss[0], &opts) != nil || opts.IncludeUsage == nil || !*opts.IncludeUsage {
				t.Fatalf("input %q: got stream_options %q, want one with include_usage true", raw, ss)
			}
		}
		for k, vs := range inKeys {
			if (setModel && k == "model") || (wantUsage && k == "stream_options") {
				continue
			}
			ws := outKeys[k]
			if len(ws) == 0 || !sameJSON(vs[len(vs)-1], ws[len(ws)-1]) {
				t.Fatalf("input %q: field %q: got %q, want %s", raw, k, ws, vs[len(vs)-1])
			}
		}
	})
}

func isNullOrObject(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return string(v) == "null" || (len(v) > 0 && v[0] == '{')
}
