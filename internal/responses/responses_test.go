package responses_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/responses"
	"github.com/svc-gateway/svc/internal/store"
)

// Bad input is a 400 naming the field, never a panic.
func TestDecodeRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, body, param string
	}{
		{"no model", `{"input":"hi"}`, "model"},
		{"no input", `{"model":"m"}`, "input"},
		{"input a number", `{"model":"m","input":3}`, "input"},
		{"unknown item type", `{"model":"m","input":[{"type":"message","role":"user","content":"a"},{"type":"computer_call_output"}]}`, "input[1].type"},
		{"message without role", `{"model":"m","input":[{"content":"a"}]}`, "input[0].role"},
		{"unknown role", `{"model":"m","input":[{"role":"tool","content":"a"}]}`, "input[0].role"},
		{"message without content", `{"model":"m","input":[{"role":"user"}]}`, "input[0].content"},
		{"content a number", `{"model":"m","input":[{"role":"user","content":5}]}`, "input[0].content"},
		{"output part from the user", `{"model":"m","input":[{"role":"user","content":[{"type":"output_text","text":"a"}]}]}`, "input[0].content[0].type"},
		{"text part without text", `{"model":"m","input":[{"role":"user","content":[{"type":"input_text"}]}]}`, "input[0].content[0].text"},
		{"image without source", `{"model":"m","input":[{"role":"user","content":[{"type":"input_image"}]}]}`, "input[0].content[0].image_url"},
		{"call without call_id", `{"model":"m","input":[{"type":"function_call","name":"f","arguments":"{}"}]}`, "input[0].call_id"},
		{"call without arguments", `{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f"}]}`, "input[0].arguments"},
		{"output without output", `{"model":"m","input":[{"type":"function_call_output","call_id":"c"}]}`, "input[0].output"},
		{"reference without id", `{"model":"m","input":[{"type":"item_reference"}]}`, "input[0].id"},
		{"tool without type", `{"model":"m","input":"a","tools":[{"name":"f"}]}`, "tools[0].type"},
		{"function without name", `{"model":"m","input":"a","tools":[{"type":"function"}]}`, "tools[0].name"},
		{"temperature", `{"model":"m","input":"a","temperature":3}`, "temperature"},
		{"max_output_tokens huge", `{"model":"m","input":"a","max_output_tokens":1000000000000}`, "max_output_tokens"},
		{"max_output_tokens zero", `{"model":"m","input":"a","max_output_tokens":0}`, "max_output_tokens"},
		{"bad format", `{"model":"m","input":"a","text":{"format":{"type":"xml"}}}`, "text.format.type"},
		{"schema without name", `{"model":"m","input":"a","text":{"format":{"type":"json_schema","schema":{}}}}`, "text.format.name"},
		{"bad effort", `{"model":"m","input":"a","reasoning":{"effort":"max"}}`, "reasoning.effort"},
		{"previous and conversation", `{"model":"m","input":"a","previous_response_id":"r","conversation":"c"}`, "previous_response_id"},
		{"store not a bool", `{"model":"m","input":"a","store":"yes"}`, "store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := responses.Decode([]byte(tc.body))
			e := apierr.From(err)
			if err == nil || e.Status() != 400 || e.Param != tc.param {
				t.Errorf("got %v (status %d, param %q), want a 400 naming %q", err, e.Status(), e.Param, tc.param)
			}
		})
	}
}

