package providertest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/svc-gateway/svc/internal/providertest"
)

// weatherArgs are the arguments the fakes call get_weather with: its required
// properties, each set to a string.
const weatherArgs = `{"city":"providertest value 0","unit":"providertest value 1"}`

func chatWeatherTools() []openai.ChatCompletionToolUnionParam {
	return []openai.ChatCompletionToolUnionParam{
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "get_weather",
			Parameters: shared.FunctionParameters{
				"type":       "object",
				"properties": map[string]any{"city": map[string]any{"type": "string"}, "unit": map[string]any{"type": "string"}, "days": map[string]any{"type": "integer"}},
				"required":   []string{"city", "unit"},
			},
		}),
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_time"}),
	}
}

func TestChatToolCalls(t *testing.T) {
	ctx := context.Background()
	question := openai.UserMessage("What is the weather in Paris?")
	params := openai.ChatCompletionNewParams{
		Model:    "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{question},
		Tools:    chatWeatherTools(),
	}

	t.Run("off by default", func(t *testing.T) {
		s := providertest.NewOpenAI(t)
		client := openai.NewClient(option.WithBaseURL(s.URL()), option.WithAPIKey("k"), option.WithMaxRetries(0))
		c, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		if c.Choices[0].FinishReason != "stop" || len(c.Choices[0].Message.ToolCalls) != 0 || c.Choices[0].Message.Content != providertest.DefaultReply {
			t.Errorf("got finish %q, %d tool calls, content %q; want the text reply", c.Choices[0].FinishReason, len(c.Choices[0].Message.ToolCalls), c.Choices[0].Message.Content)
		}
	})

	s := providertest.NewOpenAI(t, providertest.WithToolCalls(true))
	client := openai.NewClient(option.WithBaseURL(s.URL()), option.WithAPIKey("k"), option.WithMaxRetries(0))

	t.Run("round trip", func(t *testing.T) {
		c, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		ch := c.Choices[0]
		if ch.FinishReason != "tool_calls" || ch.Message.Content != "" || len(ch.Message.ToolCalls) != 1 {
			t.Fatalf("got finish %q, content %q, %d tool calls; want one tool call", ch.FinishReason, ch.Message.Content, len(ch.Message.ToolCalls))
		}
		call := ch.Message.ToolCalls[0]
		if !strings.HasPrefix(call.ID, "call_") || call.Type != "function" || call.Function.Name != "get_weather" || call.Function.Arguments != weatherArgs {
			t.Errorf("got call %s %s %s(%s), want call_… function get_weather(%s)", call.ID, call.Type, call.Function.Name, call.Function.Arguments, weatherArgs)
		}
		if want := int64(len(weatherArgs) / 4); c.Usage.CompletionTokens != want {
			t.Errorf("completion tokens: got %d, want %d (the arguments' bytes / 4)", c.Usage.CompletionTokens, want)
		}

		// The tool's result goes back: the answer is text.
		p := params
		p.Messages = []openai.ChatCompletionMessageParamUnion{question, ch.Message.ToParam(), openai.ToolMessage(`{"temp":21}`, call.ID)}
		c, err = client.Chat.Completions.New(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if c.Choices[0].FinishReason != "stop" || c.Choices[0].Message.Content != providertest.DefaultReply {
			t.Errorf("after the tool result: got finish %q, content %q, want stop and the reply", c.Choices[0].FinishReason, c.Choices[0].Message.Content)
		}
	})

	tests := []struct {
		name     string
		choice   openai.ChatCompletionToolChoiceOptionUnionParam
		header   string
		wantCall string // "" for the text reply
	}{
		{"auto", openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("auto")}, "", "get_weather"},
		{"required", openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}, "", "get_weather"},
		{"none", openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("none")}, "", ""},
		{"named", openai.ChatCompletionToolChoiceOptionUnionParam{OfFunctionToolChoice: &openai.ChatCompletionNamedToolChoiceParam{
			Function: openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_time"}}}, "", "get_time"},
		{"header off", openai.ChatCompletionToolChoiceOptionUnionParam{}, "0", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := params
			p.ToolChoice = tt.choice
			var opts []option.RequestOption
			if tt.header != "" {
				opts = append(opts, option.WithHeader(providertest.HeaderToolCalls, tt.header))
			}
			c, err := client.Chat.Completions.New(ctx, p, opts...)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if calls := c.Choices[0].Message.ToolCalls; len(calls) > 0 {
				got = calls[0].Function.Name
			}
			if got != tt.wantCall {
				t.Errorf("called %q, want %q", got, tt.wantCall)
			}
		})
	}

	t.Run("header on", func(t *testing.T) {
		plain := providertest.NewOpenAI(t)
		c := openai.NewClient(option.WithBaseURL(plain.URL()), option.WithAPIKey("k"), option.WithMaxRetries(0))
		got, err := c.Chat.Completions.New(ctx, params, option.WithHeader(providertest.HeaderToolCalls, "1"))
		if err != nil {
			t.Fatal(err)
		}
		if got.Choices[0].FinishReason != "tool_calls" {
			t.Errorf("finish: got %q, want tool_calls", got.Choices[0].FinishReason)
		}
		_, err = c.Chat.Completions.New(ctx, params, option.WithHeader(providertest.HeaderToolCalls, "maybe"))
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
			t.Errorf("bad header: got %v, want a 400", err)
		}
	})

	t.Run("no tools", func(t *testing.T) {
		p := params
		p.Tools = nil
		c, err := client.Chat.Completions.New(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if c.Choices[0].FinishReason != "stop" {
			t.Errorf("finish: got %q, want stop", c.Choices[0].FinishReason)
		}
	})

	t.Run("stream", func(t *testing.T) {
		p := params
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		stream := client.Chat.Completions.NewStreaming(ctx, p, option.WithHeader(providertest.HeaderChunks, "3"))
		var acc openai.ChatCompletionAccumulator
		var finished []openai.FinishedChatCompletionToolCall
		for stream.Next() {
			if !acc.AddChunk(stream.Current()) {
				t.Fatalf("the accumulator refused chunk %s", stream.Current().RawJSON())
			}
			if call, ok := acc.JustFinishedToolCall(); ok {
				finished = append(finished, call)
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		ch := acc.Choices[0]
		if ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 1 {
			t.Fatalf("got finish %q and %d tool calls, want tool_calls and 1", ch.FinishReason, len(ch.Message.ToolCalls))
		}
		call := ch.Message.ToolCalls[0]
		if !strings.HasPrefix(call.ID, "call_") || call.Function.Name != "get_weather" || call.Function.Arguments != weatherArgs {
			t.Errorf("got call %s %s(%s), want call_… get_weather(%s)", call.ID, call.Function.Name, call.Function.Arguments, weatherArgs)
		}
		if len(finished) != 1 || finished[0].ID != call.ID || finished[0].Arguments != weatherArgs {
			t.Errorf("JustFinishedToolCall: got %+v, want the call once", finished)
		}
		if acc.Usage.CompletionTokens != int64(len(weatherArgs)/4) {
			t.Errorf("completion tokens: got %d, want %d", acc.Usage.CompletionTokens, len(weatherArgs)/4)
		}
	})
}

// The tool call streams as OpenAI streams it: the first delta carries the
// role, null content and the call's index, id, type, name and empty
// arguments; then X-Fake-Chunks deltas carry pieces of the arguments.
func TestChatToolCallStreamWire(t *testing.T) {
	s := providertest.NewOpenAI(t)
	body := `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}],` +
		`"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","required":["city","unit"]}}}]}`
	resp := post(t, s.URL()+"/chat/completions", body, map[string]string{
		providertest.HeaderToolCalls: "1",
		providertest.HeaderChunks:    "4",
	})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status: got %d, want 200", resp.StatusCode)
	}
	events, err := readEvents(t, resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1+4+1+1 || events[len(events)-1] != "[DONE]" {
		t.Fatalf("got %d events ending %q, want the start, 4 argument pieces, the finish and [DONE]", len(events), events[len(events)-1])
	}
	type fn struct {
		Name      *string `json:"name"`
		Arguments *string `json:"arguments"`
	}
	type delta struct {
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		ToolCalls []struct {
			Index    int     `json:"index"`
			ID       *string `json:"id"`
			Type     *string `json:"type"`
			Function fn      `json:"function"`
		} `json:"tool_calls"`
	}
	type chunk struct {
		Choices []struct {
			Delta        delta   `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
	}
	var chunks []chunk
	for _, e := range events[:len(events)-1] {
		var c chunk
		if err := json.Unmarshal([]byte(e), &c); err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		chunks = append(chunks, c)
	}
	first := chunks[0].Choices[0].Delta
	if first.Role != "assistant" || string(first.Content) != "null" || len(first.ToolCalls) != 1 {
		t.Fatalf("first delta: got %s", events[0])
	}
	tc := first.ToolCalls[0]
	if tc.Index != 0 || tc.ID == nil || !strings.HasPrefix(*tc.ID, "call_") || tc.Type == nil || *tc.Type != "function" ||
		tc.Function.Name == nil || *tc.Function.Name != "get_weather" || tc.Function.Arguments == nil || *tc.Function.Arguments != "" {
		t.Errorf("first delta: got %s", events[0])
	}
	var args strings.Builder
	for i, c := range chunks[1:5] {
		d := c.Choices[0].Delta
		if len(d.ToolCalls) != 1 || d.ToolCalls[0].ID != nil || d.ToolCalls[0].Function.Name != nil || d.ToolCalls[0].Function.Arguments == nil {
			t.Fatalf("argument delta %d: got %s", i, events[1+i])
		}
		args.WriteString(*d.ToolCalls[0].Function.Arguments)
	}
	if diff := cmp.Diff(weatherArgs, args.String()); diff != "" {
		t.Errorf("arguments (-want +got):\n%s", diff)
	}
	if f := chunks[5].Choices[0].FinishReason; f == nil || *f != "tool_calls" {
		t.Errorf("finish chunk: got %s", events[5])
	}

	t.Run("cut", func(t *testing.T) {
		resp := post(t, s.URL()+"/chat/completions", body, map[string]string{
			providertest.HeaderToolCalls: "1",
			providertest.HeaderCutAfter:  "2",
		})
		events, err := readEvents(t, resp.Body)
		if !errors.Is(err, io.ErrUnexpectedEOF) || len(events) != 1+2 {
			t.Errorf("got %d events and error %v, want the start and 2 pieces, then unexpected EOF", len(events), err)
		}
	})
}
