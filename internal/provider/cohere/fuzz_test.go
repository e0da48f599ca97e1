package cohere_test

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
	"github.com/svc-gateway/svc/internal/provider/cohere"
)

// FuzzStream feeds any bytes to DecodeChatStream: it never panics, never
// loops, ends with io.EOF or an *apierr.Error of kind UpstreamError, and
// every event before the end is a valid chat.completion.chunk whose tool
// call deltas all carry an index.
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
	f.Add([]byte("data: {\"type\":\"tool-call-delta\",\"delta\":{\"message\":{\"tool_calls\":{\"function\":{\"arguments\":\"x\"}}}}}\n\n"), false)
	f.Add([]byte("event: message-end\ndata: {\"delta\":{\"finish_reason\":\"MAX_TOKENS\"}}\n\n"), false)
	f.Add([]byte("data: {\"type\":\"message-start\",\"delta\":{\"message\":{\"content\":{}}}}\n\ndata: [DONE]\n\n"), true)
	f.Add([]byte("data: {\"type\":\"content-delta\",\"delta\":{\"message\":{\"content\":[1]}}}\n\n"), false)
	a := cohere.New()
	f.Fuzz(func(t *testing.T, b []byte, hide bool) {
		info := &provider.StreamInfo{HideUsage: hide}
		st := a.DecodeChatStream(io.NopCloser(bytes.NewReader(b)), info)
		defer st.Close()
		for n := 0; ; n++ {
			if n > len(b)+2 {
				t.Fatalf("more events (%d) than input bytes", n)
			}
			ev, err := st.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				var e *apierr.Error
				if !errors.As(err, &e) || e.Kind != apierr.UpstreamError {
					t.Fatalf("got error %v, want io.EOF or an UpstreamError", err)
				}
				return
			}
			var c llm.ChatChunk
			if err := json.Unmarshal(ev.Data, &c); err != nil || c.Object != "chat.completion.chunk" {
				t.Fatalf("event %q is not a chunk: %v", ev.Data, err)
			}
			for _, ch := range c.Choices {
				for _, tc := range ch.Delta.ToolCalls {
					if tc.Index == nil {
						t.Fatalf("tool call delta without index: %q", ev.Data)
					}
				}
			}
			if c.Usage != nil && hide {
				t.Fatalf("usage chunk relayed though hidden: %q", ev.Data)
			}
		}
	})
}
