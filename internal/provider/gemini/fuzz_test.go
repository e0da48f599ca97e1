package gemini_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/gemini"
)

// FuzzStream feeds any bytes to the stream decoder: it never panics, every
// event is a JSON chat.completion.chunk, every error is an *apierr.Error, the
// stream ends (EOF or error) within a bounded number of events, and after
// EOF there is only EOF.
func FuzzStream(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*", "stream.sse"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
		f.Add(b, true)
	}
	f.Add([]byte("data: {\"candidates\":[{\"index\":99}]}\n\n"), false)
	f.Add([]byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"f\",\"args\":[1]}}]},\"finishReason\":\"STOP\",\"index\":-1}]}\n\n"), false)
	f.Add([]byte("data: [{\"error\":{\"code\":500}}]\n\n"), true)
	f.Add([]byte("data: {\"promptFeedback\":{\"blockReason\":\"OTHER\"}}\n\n"), false)
	f.Fuzz(func(t *testing.T, body []byte, hide bool) {
		info := &provider.StreamInfo{HideUsage: hide}
		st := gemini.New().DecodeChatStream(io.NopCloser(bytes.NewReader(body)), info)
		defer st.Close()
		for n := 0; ; n++ {
			if n > len(body)+2 {
				t.Fatalf("more events (%d) than the body could hold", n)
			}
			ev, err := st.Next()
			if errors.Is(err, io.EOF) {
				if _, err := st.Next(); !errors.Is(err, io.EOF) {
					t.Fatalf("Next after EOF: got %v, want EOF", err)
				}
				return
			}
			if err != nil {
				var e *apierr.Error
				if !errors.As(err, &e) {
					t.Fatalf("error %v is not an *apierr.Error", err)
				}
				return
			}
			var c llm.ChatChunk
			if err := json.Unmarshal(ev.Data, &c); err != nil || c.Object != "chat.completion.chunk" {
				t.Fatalf("event %q is not a chunk: %v", ev.Data, err)
			}
			for _, ch := range c.Choices {
				for _, tc := range ch.Delta.ToolCalls {
					if !json.Valid([]byte(tc.Function.Arguments)) {
						t.Fatalf("tool call arguments %q are not JSON", tc.Function.Arguments)
					}
				}
			}
		}
	})
}

// FuzzCleanSchema checks CleanSchema on any input: it never panics, and for
// a JSON object it returns a JSON object with no key Gemini rejects at the
// top level.
func FuzzCleanSchema(f *testing.F) {
	for _, s := range []string{`{}`, `{"type":["string","null"]}`, `{"properties":{"a":{"$ref":"#"}},"additionalProperties":false}`,
		`{"oneOf":[{"const":1}],"items":{"items":{}}}`, `[]`, `{"a":1}{}`, `{"properties":{"x":1,"x":{"type":"string"}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := gemini.CleanSchema(raw)
		if err != nil {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("output %q is not a JSON object: %v", out, err)
		}
		for _, k := range []string{"$schema", "additionalProperties", "strict", "$ref", "$defs", "oneOf", "const"} {
			if _, ok := m[k]; ok {
				t.Fatalf("output %q keeps %s", out, k)
			}
		}
	})
}