// A translated stream that fails midway ends with the API's error event,
// numbered after the events sent, with the client's message only.
func TestTranslatedStreamFailsWithErrorEvent(t *testing.T) {
	r, err := responses.Decode([]byte(`{"model":"m","input":"hi","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	chunk := `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}` + "\n\n"
	cause := apierr.Wrap(apierr.UpstreamError, "upstream_stream_failed", "the provider's stream failed", errors.New("read tcp: connection reset by 10.0.0.1"))
	events := translated(t, r, []byte(chunk), cause)
	last, _ := events[len(events)-1].(map[string]any)
	var data map[string]any
	if err := json.Unmarshal(last["data"].(json.RawMessage), &data); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"type": "error", "code": "upstream_stream_failed", "message": "the provider's stream failed",
		"param": nil, "sequence_number": float64(len(events) - 1)}
	if last["event"] != "error" || !cmp.Equal(want, data) {
		t.Errorf("last event %v %v, want error %v", last["event"], data, want)
	}
	for _, ev := range events[:len(events)-1] {
		if typ := ev.(map[string]any)["event"]; responses.Terminal(typ.(string)) {
			t.Errorf("a failed stream sent %s", typ)
		}
	}
}

// The relay of a provider's own stream passes events unchanged, hands the
// final response to done before the terminal event, and fails on a
// provider's error event or a stream cut before its end.
func TestRelay(t *testing.T) {
	done := `event: response.completed` + "\n" + `data: {"type":"response.completed","sequence_number":2,"response":{"id":"resp_1","object":"response","status":"completed","model":"gpt-4o","output":[],"usage":{"input_tokens":3,"output_tokens":2,"total_tokens":5}}}` + "\n\n"
	head := "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_1\"}}\n\n" +
		"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":1,\"delta\":\"Hi\"}\n\n"
	for _, tc := range []struct {
		name, text string
		events     int
		code       string // the error the relay ends with; "" for a clean end
	}{
		{"complete", head + done, 3, ""},
		{"cut", head, 2, "upstream_stream_truncated"},
		{"provider error", head + "event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"overloaded\",\"sequence_number\":2}\n\n", 2, "server_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var final *responses.Response
			s := responses.Relay(io.NopCloser(strings.NewReader(tc.text)), func(r *responses.Response) { final = r })
			var n int
			var err error
			for {
				ev, nerr := s.Next()
				if nerr != nil {
					err = nerr
					break
				}
				n++
				if ev.Event == "response.completed" && (final == nil || final.Usage.TotalTokens != 5) {
					t.Errorf("terminal event before done saw the response (%+v)", final)
				}
			}
			if n != tc.events {
				t.Errorf("got %d events, want %d", n, tc.events)
			}
			switch {
			case tc.code == "" && !errors.Is(err, io.EOF):
				t.Errorf("got %v, want a clean end", err)
			case tc.code != "" && apierr.From(err).Code != tc.code:
				t.Errorf("got %v, want %s", err, tc.code)
			}
		})
	}
}

// memStore is a responses.Store in memory, for the History tests.
type memStore map[string]*responses.Record

func (m memStore) Save(_ context.Context, r *responses.Record) error { m[r.ID] = r; return nil }
func (m memStore) Load(_ context.Context, owner, id string, now time.Time) (*responses.Record, error) {
	r, ok := m[id]
	if !ok || r.Owner != owner || !r.Expires.After(now) {
		return nil, store.ErrNotFound
	}
	return r, nil
}
func (m memStore) Delete(context.Context, string, string) error    { return nil }
func (m memStore) Purge(context.Context, time.Time) (int64, error) { return 0, nil }
func text(s string) *responses.Content                             { return &responses.Content{Text: s} }
func turn(id, prev, owner, in, out string, native bool) *responses.Record {
	o := out
	return &responses.Record{ID: id, Previous: prev, Owner: owner, Provider: "openai", Native: native,
		Input:    []responses.Item{{Type: "message", Role: "user", Content: text(in)}},
		Response: &responses.Response{ID: id, Output: []responses.Item{{Type: "message", ID: "msg_" + id, Role: "assistant", Status: "completed", Content: &responses.Content{IsParts: true, Parts: []responses.Part{{Type: "output_text", Text: &o}}}}, {Type: "reasoning", ID: "rs_" + id}}},
		Expires:  time.Now().Add(time.Hour)}
}

// History walks previous_response_id back to the first turn, oldest first,
// and only the caller's own turns; Expand puts it before the input for a
// provider that did not hold it.
func TestHistoryAndExpand(t *testing.T) {
	s := memStore{}
	s.Save(t.Context(), turn("r1", "", "virtual_key:a", "one", "1", false))
	s.Save(t.Context(), turn("r2", "r1", "virtual_key:a", "two", "2", true))
	s.Save(t.Context(), turn("rx", "", "virtual_key:b", "other", "x", false))
	items, last, err := responses.History(t.Context(), s, "virtual_key:a", "r2", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		if it.Content != nil {
			got = append(got, it.Role+":"+it.Content.Text+textOf(it.Content))
		} else {
			got = append(got, it.Type)
		}
	}
	if want := []string{"user:one", "assistant:1", "reasoning", "user:two", "assistant:2", "reasoning"}; !cmp.Equal(want, got) || last.ID != "r2" {
		t.Errorf("history %v (last %s), want %v (last r2)", got, last.ID, want)
	}
	for _, id := range []string{"rx", "missing"} {
		_, _, err := responses.History(t.Context(), s, "virtual_key:a", id, time.Now())
		if e := apierr.From(err); e.Status() != 404 || e.Param != "previous_response_id" {
			t.Errorf("History(%s): got %v, want a 404 naming previous_response_id", id, err)
		}
	}

	body := []byte(`{"model":"gpt-4o","input":"three","previous_response_id":"r2","store":true}`)
	r, err := responses.Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	out, err := responses.Expand(body, r, items)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	json.Unmarshal(out, &m)
	if _, ok := m["previous_response_id"]; ok || string(m["store"]) != "true" {
		t.Errorf("expanded body %s: previous_response_id kept or store lost", out)
	}
	if bytes.Contains(m["input"], []byte(`"id"`)) || bytes.Contains(m["input"], []byte("reasoning")) {
		t.Errorf("expanded input %s carries svc's ids or reasoning items", m["input"])
	}
	var in []responses.Item
	json.Unmarshal(m["input"], &in)
	if len(in) != 5 || in[4].Role != "user" || textOf(in[4].Content) != "three" {
		t.Errorf("expanded input %s: want the 4 earlier messages then the new one", m["input"])
	}
}

func textOf(c *responses.Content) string {
	var b strings.Builder
	for _, p := range c.Parts {
		if p.Text != nil {
			b.WriteString(*p.Text)
		}
	}
	return b.String()
}
