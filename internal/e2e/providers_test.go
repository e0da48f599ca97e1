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

// streamText runs a streamed chat and returns the accumulated completion.
func streamText(t *testing.T, c openai.Client, p openai.ChatCompletionNewParams) openai.ChatCompletionAccumulator {
	t.Helper()
	s := c.Chat.Completions.NewStreaming(context.Background(), p)
	acc := openai.ChatCompletionAccumulator{}
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return acc
}

func TestGeminiThroughOpenAISDK(t *testing.T) {
	fake := providertest.NewGemini(t, providertest.GemAPIKey("AIza-test-key-123"), providertest.GemReply("hola desde gemini"), providertest.GemChunks(3))
	g := start(t, nil, config.Map{"GEMINI_API_BASE": fake.URL(), "GEMINI_API_KEY": "AIza-test-key-123"})
	key, _ := g.newKey(nil)
	c := g.client(key)
	var resp *http.Response
	res, err := c.Chat.Completions.New(context.Background(), chatParams("gemini-2.5-flash", "hi"), option.WithResponseInto(&resp))
	if err != nil {
		t.Fatal(err)
	}
	if res.Choices[0].Message.Content != "hola desde gemini" || res.Usage.TotalTokens == 0 || resp.Header.Get("x-svc-provider") != "gemini" {
		t.Errorf("chat = %q usage %+v provider %q", res.Choices[0].Message.Content, res.Usage, resp.Header.Get("x-svc-provider"))
	}
	up := lastPost(t, fake.Requests())
	if up.Header.Get("x-goog-api-key") != "AIza-test-key-123" || !strings.Contains(up.Path, "gemini-2.5-flash:generateContent") {
		t.Errorf("upstream %s key %q", up.Path, up.Header.Get("x-goog-api-key"))
	}
	if acc := streamText(t, c, chatParams("gemini/gemini-2.5-flash", "hi")); acc.Choices[0].Message.Content != "hola desde gemini" {
		t.Errorf("streamed %q", acc.Choices[0].Message.Content)
	}
	p := chatParams("gemini-2.5-flash", "weather in Paris?")
	p.Tools = []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
		Name:       "get_weather",
		Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}, "additionalProperties": false},
	})}
	acc := streamText(t, c, p)
	if calls := acc.Choices[0].Message.ToolCalls; len(calls) != 1 || calls[0].Function.Name != "get_weather" || !json.Valid([]byte(calls[0].Function.Arguments)) {
		t.Errorf("tool calls = %+v", calls)
	}
}

func TestBedrockThroughOpenAISDKWithSigV4(t *testing.T) {
	fake := providertest.NewBedrock(t, providertest.BedrockReply("hello from bedrock"), providertest.BedrockChunks(4))
	g := start(t, nil, config.Map{
		"BEDROCK_API_BASE": fake.URL(), "BEDROCK_REGION": "us-east-1",
		"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
	})
	key, _ := g.newKey(nil)
	c := g.client(key)
	model := "bedrock/anthropic.claude-3-5-sonnet-20241022-v2:0"
	res, err := c.Chat.Completions.New(context.Background(), chatParams(model, "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Choices[0].Message.Content != "hello from bedrock" || res.Usage.TotalTokens == 0 || res.Model != "anthropic.claude-3-5-sonnet-20241022-v2:0" {
		t.Errorf("chat = %q model %q usage %+v", res.Choices[0].Message.Content, res.Model, res.Usage)
	}
	up := lastPost(t, fake.Requests())
	if auth := up.Header.Get("Authorization"); !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") || !strings.Contains(auth, "/us-east-1/bedrock/aws4_request") {
		t.Errorf("upstream Authorization %q, want a SigV4 signature", auth)
	}
	if strings.Contains(g.logs.String(), "wJalrXUtnFEMI") {
		t.Error("the AWS secret reached the log")
	}
	acc := streamText(t, c, chatParams(model, "hi"))
	if acc.Choices[0].Message.Content != "hello from bedrock" {
		t.Errorf("streamed %q", acc.Choices[0].Message.Content)
	}
}

