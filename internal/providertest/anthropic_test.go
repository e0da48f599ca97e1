package providertest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
	anthadapter "github.com/svc-gateway/svc/internal/provider/anthropic"
	"github.com/svc-gateway/svc/internal/providertest"
)

// anthClient is the official Anthropic SDK pointed at the fake.
func anthClient(s *providertest.Anthropic, key string) anthropic.Client {
	return anthropic.NewClient(option.WithBaseURL(s.URL()), option.WithAPIKey(key), option.WithMaxRetries(0))
}

var anthWeatherTool = anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
	Name:        "get_weather",
	Description: anthropic.String("Get the current weather in a given location"),
	InputSchema: anthropic.ToolInputSchemaParam{
		Properties: map[string]any{"location": map[string]any{"type": "string"}, "unit": map[string]any{"type": "string"}},
		Required:   []string{"location", "unit"},
	},
}}

// The official Anthropic SDK reads everything the fake sends.
func TestAnthropicSDK(t *testing.T) {
	s := providertest.NewAnthropic(t, providertest.AnthAPIKey("sk-ant-test"), providertest.AnthChunks(7))
	client := anthClient(s, "sk-ant-test")
	ctx := context.Background()
	params := anthropic.MessageNewParams{
		Model:     "claude-sonnet-4-5-20250929",
		MaxTokens: 1024,
		System:    []anthropic.TextBlockParam{{Text: "You are terse."}},
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Say hello to the gateway tests."))},
	}

	t.Run("message", func(t *testing.T) {
		m, err := client.Messages.New(ctx, params, option.WithHeader(providertest.HeaderCachedTokens, "30"),
			option.WithHeader(providertest.AnthHeaderCacheCreationTokens, "12"))
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Content) != 1 || m.Content[0].Text != providertest.AnthDefaultReply {
			t.Fatalf("content: got %+v, want the default reply", m.Content)
		}
		if m.StopReason != anthropic.StopReasonEndTurn || string(m.Model) != "claude-sonnet-4-5-20250929" || m.ID == "" {
			t.Errorf("got stop %q model %q id %q, want end_turn, the request's model, an id", m.StopReason, m.Model, m.ID)
		}
		// (14 + 31) bytes of text / 4 in, 79 / 4 out.
		u := m.Usage
		if u.InputTokens != 11 || u.OutputTokens != 19 || u.CacheReadInputTokens != 30 || u.CacheCreationInputTokens != 12 {
			t.Errorf("usage: got %+v, want input 11, output 19, cache read 30, cache creation 12", u)
		}
		rec := s.LastRequest()
		if rec.Path != "/v1/messages" || rec.Header.Get("X-Api-Key") != "sk-ant-test" || rec.Header.Get("Anthropic-Version") == "" {
			t.Errorf("recorded %s with x-api-key %q, anthropic-version %q", rec.Path, rec.Header.Get("X-Api-Key"), rec.Header.Get("Anthropic-Version"))
		}
	})

	t.Run("stream", func(t *testing.T) {
		st := client.Messages.NewStreaming(ctx, params)
		var acc anthropic.Message
		var types []string
		for st.Next() {
			ev := st.Current()
			types = append(types, ev.Type)
			if err := acc.Accumulate(ev); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Err(); err != nil {
			t.Fatal(err)
		}
		// The SDK drops pings; TestAnthropicProtocol sees them.
		want := "message_start content_block_start" + strings.Repeat(" content_block_delta", 7) + " content_block_stop message_delta message_stop"
		if got := strings.Join(types, " "); got != want {
			t.Errorf("events:\ngot  %s\nwant %s", got, want)
		}
		if len(acc.Content) != 1 || acc.Content[0].Text != providertest.AnthDefaultReply {
			t.Errorf("accumulated content: got %+v, want the default reply", acc.Content)
		}
		if acc.StopReason != anthropic.StopReasonEndTurn || acc.Usage.OutputTokens != 19 || acc.Usage.InputTokens != 11 {
			t.Errorf("accumulated: stop %q usage %+v, want end_turn, 11 in, 19 out", acc.StopReason, acc.Usage)
		}
	})

	t.Run("tool use", func(t *testing.T) {
		p := params
		p.Tools = []anthropic.ToolUnionParam{anthWeatherTool}
		p.Messages = []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Weather in Paris?"))}
		m, err := client.Messages.New(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if m.StopReason != anthropic.StopReasonToolUse || len(m.Content) != 1 || m.Content[0].Type != "tool_use" {
			t.Fatalf("got stop %q content %+v, want one tool_use", m.StopReason, m.Content)
		}
		tu := m.Content[0].AsToolUse()
		var in map[string]string
		if err := json.Unmarshal(tu.Input, &in); err != nil || tu.Name != "get_weather" || in["location"] == "" || in["unit"] == "" {
			t.Errorf("tool use: got %s %s (%v), want get_weather with location and unit", tu.Name, tu.Input, err)
		}

		// Streamed, the input arrives in pieces the SDK assembles.
		st := client.Messages.NewStreaming(ctx, p)
		var acc anthropic.Message
		pieces := 0
		for st.Next() {
			ev := st.Current()
			if ev.Type == "content_block_delta" && ev.Delta.Type == "input_json_delta" && ev.Delta.PartialJSON != "" {
				pieces++
			}
			if err := acc.Accumulate(ev); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Err(); err != nil {
			t.Fatal(err)
		}
		if pieces < 2 {
			t.Errorf("input_json_delta pieces: got %d, want several", pieces)
		}
		stu := acc.Content[0].AsToolUse()
		if acc.StopReason != anthropic.StopReasonToolUse || string(stu.Input) != string(tu.Input) || stu.ID == "" {
			t.Errorf("streamed tool use: got stop %q input %s id %q, want tool_use with input %s", acc.StopReason, stu.Input, stu.ID, tu.Input)
		}

		// With the tool's result as the last message, the answer is text.
		p.Messages = append(p.Messages, m.ToParam(),
			anthropic.NewUserMessage(anthropic.NewToolResultBlock(tu.ID, "18°C and sunny", false)))
		m2, err := client.Messages.New(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if m2.StopReason != anthropic.StopReasonEndTurn || m2.Content[0].Type != "text" {
			t.Errorf("after the tool result: got stop %q content %+v, want text", m2.StopReason, m2.Content)
		}
	})

	t.Run("count tokens", func(t *testing.T) {
		c, err := client.Messages.CountTokens(ctx, anthropic.MessageCountTokensParams{
			Model:    "claude-sonnet-4-5-20250929",
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Count these tokens please"))},
		})
		if err != nil {
			t.Fatal(err)
		}
		if c.InputTokens != 6 {
			t.Errorf("input tokens: got %d, want 6", c.InputTokens)
		}
	})

	t.Run("models", func(t *testing.T) {
		page, err := client.Models.List(ctx, anthropic.ModelListParams{})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range page.Data {
			ids = append(ids, m.ID)
		}
		if strings.Join(ids, ",") != strings.Join(providertest.AnthDefaultModels, ",") {
			t.Errorf("models: got %v, want %v", ids, providertest.AnthDefaultModels)
		}
	})

	t.Run("errors", func(t *testing.T) {
		for _, tt := range []struct {
			status int
			typ    string
		}{
			{400, "invalid_request_error"}, {401, "authentication_error"}, {403, "permission_error"},
			{404, "not_found_error"}, {429, "rate_limit_error"}, {500, "api_error"}, {529, "overloaded_error"},
		} {
			_, err := client.Messages.New(ctx, params, option.WithHeader(providertest.HeaderStatus, http.StatusText(tt.status)))
			if err != nil {
				t.Fatalf("a non-numeric X-Fake-Status must be ignored: %v", err)
			}
			_, err = client.Messages.New(ctx, params, option.WithHeader(providertest.HeaderStatus, strconv.Itoa(tt.status)))
			var apiErr *anthropic.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("status %d: got %v, want an *anthropic.Error", tt.status, err)
			}
			if apiErr.StatusCode != tt.status || !strings.Contains(apiErr.RawJSON(), `"type":"`+tt.typ+`"`) {
				t.Errorf("status %d: got %d %s, want error type %s", tt.status, apiErr.StatusCode, apiErr.RawJSON(), tt.typ)
			}
			if tt.status == 429 && apiErr.Response.Header.Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
		}
		wrong := anthClient(s, "sk-ant-wrong")
		_, err := wrong.Messages.New(ctx, params)
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnauthorized {
			t.Errorf("wrong key: got %v, want 401", err)
		}
	})
}

// TestAnthropicProtocol checks what the SDK always gets right: the version
// header is required, bodies are validated, recording is bounded, and
// AnthStatus / Set apply to the requests that follow.
func TestAnthropicProtocol(t *testing.T) {
	s := providertest.NewAnthropic(t, providertest.AnthRecording(2))
	post := func(body string, hdr map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, s.URL()+"/v1/messages", strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	v := map[string]string{"anthropic-version": "2023-06-01"}
	ok := `{"model":"claude","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	for _, tt := range []struct {
		name, body string
		hdr        map[string]string
		status     int
		has        string
	}{
		{"no version", ok, nil, 400, "anthropic-version"},
		{"no max_tokens", `{"model":"claude","messages":[{"role":"user","content":"hi"}]}`, v, 400, "max_tokens"},
		{"bad role", `{"model":"claude","max_tokens":5,"messages":[{"role":"system","content":"hi"}]}`, v, 400, "role"},
		{"not JSON", `{`, v, 400, "invalid_request_error"},
		{"fine", ok, v, 200, `"type":"message"`},
	} {
		status, body := post(tt.body, tt.hdr)
		if status != tt.status || !strings.Contains(body, tt.has) {
			t.Errorf("%s: got %d %s, want %d containing %q", tt.name, status, body, tt.status, tt.has)
		}
		if status != 200 && !strings.Contains(body, `{"error":{`) && !strings.Contains(body, `"type":"error"`) {
			t.Errorf("%s: error body %s is not Anthropic-shaped", tt.name, body)
		}
	}
	if got := len(s.Requests()); got != 2 || s.Count() != 5 {
		t.Errorf("recorded %d of %d requests, want 2 of 5", got, s.Count())
	}
	s.Set(providertest.AnthStatus(529))
	if status, body := post(ok, v); status != 529 || !strings.Contains(body, "overloaded_error") {
		t.Errorf("AnthStatus(529): got %d %s", status, body)
	}
	s.Set(providertest.AnthStatus(0), providertest.AnthCacheTokens(100, 7))
	if status, body := post(ok, v); status != 200 || !strings.Contains(body, `"cache_read_input_tokens":100`) || !strings.Contains(body, `"cache_creation_input_tokens":7`) {
		t.Errorf("AnthCacheTokens: got %d %s", status, body)
	}
	status, body := post(strings.Replace(ok, `"max_tokens":10`, `"max_tokens":10,"stream":true`, 1), v)
	var events []string
	for _, line := range strings.Split(body, "\n") {
		if name, found := strings.CutPrefix(line, "event: "); found {
			events = append(events, name)
		}
	}
	wantEvents := "message_start content_block_start ping" + strings.Repeat(" content_block_delta", providertest.DefaultChunks) +
		" content_block_stop message_delta message_stop"
	if status != 200 || strings.Join(events, " ") != wantEvents {
		t.Errorf("stream: got %d with events\n%s\nwant\n%s", status, strings.Join(events, " "), wantEvents)
	}
	s.Reset()
	if s.Count() != 0 || len(s.Requests()) != 0 || s.LastRequest().Path != "" {
		t.Error("Reset kept requests")
	}
}

// TestAnthropicAdapterRoundTrip drives svc's Anthropic adapter against the
// fake, as the proxy does: build the request, sign it (x-api-key, as
// upstream/cred does), send it, decode the answer.
func TestAnthropicAdapterRoundTrip(t *testing.T) {
	s := providertest.NewAnthropic(t, providertest.AnthAPIKey("sk-ant-test"), providertest.AnthCacheTokens(40, 8))
	a := anthadapter.New()
	target := provider.Deployment{Provider: "anthropic", Model: "claude-sonnet-4-5-20250929", BaseURL: s.URL()}
	send := func(body string) *http.Response {
		t.Helper()
		req, err := llm.DecodeChatRequest([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		hreq, err := a.NewChatRequest(context.Background(), target, provider.ChatCall{Req: req, Raw: []byte(body)})
		if err != nil {
			t.Fatal(err)
		}
		hreq.Header.Set("X-Api-Key", "sk-ant-test")
		resp, err := http.DefaultClient.Do(hreq)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	t.Run("chat", func(t *testing.T) {
		resp := send(`{"model":"anthropic/claude-sonnet-4-5","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hello there, fake."}]}`)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("got %d %s", resp.StatusCode, body)
		}
		out, u, model, err := a.DecodeChat(body)
		if err != nil {
			t.Fatal(err)
		}
		var c llm.ChatResponse
		if err := json.Unmarshal(out, &c); err != nil || c.Choices[0].Message.Content.String() != providertest.AnthDefaultReply {
			t.Fatalf("got %s (%v), want the default reply", out, err)
		}
		// (9 + 18) / 4 = 6 input, plus 40 read and 8 written.
		if model != target.Model || u.PromptTokens != 54 || u.Cached() != 40 || u.CacheWrite() != 8 || u.CompletionTokens != 19 {
			t.Errorf("got model %q usage %+v %+v", model, u, *u.PromptTokensDetails)
		}
	})

	t.Run("stream with tool use", func(t *testing.T) {
		resp := send(`{"model":"claude-sonnet-4-5","stream":true,"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}}}],"messages":[{"role":"user","content":"Weather in Paris?"}]}`)
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("got %d %s", resp.StatusCode, b)
		}
		info := &provider.StreamInfo{}
		st := a.DecodeChatStream(resp.Body, info)
		defer st.Close()
		var args, name, finish string
		var usage *llm.Usage
		for {
			ev, err := st.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			var c llm.ChatChunk
			if err := json.Unmarshal(ev.Data, &c); err != nil {
				t.Fatalf("chunk %s: %v", ev.Data, err)
			}
			if c.Usage != nil {
				usage = c.Usage
			}
			for _, ch := range c.Choices {
				for _, tc := range ch.Delta.ToolCalls {
					name += tc.Function.Name
					args += tc.Function.Arguments
				}
				if ch.FinishReason != nil {
					finish = *ch.FinishReason
				}
			}
		}
		if name != "get_weather" || args != `{"location":"providertest value 0"}` || finish != "tool_calls" {
			t.Errorf("got tool %q arguments %q finish %q", name, args, finish)
		}
		if usage == nil || usage.Cached() != 40 || info.Model != target.Model || info.Usage.TotalTokens != usage.TotalTokens {
			t.Errorf("got usage chunk %+v, info %+v", usage, info)
		}
	})
}
