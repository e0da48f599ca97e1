package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/providertest"
)

func TestCohereThroughSDK(t *testing.T) {
	fake := providertest.NewCohere(t, providertest.CohWithAPIKey("co-key-123456"), providertest.CohWithReply("bonjour le monde"), providertest.CohWithChunks(4))
	g := start(t, nil, config.Map{"COHERE_API_BASE": fake.URL(), "COHERE_API_KEY": "co-key-123456"})
	key, _ := g.newKey(nil)
	c := g.client(key)

	var resp *http.Response
	res, err := c.Chat.Completions.New(context.Background(), chatParams("command-r-plus", "say hello"), option.WithResponseInto(&resp))
	if err != nil {
		t.Fatal(err)
	}
	if res.Choices[0].Message.Content != "bonjour le monde" || res.Usage.TotalTokens == 0 || resp.Header.Get("x-svc-provider") != "cohere" {
		t.Errorf("chat = %q usage %+v provider %q", res.Choices[0].Message.Content, res.Usage, resp.Header.Get("x-svc-provider"))
	}

	s := c.Chat.Completions.NewStreaming(context.Background(), chatParams("cohere/command-r-plus", "say hello"))
	acc := openai.ChatCompletionAccumulator{}
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if got := acc.Choices[0].Message.Content; got != "bonjour le monde" {
		t.Errorf("streamed content = %q", got)
	}

	// Tool calls streamed from Cohere arrive complete through the SDK.
	p := chatParams("command-r-plus", "what is the weather in Paris?")
	p.Tools = []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
		Name:       "get_weather",
		Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
	})}
	s = c.Chat.Completions.NewStreaming(context.Background(), p)
	acc = openai.ChatCompletionAccumulator{}
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	calls := acc.Choices[0].Message.ToolCalls
	if len(calls) == 0 || calls[0].Function.Name != "get_weather" || !json.Valid([]byte(calls[0].Function.Arguments)) {
		t.Fatalf("tool calls = %+v, want a complete get_weather call", calls)
	}

	// Rerank, translated to Cohere's v2 API.
	r, b := g.post("/v1/rerank", key, []byte(`{"model":"rerank-v3.5","query":"capital of france","documents":["Berlin is in Germany","Paris is the capital of France"],"top_n":1,"return_documents":true}`), nil)
	if r.StatusCode != 200 {
		t.Fatalf("rerank: %d %s", r.StatusCode, b)
	}
	var rr struct {
		Results []struct {
			Index          int
			RelevanceScore float64 `json:"relevance_score"`
			Document       *struct{ Text string }
		}
	}
	if err := json.Unmarshal(b, &rr); err != nil || len(rr.Results) != 1 || rr.Results[0].Index != 1 || rr.Results[0].Document == nil ||
		!strings.Contains(rr.Results[0].Document.Text, "Paris") {
		t.Errorf("rerank = %s", b)
	}
	entries := g.logEntries("", 4)
	kinds := map[string]int{}
	for _, e := range entries {
		kinds[e["endpoint"].(string)]++
		if e["provider"] != "cohere" {
			t.Errorf("entry provider %v", e["provider"])
		}
	}
	if kinds["chat"] != 3 || kinds["rerank"] != 1 {
		t.Errorf("audit endpoints = %v", kinds)
	}
}
