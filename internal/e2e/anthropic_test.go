package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/providertest"
)

const anthKey = "sk-ant-upstream-0123456789"

func anthropicGateway(t *testing.T, opts ...providertest.AnthOption) (*gateway, *providertest.Anthropic) {
	t.Helper()
	fake := providertest.NewAnthropic(t, append([]providertest.AnthOption{providertest.AnthAPIKey(anthKey)}, opts...)...)
	g := start(t, nil, config.Map{"ANTHROPIC_API_BASE": fake.URL(), "ANTHROPIC_API_KEY": anthKey})
	return g, fake
}

var weatherTool = anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
	Name:        "get_weather",
	Description: anthropic.String("Get the weather"),
	InputSchema: anthropic.ToolInputSchemaParam{
		Properties: map[string]any{"location": map[string]any{"type": "string"}, "unit": map[string]any{"type": "string"}},
		Required:   []string{"location", "unit"},
	},
}}

// The official Anthropic SDK against /native/v1/messages: plain, streaming,
// tool use, count_tokens and models, with the virtual key in x-api-key.
func TestNativeMessagesWithAnthropicSDK(t *testing.T) {
	g, fake := anthropicGateway(t, providertest.AnthChunks(6))
	key, _ := g.newKey(nil)
	client := anthropic.NewClient(aoption.WithBaseURL(g.proxy+"/native"), aoption.WithAPIKey(key), aoption.WithMaxRetries(0))
	ctx := context.Background()
	params := anthropic.MessageNewParams{
		Model:     "claude-sonnet-4-5[1m]",
		MaxTokens: 256,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Say hello."))},
	}
	var httpResp *http.Response
	m, err := client.Messages.New(ctx, params, aoption.WithResponseInto(&httpResp))
	if err != nil {
		t.Fatal(err)
	}
	if m.Content[0].Type != "text" || m.Usage.InputTokens == 0 {
		t.Errorf("message = %+v", m)
	}
	if cost, _ := strconv.ParseFloat(httpResp.Header.Get("x-svc-cost-usd"), 64); cost <= 0 || httpResp.Header.Get("x-svc-provider") != "anthropic" {
		t.Errorf("headers %v", httpResp.Header)
	}
	up := lastPost(t, fake.Requests())
	var body map[string]any
	json.Unmarshal(up.Body, &body)
	if up.Header.Get("x-api-key") != anthKey || strings.Contains(string(up.Body), key) || body["model"] != "claude-sonnet-4-5" {
		t.Errorf("upstream: x-api-key %q, model %v; want svc's key and the [1m] suffix stripped", up.Header.Get("x-api-key"), body["model"])
	}
	if up.Header.Get("anthropic-version") == "" {
		t.Error("no anthropic-version upstream")
	}

	// Streaming: events relayed unchanged, usage recorded.
	st := client.Messages.NewStreaming(ctx, params)
	var acc anthropic.Message
	for st.Next() {
		if err := acc.Accumulate(st.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if acc.Content[0].AsText().Text != m.Content[0].AsText().Text || acc.Usage.OutputTokens == 0 {
		t.Errorf("streamed %+v, want the same text as the plain answer", acc)
	}

	// Tool use, streamed: the input arrives whole.
	p := params
	p.Tools = []anthropic.ToolUnionParam{weatherTool}
	st = client.Messages.NewStreaming(ctx, p)
	acc = anthropic.Message{}
	for st.Next() {
		if err := acc.Accumulate(st.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	tu := acc.Content[0].AsToolUse()
	var in map[string]string
	if acc.StopReason != anthropic.StopReasonToolUse || json.Unmarshal(tu.Input, &in) != nil || in["location"] == "" {
		t.Errorf("tool use = %+v", acc)
	}

	if c, err := client.Messages.CountTokens(ctx, anthropic.MessageCountTokensParams{Model: "claude-sonnet-4-5",
		Messages: params.Messages}); err != nil || c.InputTokens == 0 {
		t.Errorf("count_tokens = %+v, %v", c, err)
	}
	if page, err := client.Models.List(ctx, anthropic.ModelListParams{}); err != nil || len(page.Data) == 0 {
		t.Errorf("models = %+v, %v", page, err)
	}

	// The same through /ide, with the key in Authorization.
	ide := anthropic.NewClient(aoption.WithBaseURL(g.proxy+"/ide"), aoption.WithAuthToken(key), aoption.WithMaxRetries(0))
	if _, err := ide.Messages.New(ctx, params); err != nil {
		t.Errorf("/ide with a bearer key: %v", err)
	}

	// Errors keep Anthropic's shape: the SDK reads them.
	bad := anthropic.NewClient(aoption.WithBaseURL(g.proxy+"/native"), aoption.WithAPIKey("sk-svc-nope"), aoption.WithMaxRetries(0))
	_, err = bad.Messages.New(ctx, params)
	var aerr *anthropic.Error
	if !errors.As(err, &aerr) || aerr.StatusCode != 401 || !strings.Contains(aerr.RawJSON(), `"authentication_error"`) {
		t.Errorf("bad key: %v, want a 401 authentication_error", err)
	}

	entries := g.logEntries("endpoint=native_messages", 5)
	var withTokens int
	for _, e := range entries {
		if e["endpoint"] == "native_messages" && e["tokens_used"].(float64) > 0 {
			withTokens++
		}
	}
	if withTokens < 4 {
		t.Errorf("%d native entries with tokens, want the messages calls recorded with usage", withTokens)
	}
}

// OpenAI clients reach Anthropic models through translation.
func TestAnthropicThroughOpenAISDK(t *testing.T) {
	g, fake := anthropicGateway(t, providertest.AnthReply("hello from claude"), providertest.AnthChunks(5))
	key, _ := g.newKey(nil)
	c := g.client(key)
	res, err := c.Chat.Completions.New(context.Background(), chatParams("claude-sonnet-4-5", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Choices[0].Message.Content != "hello from claude" || res.Usage.PromptTokens == 0 {
		t.Errorf("chat = %+v", res)
	}
	var up map[string]any
	json.Unmarshal(lastPost(t, fake.Requests()).Body, &up)
	if up["system"] != "be brief" || up["max_tokens"] == nil {
		t.Errorf("upstream Messages body = %v, want the system prompt lifted and max_tokens set", up)
	}

	p := chatParams("anthropic/claude-sonnet-4-5", "what is the weather in Paris?")
	p.Tools = []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
		Name: "get_weather",
		Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{
			"location": map[string]any{"type": "string"}, "unit": map[string]any{"type": "string"}},
			"required": []string{"location", "unit"}},
	})}
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	s := c.Chat.Completions.NewStreaming(context.Background(), p, option.WithHeader("x-session-id", "s-1"))
	acc := openai.ChatCompletionAccumulator{}
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	calls := acc.Choices[0].Message.ToolCalls
	var args map[string]string
	if len(calls) != 1 || calls[0].Function.Name != "get_weather" || json.Unmarshal([]byte(calls[0].Function.Arguments), &args) != nil || args["location"] == "" {
		t.Fatalf("tool calls = %+v", calls)
	}
	if acc.Choices[0].FinishReason != "tool_calls" || acc.Usage.TotalTokens == 0 {
		t.Errorf("finish %q usage %+v", acc.Choices[0].FinishReason, acc.Usage)
	}
	entries := g.logEntries("provider=anthropic", 2)
	if len(entries) != 2 || entries[0]["conversation_id"] != "s-1" {
		t.Errorf("entries = %v", entries)
	}
}
