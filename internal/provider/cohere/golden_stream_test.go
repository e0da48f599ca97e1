package cohere_test

import (
	"bytes"
	"encoding/json"
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
	Events  []json.RawMessage   `json:"events"`
	End     goldentest.End      `json:"end"`
	Choices []goldentest.Choice `json:"choices"` // what a client assembles
	Info    goldentest.Info     `json:"info"`
}

// relay decodes the stream as the proxy does and checks what the test knows
// without the golden file: every event is a chunk; Next after the end is
// io.EOF again; the usage-only chunk comes last and only when not hidden;
// and each tool call's arguments, concatenated, are exactly what Cohere sent
// (tool-call-start's then every tool-call-delta's, in order).
func relay(t *testing.T, a *cohere.Adapter, sseBytes []byte, hideUsage bool) events {
	t.Helper()
	si := &provider.StreamInfo{HideUsage: hideUsage}
	st := a.DecodeChatStream(goldentest.Pieces(sseBytes), si)
	defer st.Close()
	var ev events
	ev.End = goldentest.Drain(t, st, func(e sse.Event) {
		if !json.Valid(e.Data) {
			t.Fatalf("event %q is not JSON", e.Data)
		}
		ev.Events = append(ev.Events, json.RawMessage(bytes.Clone(e.Data)))
	})
	ev.Info = goldentest.InfoOf(si)
	checkChunks(t, ev.Events, hideUsage, ev.End.EOF)
	ev.Choices = goldentest.Assemble(t, ev.Events, ev.End.EOF)
	goldentest.CheckToolCalls(t, ev.Info, ev.Events)
	if ev.End.EOF {
		want := upstreamArguments(t, sseBytes)
		var got []string
		for _, c := range ev.Choices {
			for _, tc := range c.ToolCalls {
				got = append(got, tc.Arguments)
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

// checkChunks checks every event is a chunk, and the usage-only chunk: last,
// and only when usage is not hidden.
func checkChunks(t *testing.T, evs []json.RawMessage, hideUsage, eof bool) {
	t.Helper()
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
	}
	if want := 0; eof && !hideUsage {
		want = 1
		if usageChunks != want {
			t.Errorf("usage chunks: got %d, want %d (hide_usage=%v)", usageChunks, want, hideUsage)
		}
	} else if hideUsage && usageChunks != 0 {
		t.Errorf("usage chunks: got %d, want 0 (hide_usage)", usageChunks)
	}
}
