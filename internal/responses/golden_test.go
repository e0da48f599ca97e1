package responses_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strconv"
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
	"github.com/svc-gateway/svc/internal/provider/goldentest"
	"github.com/svc-gateway/svc/internal/responses"
)

// The golden cases, one directory of testdata/ each, one file per
// direction:
//
//	request.json        the Responses request (and history.json: the earlier turns' items)
//	want_chat.json      → the chat completions request ToChat makes of it
//	want_error.json     → or the 400 it refuses it with
//	chat_response.json  a chat completion (what an adapter's DecodeChat yields)
//	want_response.json  → the response FromChat makes of it
//	chat_stream.sse     a stream of chat chunks (what DecodeChatStream yields)
//	want_events.json    → the Responses events Translate makes of it
//
// Regenerate the want files with `go test ./internal/responses -update`,
// then read the diff: they are the reviewed expectation.
func TestGolden(t *testing.T) {
	goldentest.Run(t, "request.json", func(t *testing.T, c *goldentest.Case) {
		r, err := responses.Decode(c.Read("request.json"))
		if err != nil {
			t.Fatalf("Decode: %v", err)
		}
		var history []responses.Item
		c.ReadJSON("history.json", &history, true)
		chat, err := responses.ToChat(r, history, "anthropic")
		if err != nil {
			e := apierr.From(err)
			c.Want("want_error.json", map[string]any{"status": e.Status(), "code": e.Code, "param": e.Param, "message": e.Message})
			return
		}
		c.Want("want_chat.json", chat)
		if c.Has("chat_response.json") {
			resp := responses.Frame(r, "resp_test", 1700000000)
			if err := responses.FromChat(resp, c.Read("chat_response.json")); err != nil {
				t.Fatalf("FromChat: %v", err)
			}
			c.Want("want_response.json", normalized(t, resp))
		}
		if c.Has("chat_stream.sse") {
			c.Want("want_events.json", normalized(t, translated(t, r, c.Read("chat_stream.sse"), nil)))
		}
	})
}

// translated runs Translate over the chat events of sse text and returns
// the events it yields; a stream failure is the last, as ErrorEvent
// writes it.
func translated(t *testing.T, r *responses.Request, text []byte, failWith error) []any {
	t.Helper()
	chat := &chatEvents{r: sse.NewReader(bytes.NewReader(text), 0), fail: failWith}
	var final *responses.Response
	s := responses.Translate(chat, responses.Frame(r, "resp_test", 1700000000), func(resp *responses.Response) { final = resp })
	var out []any
	seq := 0
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			e := responses.ErrorEvent(err, seq)
			out = append(out, map[string]any{"event": e.Event, "data": json.RawMessage(e.Data)})
			break
		}
		var data map[string]any
		if err := json.Unmarshal(ev.Data, &data); err != nil {
			t.Fatalf("event %d is not JSON: %s", seq, ev.Data)
		}
		if n, _ := data["sequence_number"].(float64); int(n) != seq || data["type"] != ev.Event {
			t.Errorf("event %d: sequence_number %v type %v, want %d and the event name %q", seq, data["sequence_number"], data["type"], seq, ev.Event)
		}
		if responses.Terminal(ev.Event) && final == nil {
			t.Errorf("%s returned before done saw the final response", ev.Event)
		}
		out = append(out, map[string]any{"event": ev.Event, "data": json.RawMessage(bytes.Clone(ev.Data))})
		seq++
	}
	s.Close()
	if !chat.closed {
		t.Error("Close did not close the chat stream")
	}
	return out
}

// chatEvents is a chat chunk stream read from SSE text, ending at [DONE]
// (or failing with fail there).
type chatEvents struct {
	r      *sse.Reader
	fail   error
	closed bool
}

func (c *chatEvents) Next() (sse.Event, error) {
	ev, err := c.r.Next()
	if err == nil && string(ev.Data) == "[DONE]" {
		err = io.EOF
	}
	if errors.Is(err, io.EOF) && c.fail != nil {
		return sse.Event{}, c.fail
	}
	return ev, err
}

func (c *chatEvents) Close() error { c.closed = true; return nil }

var _ llm.Stream = (*chatEvents)(nil)

// ids are svc's random identifiers.
var ids = regexp.MustCompile(`"(msg|fc)_[0-9a-f]{48}"`)

// normalized is v as JSON with svc's random ids numbered in order of
// first appearance (msg_1, fc_2, …), so golden files are stable.
func normalized(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	b = ids.ReplaceAllFunc(b, func(m []byte) []byte {
		id := string(m)
		if _, ok := seen[id]; !ok {
			kind := id[1:bytes.IndexByte(m, '_')]
			seen[id] = `"` + kind + "_" + strconv.Itoa(len(seen)+1) + `"`
		}
		return []byte(seen[id])
	})
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
