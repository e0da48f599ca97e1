package llm

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-gateway/svc/internal/apierr"
)

func TestDecodeChatRequestErrors(t *testing.T) {
	cases := []struct {
		name, body, param string
	}{
		{"empty", ``, ""},
		{"not object", `[1]`, ""},
		{"syntax", `{"model":`, ""},
		{"trailing", `{"model":"m","messages":[{"role":"user","content":"hi"}]} x`, ""},
		{"missing model", `{"messages":[{"role":"user","content":"hi"}]}`, "model"},
		{"model wrong type", `{"model":5,"messages":[]}`, "model"},
		{"missing messages", `{"model":"gpt-4o"}`, "messages"},
		{"messages wrong type", `{"model":"gpt-4o","messages":"hi"}`, "messages"},
		{"no role", `{"model":"gpt-4o","messages":[{"content":"hi"}]}`, "messages[0].role"},
		{"bad role", `{"model":"gpt-4o","messages":[{"role":"robot","content":"hi"}]}`, "messages[0].role"},
		{"content number", `{"model":"gpt-4o","messages":[{"role":"user","content":5}]}`, "messages[0].content"},
		{"content object", `{"model":"gpt-4o","messages":[{"role":"user","content":{"a":1}}]}`, "messages[0].content"},
		{"duplicate model", `{"model":"gpt-4.5","model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}]}`, "model"},
		{"duplicate stream_options", `{"model":"m","messages":[{"role":"user","content":"x"}],"stream_options":{"include_usage":true},"stream_options":null}`, "stream_options"},
		{"invalid utf-8", "{\"model\":\"m\xff\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}", ""},
		{"user null content", `{"model":"gpt-4o","messages":[{"role":"user"}]}`, "messages[0].content"},
		{"image no url", `{"model":"gpt-4o","messages":[{"role":"user","content":[{"type":"image_url","image_url":{}}]}]}`, "messages[0].content[0].image_url"},
		{"temperature string", `{"model":"gpt-4o","messages":[{"role":"user","content":"x"}],"temperature":"hot"}`, "temperature"},
		{"temperature range", `{"model":"gpt-4o","messages":[{"role":"user","content":"x"}],"temperature":3}`, "temperature"},
		{"max_tokens float", `{"model":"gpt-4o","messages":[{"role":"user","content":"x"}],"max_tokens":1.5}`, "max_tokens"},
		{"stream string", `{"model":"gpt-4o","messages":[{"role":"user","content":"x"}],"stream":"yes"}`, "stream"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeChatRequest([]byte(c.body))
			if err == nil {
				t.Fatal("got nil error, want InvalidRequest")
			}
			e := apierr.From(err)
			if e.Kind != apierr.InvalidRequest {
				t.Fatalf("got kind %v (%v), want InvalidRequest", e.Kind, err)
			}
			if e.Param != c.param {
				t.Errorf("got param %q, want %q (message %q)", e.Param, c.param, e.Message)
			}
		})
	}
}

func TestDecodeChatRequestParts(t *testing.T) {
	body := `{"model":"openai/gpt-4o","stream":true,"logprobs":true,"metadata":{"a":"b"},
	"messages":[{"role":"system","content":"be brief"},
	{"role":"user","content":[{"type":"text","text":"what is this"},
	 {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},
	 {"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}}]},
	{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}],
	"stop":"END"}`
	r, err := DecodeChatRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Stream || r.Model != "openai/gpt-4o" || len(r.Messages) != 3 {
		t.Fatalf("got %+v", r)
	}
	parts := r.Messages[1].Content.Parts
	if len(parts) != 3 || parts[1].ImageURL.URL != "data:image/png;base64,iVBORw0KGgo=" || parts[2].InputAudio.Format != "wav" {
		t.Errorf("parts = %+v", parts)
	}
	if diff := cmp.Diff(Stop{"END"}, r.Stop); diff != "" {
		t.Errorf("stop (-want +got):\n%s", diff)
	}
	if err := r.FillExtra([]byte(body)); err != nil {
		t.Fatal(err)
	}
	if len(r.Extra) != 2 || string(r.Extra["logprobs"]) != "true" {
		t.Errorf("Extra = %v, want logprobs and metadata", r.Extra)
	}
	// Content round-trips in the form it was read.
	out, err := json.Marshal(r.Messages)
	if err != nil {
		t.Fatal(err)
	}
	var back []Message
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r.Messages, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// svc must read exactly the fields a provider reads: names match
// case-sensitively, so a case variant is an unknown field, not an override.
func TestCaseVariantsDoNotOverride(t *testing.T) {
	r, err := DecodeChatRequest([]byte(`{"model":"gpt-4.5","Model":"gpt-4o-mini","Stream_Options":{"include_usage":false},` +
		`"messages":[{"role":"user","Role":"system","content":[{"type":"text","text":"a","Text":"b"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Model != "gpt-4.5" || r.Messages[0].Role != "user" || r.Messages[0].Content.Parts[0].Text != "a" || r.StreamOptions != nil {
		t.Errorf("decoded %q %q %q %v; want the exact-case fields model, role, text and no stream_options",
			r.Model, r.Messages[0].Role, r.Messages[0].Content.Parts[0].Text, r.StreamOptions)
	}
}
