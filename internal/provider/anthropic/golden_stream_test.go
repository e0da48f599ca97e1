package anthropic_test

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/svc-gateway/svc/internal/apierr"
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
	End    goldentest.End    `json:"end"`
	// Choices is what a client assembles from the chunks.
	Choices []goldentest.Choice `json:"choices"`
	Info    goldentest.Info     `json:"info"`
}

// chunk is the part of a chat.completion.chunk the test reads.
type chunk struct {
	Object  string     `json:"object"`
	Usage   *llm.Usage `json:"usage"`
	Choices []struct{} `json:"choices"`
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
	ev.End = goldentest.Drain(t, st, func(e sse.Event) {
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
	})
	if ev.End.EOF {
		usageOnly := last.Usage != nil && len(last.Choices) == 0
		if usageOnly == hideUsage {
			t.Errorf("last chunk usage-only: got %v, want %v (hide_usage %v)", usageOnly, !hideUsage, hideUsage)
		}
		if usageOnly && !cmp.Equal(*last.Usage, si.Usage) {
			t.Errorf("usage chunk: got %+v, want the recorded %+v", *last.Usage, si.Usage)
		}
	}
	ev.Info = goldentest.InfoOf(si)
	ev.Choices = goldentest.Assemble(t, ev.Events, ev.End.EOF)
	goldentest.CheckToolCalls(t, ev.Info, ev.Events)
	return ev
}

// nativeEvents is want_native.json: what NativeStream relayed.
type nativeEvents struct {
	Events []nativeEvent   `json:"events"`
	End    goldentest.End  `json:"end"`
	Info   goldentest.Info `json:"info"`
}

type nativeEvent struct {
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data"`
}

// relayNative relays the stream with NativeStream and checks that every
// upstream event comes out unchanged, in order, up to the end, but for error
// events, whose credentials are redacted.
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
	i := 0
	out.End = goldentest.Drain(t, st, func(e sse.Event) {
		want := ups[min(i, len(ups)-1)].Data
		if e.Event == "error" {
			// Error events are relayed with credentials redacted.
			want = []byte(apierr.RedactShapes(string(want)))
		}
		if i >= len(ups) || e.Event != ups[i].Event || !bytes.Equal(e.Data, want) {
			t.Fatalf("relayed event %d (%s %q) is not the provider's event %d, unchanged (error events: redacted)", i, e.Event, e.Data, i)
		}
		out.Events = append(out.Events, nativeEvent{Event: e.Event, Data: bytes.Clone(e.Data)})
		i++
	})
	out.Info = goldentest.InfoOf(si)
	if diff := cmp.Diff(nativeToolCalls(t, ups), out.Info.ToolCalls, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("StreamInfo.ToolCalls: got != the tool_use blocks of the stream (-want +got):\n%s", diff)
	}
	return out
}

// nativeToolCalls reads the tool_use blocks of a native stream and their
// input pieces, independently of the adapter.
func nativeToolCalls(t *testing.T, ups []sse.Event) []goldentest.InfoToolCall {
	t.Helper()
	var out []goldentest.InfoToolCall
	block := map[int]int{} // content block index → position in out
	for _, e := range ups {
		var v struct {
			Type         string `json:"type"`
			Index        int    `json:"index"`
			ContentBlock struct {
				Type, ID, Name string
			} `json:"content_block"`
			Delta struct {
				Type        string `json:"type"`
				PartialJSON string `json:"partial_json"`
			} `json:"delta"`
		}
		if json.Unmarshal(e.Data, &v) != nil {
			continue
		}
		switch {
		case v.Type == "content_block_start" && v.ContentBlock.Type == "tool_use":
			block[v.Index] = len(out)
			out = append(out, goldentest.InfoToolCall{Index: len(out), ID: v.ContentBlock.ID, Name: v.ContentBlock.Name})
		case v.Type == "content_block_delta" && v.Delta.Type == "input_json_delta":
			if i, ok := block[v.Index]; ok {
				out[i].Arguments += v.Delta.PartialJSON
			}
		}
	}
	return out
}
