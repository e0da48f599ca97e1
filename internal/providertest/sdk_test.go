package providertest_test

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/svc-gateway/svc/internal/providertest"
)

func base64LE(v []float32) string {
	var b []byte
	for _, f := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// The official OpenAI SDK reads everything the fake sends.
func TestOpenAISDK(t *testing.T) {
	s := providertest.NewOpenAI(t, providertest.WithAPIKey("sk-test"), providertest.WithEmbeddingDimensions(16))
	client := openai.NewClient(option.WithBaseURL(s.URL()), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{
		Model: "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("You are terse."),
			openai.UserMessage("Say hello to the gateway tests."),
		},
	}

	t.Run("chat", func(t *testing.T) {
		c, err := client.Chat.Completions.New(ctx, params, option.WithHeader(providertest.HeaderCachedTokens, "3"))
		if err != nil {
			t.Fatal(err)
		}
		if c.Model != "gpt-4o-mini" || c.Choices[0].Message.Content != providertest.DefaultReply || c.Choices[0].FinishReason != "stop" {
			t.Errorf("got model %q content %q finish %q", c.Model, c.Choices[0].Message.Content, c.Choices[0].FinishReason)
		}
		if c.Usage.PromptTokens != int64(promptTokens) || c.Usage.PromptTokensDetails.CachedTokens != 3 || c.Usage.TotalTokens != c.Usage.PromptTokens+c.Usage.CompletionTokens {
			t.Errorf("usage: got %+v", c.Usage)
		}
	})

	t.Run("stream", func(t *testing.T) {
		p := params
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		stream := client.Chat.Completions.NewStreaming(ctx, p, option.WithHeader(providertest.HeaderReasoningTokens, "5"))
		var acc openai.ChatCompletionAccumulator
		n := 0
		for stream.Next() {
			acc.AddChunk(stream.Current())
			n++
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if n != 1+providertest.DefaultChunks+1+1 {
			t.Errorf("chunks: got %d, want %d", n, providertest.DefaultChunks+3)
		}
		if acc.Choices[0].Message.Content != providertest.DefaultReply || acc.Choices[0].FinishReason != "stop" {
			t.Errorf("accumulated: got %q, finish %q", acc.Choices[0].Message.Content, acc.Choices[0].FinishReason)
		}
		if acc.Usage.CompletionTokensDetails.ReasoningTokens != 5 || acc.Usage.PromptTokens != int64(promptTokens) {
			t.Errorf("usage: got %+v", acc.Usage)
		}
	})

	t.Run("stream cut", func(t *testing.T) {
		stream := client.Chat.Completions.NewStreaming(ctx, params, option.WithHeader(providertest.HeaderCutAfter, "1"))
		for stream.Next() {
		}
		if stream.Err() == nil {
			t.Error("a cut stream ended without an error")
		}
	})

	t.Run("rate limited", func(t *testing.T) {
		_, err := client.Chat.Completions.New(ctx, params, option.WithHeader(providertest.HeaderStatus, "429"))
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) {
			t.Fatalf("got %v, want an *openai.Error", err)
		}
		if apiErr.StatusCode != http.StatusTooManyRequests || apiErr.Code != "rate_limit_exceeded" || apiErr.Type != "requests" || apiErr.Message == "" {
			t.Errorf("got status %d code %q type %q message %q", apiErr.StatusCode, apiErr.Code, apiErr.Type, apiErr.Message)
		}
	})

	t.Run("wrong key", func(t *testing.T) {
		bad := openai.NewClient(option.WithBaseURL(s.URL()), option.WithAPIKey("sk-wrong"), option.WithMaxRetries(0))
		_, err := bad.Chat.Completions.New(ctx, params)
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || apiErr.Code != "invalid_api_key" {
			t.Errorf("got %v, want a 401 invalid_api_key", err)
		}
	})

	t.Run("models", func(t *testing.T) {
		page, err := client.Models.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) != len(providertest.DefaultModels) || page.Data[0].ID != providertest.DefaultModels[0] {
			t.Errorf("got %+v", page.Data)
		}
		m, err := client.Models.Get(ctx, "gpt-4o")
		if err != nil || m.ID != "gpt-4o" {
			t.Errorf("Get: got %+v, %v", m, err)
		}
	})

	t.Run("embeddings", func(t *testing.T) {
		e, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{
			Model: openai.EmbeddingModelTextEmbedding3Small,
			Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"a b c d e f g h", "z"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Data) != 2 || len(e.Data[0].Embedding) != 16 || e.Usage.PromptTokens != 3+1 {
			t.Fatalf("got %d vectors of %d, %d tokens", len(e.Data), len(e.Data[0].Embedding), e.Usage.PromptTokens)
		}
		want := providertest.Embedding("z", 16)
		for i, f := range e.Data[1].Embedding {
			if float32(f) != want[i] {
				t.Fatalf("vector[%d]: got %v, want %v", i, f, want[i])
			}
		}
	})
}
