package limit

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/tokens"
)

func TestEstimate(t *testing.T) {
	mt, mct := 100, 50
	tests := []struct {
		name string
		x    *pipeline.Exchange
		want estimated
	}{
		{"chat", chatExchange(nil, 10, 0), estimated{10, 0}},
		{"chat max_tokens", chatExchange(nil, 10, 7), estimated{10, 7}},
		{"chat max_completion_tokens wins", &pipeline.Exchange{Chat: &llm.ChatRequest{
			MaxTokens: &mt, MaxCompletionTokens: &mct,
			Messages: []llm.Message{{Role: "user", Content: llm.Content{IsParts: true, Present: true, Parts: []llm.Part{{Type: "text", Text: "12345678"}, {Type: "image_url"}}}}},
		}}, estimated{2, 50}},
		{"body", &pipeline.Exchange{Body: []byte(`{"input":"abcdefgh","max_tokens":9}`)}, estimated{9, 9}},
		{"not json", &pipeline.Exchange{Body: []byte("--boundary\r\nContent-Disposition: form-data")}, estimated{0, 0}},
	}
	l := newTest(nil, nil, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := l.estimate(tt.x); got != tt.want {
				t.Errorf("estimate = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestTokenizerEstimate: by default the prompt is counted with OpenAI's
// tokenizer for OpenAI models, and from above for others, never at a
// quarter of the bytes (which let a provider billing four times more
// overshoot a cap by 28%).
func TestTokenizerEstimate(t *testing.T) {
	l := New(nil, nil, Options{})
	text := strings.Repeat("数据 🙂 x=42; ", 200) // 2,800 bytes: CJK, emoji, code
	chat := func(model string) *pipeline.Exchange {
		return &pipeline.Exchange{UpstreamModel: model, Chat: &llm.ChatRequest{Model: model,
			Messages: []llm.Message{{Role: "user", Content: llm.TextContent(text)}}}}
	}
	quarter := int64(len(text)) / 4
	openai, other := l.estimate(chat("gpt-4o-mini")), l.estimate(chat("claude-sonnet-4-5"))
	if want := tokens.ChatPrompt("gpt-4o-mini", chat("gpt-4o-mini").Chat); openai.prompt != want {
		t.Errorf("gpt-4o-mini prompt estimate = %d, want the tokenizer's %d", openai.prompt, want)
	}
	if openai.prompt <= quarter || other.prompt < openai.prompt {
		t.Errorf("estimates: openai %d, other %d; want both above a quarter of the bytes (%d), the other model's bound at least OpenAI's count",
			openai.prompt, other.prompt, quarter)
	}
	body := &pipeline.Exchange{Model: "text-embedding-3-small", Body: []byte(`{"model":"text-embedding-3-small","input":"` + text + `"}`)}
	if got := l.estimate(body).prompt; got != tokens.Body("text-embedding-3-small", body.Body) {
		t.Errorf("body estimate = %d, want the tokenizer's", got)
	}
}

// TestAbsurdEstimateNeverFailsOpen: an estimate that overflowed used to
// make the store call fail, and rate limits failed open: 30 of 30
// requests passed an rpm of 5. Each part is clamped now.
func TestAbsurdEstimateNeverFailsOpen(t *testing.T) {
	l := newTest(newMemKV(t), testPrices(t), Options{Log: slog.New(slog.DiscardHandler)})
	p := &principal{Kind: identity.VirtualKey, ID: "k", RPMLimit: 5}
	huge := int(^uint(0) >> 1)
	admitted := 0
	for range 30 {
		x := chatExchange(p, 10, 0)
		x.Chat.MaxTokens = &huge
		if _, err := pipeline.Chain(answer(1, 1), l.Stage(testLimits))(t.Context(), x); err == nil {
			admitted++
		}
	}
	if admitted != 5 {
		t.Errorf("admitted %d of 30 requests with max_tokens %d on rpm 5, want 5", admitted, huge)
	}
	body := &pipeline.Exchange{Body: []byte(`{"max_tokens": 9223372036854775807, "prompt": "x"}`)}
	if e := l.estimate(body); e.tokens() <= 0 || e.completion != maxEstimate {
		t.Errorf("estimate of a body with max_tokens at int64's maximum = %+v, want the completion clamped to %d", e, int64(maxEstimate))
	}
	body.Body = []byte(`{"max_tokens": 1e300}`)
	if e := l.estimate(body); e.completion != maxEstimate {
		t.Errorf("estimate of max_tokens 1e300 = %+v, want the completion clamped", e)
	}
}
