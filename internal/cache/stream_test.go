package cache

import (
	"encoding/json"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
)

// A stream whose tool-call arguments arrive in pieces is assembled into the
// completion a non-streamed call returns, and that completion replays as a
// stream that assembles to the same thing.
func TestAssembleAndReplayToolCalls(t *testing.T) {
	chunks := []string{
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}`,
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}`,
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]},"finish_reason":null}]}`,
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]},"finish_reason":null}]}`,
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":9,"total_tokens":16}}`,
	}
	a := &assembler{}
	for _, c := range chunks {
		a.add(sse.Event{Data: []byte(c)})
	}
	body := a.body(nil)
	if body == nil {
		t.Fatal("not assembled")
	}
	var got llm.ChatResponse
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	ch := got.Choices[0]
	if ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 1 || ch.Message.ToolCalls[0].Function.Arguments != `{"city":"Paris"}` ||
		ch.Message.ToolCalls[0].ID != "call_1" || ch.Message.ToolCalls[0].Function.Name != "get_weather" || !ch.Message.Content.Null ||
		got.Usage == nil || got.Usage.TotalTokens != 16 {
		t.Fatalf("assembled %s", body)
	}

	s, err := replayStream(body, true)
	if err != nil {
		t.Fatal(err)
	}
	b := &assembler{}
	for {
		ev, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b.add(ev)
	}
	if diff := cmp.Diff(string(body), string(b.body(nil))); diff != "" {
		t.Errorf("replayed stream assembles differently (-first +replayed):\n%s", diff)
	}
}

// A stream cut before its finish, or carrying an event that is not a chunk,
// is not stored.
func TestAssemblerRefusesIncompleteStreams(t *testing.T) {
	a := &assembler{}
	a.add(sse.Event{Data: []byte(`{"id":"c","choices":[{"index":0,"delta":{"content":"half"},"finish_reason":null}]}`)})
	if a.body(nil) != nil {
		t.Error("a stream without a finish reason was assembled")
	}
	b := &assembler{}
	b.add(sse.Event{Data: []byte(`not json`)})
	b.add(sse.Event{Data: []byte(`{"id":"c","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}`)})
	if b.body(nil) != nil {
		t.Error("a stream with an unreadable event was assembled")
	}
}