func TestEmbeddingsTranslated(t *testing.T) {
	gem := providertest.NewGemini(t, providertest.GemAPIKey("AIza-test-key-123"))
	coh := providertest.NewCohere(t, providertest.CohWithAPIKey("co-key-123456"))
	g := start(t, nil, config.Map{
		"GEMINI_API_BASE": gem.URL(), "GEMINI_API_KEY": "AIza-test-key-123",
		"COHERE_API_BASE": coh.URL(), "COHERE_API_KEY": "co-key-123456",
	})
	key, _ := g.newKey(nil)
	c := g.client(key)
	cases := []struct {
		model string
		dims  int
	}{
		{"gemini/text-embedding-004", 16},
		{"cohere/embed-v4.0", 256},
	}
	for _, tc := range cases {
		t.Run(tc.model, func(t *testing.T) {
			res, err := c.Embeddings.New(context.Background(), openai.EmbeddingNewParams{
				Model:      tc.model,
				Input:      openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"first text", "second"}},
				Dimensions: openai.Int(int64(tc.dims)),
			})
			if err != nil {
				t.Fatal(err)
			}
			want := providertest.Embedding("first text", tc.dims)
			if len(res.Data) != 2 || len(res.Data[0].Embedding) != tc.dims || float32(res.Data[0].Embedding[0]) != want[0] || res.Usage.PromptTokens == 0 {
				t.Errorf("embeddings: %d vectors of %d, usage %+v", len(res.Data), len(res.Data[0].Embedding), res.Usage)
			}
		})
	}
	// Token ids cannot be translated: a clear 400.
	r, b := g.post("/v1/embeddings", key, []byte(`{"model":"cohere/embed-v4.0","input":[[1,2,3]]}`), nil)
	if r.StatusCode != 400 || !strings.Contains(string(b), "input") {
		t.Errorf("token input to cohere: %d %s", r.StatusCode, b)
	}
}

func TestBedrockEmbeddings(t *testing.T) {
	fake := providertest.NewBedrock(t)
	g := start(t, nil, config.Map{
		"BEDROCK_API_BASE": fake.URL(), "BEDROCK_REGION": "us-east-1",
		"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
	})
	key, _ := g.newKey(nil)
	c := g.client(key)
	titan, err := c.Embeddings.New(context.Background(), openai.EmbeddingNewParams{
		Model: "bedrock/amazon.titan-embed-text-v2:0", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hello bedrock")},
		Dimensions: openai.Int(256),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(titan.Data) != 1 || len(titan.Data[0].Embedding) != 256 || float32(titan.Data[0].Embedding[0]) != providertest.Embedding("hello bedrock", 256)[0] || titan.Usage.PromptTokens == 0 {
		t.Errorf("titan: %d vectors of %d, usage %+v", len(titan.Data), len(titan.Data[0].Embedding), titan.Usage)
	}
	if auth := lastPost(t, fake.Requests()).Header.Get("Authorization"); !strings.HasPrefix(auth, "AWS4-HMAC-SHA256") {
		t.Errorf("invoke not signed: %q", auth)
	}
	co, err := c.Embeddings.New(context.Background(), openai.EmbeddingNewParams{
		Model: "bedrock/cohere.embed-english-v3", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"a", "b", "c"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(co.Data) != 3 || co.Data[2].Index != 2 {
		t.Errorf("cohere on bedrock: %d vectors", len(co.Data))
	}
	r, b := g.post("/v1/embeddings", key, []byte(`{"model":"bedrock/amazon.titan-embed-text-v2:0","input":["a","b"]}`), nil)
	if r.StatusCode != 400 || !strings.Contains(string(b), "one text") {
		t.Errorf("titan with two texts: %d %s, want 400", r.StatusCode, b)
	}
}
