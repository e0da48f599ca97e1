package anthropic_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/anthropic"
	"github.com/svc-gateway/svc/internal/provider/goldentest"
)

// This file holds the stream halves of TestGolden: want_events.json (the
// translated stream) and want_native.json (the relayed native stream).

// events is want_events.json: what DecodeChatStream produced.
type events struct {
	Events []json.RawMessage `json:"events"`
	End    end               `json:"end"`
	// Choices is what a client assembles from the chunks.
	Choices []choice `json:"choices"`
	Info    info     `json:"info"`
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

// info is the final provider.StreamInfo.
type info struct {
	HideUsage bool      `json:"hide_usage"`
	Model     string    `json:"model"`
	Usage     llm.Usage `json:"usage"`
}

// chunk is the part of a chat.completion.chunk the test reads.
type chunk struct {
	ID      string     `json:"id"`
	Object  string     `json:"object"`
	Model   string     `json:"model"`
	Usage   *llm.Usage `json:"usage"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
}

// relay decodes the stream as the proxy does and checks what the test can
// know without the golden file: every event is a chat.completion.chunk; a
// stream that ends well ends with a usage-only chunk unless hideUsage, and
// its tool calls' arguments, concatenated, are valid JSON.
func relay(t *testing.T, a *anthropic.Adapter, body io.ReadCloser, hideUsage bool) events {
	t.Helper()
	si := &provider.StreamInfo{HideUsage: hideUsage}
	st := a.DecodeChatStream(body, si)
	defer st.Close()
	var ev events
	var last chunk
	for {
		e, err := st.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				ev.End.EOF = true
			} else {
				ev.End.Error = goldentest.ErrorOf(err)
			}
			if _, err2 := st.Next(); !errors.Is(err2, err) && err2 != err {
				t.Errorf("Next after the end: got %v, want %v again", err2, err)
			}
			break
		}
		if e.Event != "" {
			t.Errorf("chunk event has type %q, want none (OpenAI streams name no events)", e.Event)
		}
		data := bytes.Clone(e.Data)
		if !json.Valid(data) {
			t.Fatalf("chunk is not valid JSON: %s", data)
		}
		last = chunk{}
		goldentest.MustUnmarshal(t, "chunk", data, &last)
		if last.Object != "chat.completion.chunk" {
			t.Errorf("chunk object: got %q, want chat.completion.chunk", last.Object)
		}
		if last.Usage != nil && len(last.Choices) != 0 {
			t.Errorf("usage chunk has %d choices, want none", len(last.Choices))
		}
		ev.Events = append(ev.Events, data)
	}
	if ev.End.EOF {
		usageOnly := last.Usage != nil && len(last.Choices) == 0
		if usageOnly == hideUsage {
			t.Errorf("last chunk usage-only: got %v, want %v (hide_usage %v)", usageOnly, !hideUsage, hideUsage)
		}
		if usageOnly && !cmp.Equal(*last.Usage, si.Usage) {
			t.Errorf("usage chunk: got %+v, want the recorded %+v", *last.Usage, si.Usage)
		}
	}
	ev.Info = info{HideUsage: si.HideUsage, Model: si.Model, Usage: si.Usage}
	ev.Choices = assemble(t, ev.Events)
	if ev.End.EOF {
		for _, c := range ev.Choices {
			for _, tc := range c.ToolCalls {
				if !json.Valid([]byte(tc.Arguments)) {
					t.Errorf("tool call %d: arguments %q are not valid JSON once concatenated", tc.Index, tc.Arguments)
				}
			}
		}
	}
	return ev
}

// assemble concatenates the deltas as a client does.
func assemble(t *testing.T, evs []json.RawMessage) []choice {
	t.Helper()
	byIndex := map[int]*choice{}
	for _, e := range evs {
		var c chunk
		goldentest.MustUnmarshal(t, "chunk", e, &c)
		for _, ch := range c.Choices {
			out := byIndex[ch.Index]
			if out == nil {
				out = &choice{Index: ch.Index}
				byIndex[ch.Index] = out
			}
			if ch.Delta.Role != "" {
				out.Role = ch.Delta.Role
			}
			if ch.Delta.Content != nil {
				out.Content += *ch.Delta.Content
			}
			if ch.FinishReason != nil {
				out.FinishReason = *ch.FinishReason
			}
			for _, d := range ch.Delta.ToolCalls {
				k := slices.IndexFunc(out.ToolCalls, func(tc toolCall) bool { return tc.Index == d.Index })
				if k < 0 {
					out.ToolCalls = append(out.ToolCalls, toolCall{Index: d.Index})
					k = len(out.ToolCalls) - 1
				}
				tc := &out.ToolCalls[k]
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
	out := make([]choice, 0, len(byIndex))
	for _, c := range byIndex {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}

// nativeEvents is want_native.json: what NativeStream relayed.
type nativeEvents struct {
	Events []nativeEvent `json:"events"`
	End    end           `json:"end"`
	Info   info          `json:"info"`
}

type nativeEvent struct {
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data"`
}

// relayNative relays the stream with NativeStream and checks that every
// upstream event comes out unchanged, in order, up to the end.
func relayNative(t *testing.T, body io.ReadCloser, sseBytes []byte) nativeEvents {
	t.Helper()
	var ups []sse.Event
	r := sse.NewReader(bytes.NewReader(sseBytes), 0)
	for {
		e, err := r.Next()
		if err != nil {
			break
		}
		ups = append(ups, sse.Event{Event: e.Event, Data: bytes.Clone(e.Data)})
	}
	si := &provider.StreamInfo{}
	st := anthropic.NativeStream(body, si)
	defer st.Close()
	var out nativeEvents
	for i := 0; ; i++ {
		e, err := st.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				out.End.EOF = true
			} else {
				out.End.Error = goldentest.ErrorOf(err)
			}
			break
		}
		if i >= len(ups) || e.Event != ups[i].Event || !bytes.Equal(e.Data, ups[i].Data) {
			t.Fatalf("relayed event %d (%s %q) is not the provider's event %d, unchanged", i, e.Event, e.Data, i)
		}
		out.Events = append(out.Events, nativeEvent{Event: e.Event, Data: bytes.Clone(e.Data)})
	}
	out.Info = info{Model: si.Model, Usage: si.Usage}
	return out
}
