package cohere_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/cohere"
	"github.com/svc-gateway/svc/internal/provider/goldentest"
)

// events is want_events.json: what DecodeChatStream produced.
type events struct {
	Events  []json.RawMessage `json:"events"`
	End     end               `json:"end"`
	Choices []choice          `json:"choices"` // what a client assembles
	Info    info              `json:"info"`
}

type end struct {
	EOF   bool                 `json:"eof,omitempty"`
	Error *goldentest.ErrorOut `json:"error,omitempty"`
}

type choice struct {
	Index        int        `json:"index"`
	Role         string     `json:"role,omitempty"`
	Content      string     `json:"content"`
	FinishReason string     `json:"finish_reason,omitempty"`
	ToolCalls    []toolCall `json:"tool_calls,omitempty"`
}

type toolCall struct {
	Index     int    `json:"index"`
	ID        string `json:"id"`
	Type      string `json:"type"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type info struct {
	HideUsage bool      `json:"hide_usage"`
	Model     string    `json:"model"`
	Usage     llm.Usage `json:"usage"`
}

// pieces reads b in small odd-sized pieces, as a stream arrives: lines,
// events and UTF-8 sequences are split.
type pieces struct{ b []byte }

func (p *pieces) Read(dst []byte) (int, error) {
	if len(p.b) == 0 {
		return 0, io.EOF
	}
	n := copy(dst[:min(len(dst), 37)], p.b)
	p.b = p.b[n:]
	return n, nil
}

// relay decodes the stream as the proxy does and checks what the test knows
// without the golden file: every event is a chunk; Next after the end is
// io.EOF again; the usage-only chunk comes last and only when not hidden;
// and each tool call's arguments, concatenated, are exactly what Cohere sent
// (tool-call-start's then every tool-call-delta's, in order).
func relay(t *testing.T, a *cohere.Adapter, sseBytes []byte, hideUsage bool) events {
	t.Helper()
	si := &provider.StreamInfo{HideUsage: hideUsage}
	st := a.DecodeChatStream(io.NopCloser(&pieces{b: sseBytes}), si)
	defer st.Close()
	var ev events
	for {
		e, err := st.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				ev.End.EOF = true
				if _, err := st.Next(); !errors.Is(err, io.EOF) {
					t.Errorf("Next after the end: got %v, want io.EOF", err)
				}
			} else {
				ev.End.Error = goldentest.ErrorOf(err)
			}
			break
		}
		if !json.Valid(e.Data) {
			t.Fatalf("event %q is not JSON", e.Data)
		}
		ev.Events = append(ev.Events, json.RawMessage(bytes.Clone(e.Data)))
	}
	ev.Info = info{HideUsage: si.HideUsage, Model: si.Model, Usage: si.Usage}
	ev.Choices = assemble(t, ev.Events, hideUsage, ev.End.EOF)
	if ev.End.EOF {
		want := upstreamArguments(t, sseBytes)
		var got []string
		for _, c := range ev.Choices {
			for _, tc := range c.ToolCalls {
				got = append(got, tc.Arguments)
				if !json.Valid([]byte(tc.Arguments)) {
					t.Errorf("tool call %d: arguments %q are not valid JSON once concatenated", tc.Index, tc.Arguments)
				}
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("tool call arguments: got != Cohere's (-want +got):\n%s", diff)
		}
	}
	return ev
}

// upstreamArguments concatenates each tool call's arguments from stream.sse,
// independently of the adapter.
func upstreamArguments(t *testing.T, b []byte) []string {
	t.Helper()
	r := sse.NewReader(bytes.NewReader(b), 0)
	var out []string
	for {
		e, err := r.Next()
		if err != nil {
			return out
		}
		var v struct {
			Type  string `json:"type"`
			Delta struct {
				Message struct {
					ToolCalls struct {
						Function struct {
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"message"`
			} `json:"delta"`
		}
		if json.Unmarshal(e.Data, &v) != nil {
			continue
		}
		switch v.Type {
		case "tool-call-start":
			out = append(out, v.Delta.Message.ToolCalls.Function.Arguments)
		case "tool-call-delta":
			out[len(out)-1] += v.Delta.Message.ToolCalls.Function.Arguments
		}
	}
}

// assemble concatenates the deltas as a client does, and checks the
// usage-only chunk.
func assemble(t *testing.T, evs []json.RawMessage, hideUsage, eof bool) []choice {
	t.Helper()
	var out []choice
	usageChunks := 0
	for i, e := range evs {
		var c llm.ChatChunk
		if err := json.Unmarshal(e, &c); err != nil {
			t.Fatalf("event %d is not a chunk: %v", i, err)
		}
		if c.Object != "chat.completion.chunk" {
			t.Errorf("event %d: object %q, want chat.completion.chunk", i, c.Object)
		}
		if c.Usage != nil {
			usageChunks++
			if len(c.Choices) != 0 || i != len(evs)-1 {
				t.Errorf("event %d: usage chunk must be last and have no choices", i)
			}
		}
		for _, ch := range c.Choices {
			for len(out) <= ch.Index {
				out = append(out, choice{Index: len(out)})
			}
			o := &out[ch.Index]
			if ch.Delta.Role != "" {
				o.Role = ch.Delta.Role
			}
			if ch.Delta.Content != nil {
				o.Content += *ch.Delta.Content
			}
			if ch.FinishReason != nil {
				o.FinishReason = *ch.FinishReason
			}
			for _, d := range ch.Delta.ToolCalls {
				if d.Index == nil {
					t.Fatalf("event %d: tool call delta without index", i)
				}
				k := slices.IndexFunc(o.ToolCalls, func(tc toolCall) bool { return tc.Index == *d.Index })
				if k < 0 {
					o.ToolCalls = append(o.ToolCalls, toolCall{Index: *d.Index})
					k = len(o.ToolCalls) - 1
				}
				tc := &o.ToolCalls[k]
				if d.ID != "" {
					tc.ID = d.ID
				}
				if d.Type != "" {
					tc.Type = d.Type
				}
				tc.Name += d.Function.Name
				tc.Arguments += d.Function.Arguments
			}
		}
	}
	if want := 0; eof && !hideUsage {
		want = 1
		if usageChunks != want {
			t.Errorf("usage chunks: got %d, want %d (hide_usage=%v)", usageChunks, want, hideUsage)
		}
	} else if hideUsage && usageChunks != 0 {
		t.Errorf("usage chunks: got %d, want 0 (hide_usage)", usageChunks)
	}
	return out
}
