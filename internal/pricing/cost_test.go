package pricing

import (
	"math"
	"testing"
)

func TestCost(t *testing.T) {
	openai := Price{Input: 2.5, Output: 10, CachedInput: 1.25, CacheWrite: 2.5, Reasoning: 10}
	anthropic := Price{Input: 3, Output: 15, CachedInput: 0.3, CacheWrite: 3.75, Reasoning: 15}
	reasoner := Price{Input: 1, Output: 8, CachedInput: 1, CacheWrite: 1, Reasoning: 12}
	embedding := Price{Input: 0.02, CachedInput: 0.02, CacheWrite: 0.02, Mode: ModeEmbedding}
	tests := []struct {
		name  string
		price Price
		usage Usage
		want  float64
	}{
		{"nothing", openai, Usage{}, 0},
		{"prompt and completion", openai, Usage{PromptTokens: 1000, CompletionTokens: 500}, (1000*2.5 + 500*10) / 1e6},
		{"cached prompt", openai, Usage{PromptTokens: 1000, CachedPromptTokens: 400}, (600*2.5 + 400*1.25) / 1e6},
		{"all cached", openai, Usage{PromptTokens: 1000, CachedPromptTokens: 1000}, 1000 * 1.25 / 1e6},
		{"reasoning at its own price", reasoner, Usage{PromptTokens: 100, CompletionTokens: 1000, ReasoningTokens: 300}, (100*1 + 700*8 + 300*12) / 1e6},
		{"reasoning at the output price", openai, Usage{CompletionTokens: 1000, ReasoningTokens: 300}, 1000 * 10 / 1e6},
		{
			"cache read and write",
			anthropic,
			Usage{PromptTokens: 10000, CachedPromptTokens: 6000, CacheWriteTokens: 3000, CompletionTokens: 200},
			(1000*3 + 6000*0.3 + 3000*3.75 + 200*15) / 1e6,
		},
		{"embedding", embedding, Usage{PromptTokens: 1_000_000}, 0.02},
		{"a billion tokens", openai, Usage{PromptTokens: 1e9, CompletionTokens: 1e9}, 1000*2.5 + 1000*10},
		{"cached above prompt", openai, Usage{PromptTokens: 100, CachedPromptTokens: 200}, 200 * 1.25 / 1e6},
		{"reasoning above completion", reasoner, Usage{CompletionTokens: 100, ReasoningTokens: 200}, 200 * 12 / 1e6},
		{"negative counts", openai, Usage{PromptTokens: -5, CompletionTokens: -5, CachedPromptTokens: -1, CacheWriteTokens: -1, ReasoningTokens: -1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.price.Cost(tt.usage)
			if math.Abs(got-tt.want) > 1e-12*math.Max(1, math.Abs(tt.want)) {
				t.Errorf("got %.12g, want %.12g", got, tt.want)
			}
		})
	}
}

func TestCostWithDefaultTable(t *testing.T) {
	tests := []struct {
		provider, model string
		usage           Usage
		want            float64
	}{
		// gpt-4o: $2.50 in, $1.25 cached, $10 out per million.
		{"openai", "gpt-4o-2024-08-06", Usage{PromptTokens: 2000, CachedPromptTokens: 1024, CompletionTokens: 300}, (976*2.5 + 1024*1.25 + 300*10) / 1e6},
		// claude-sonnet-4-5: $3 in, $0.30 cache read, $3.75 cache write, $15 out.
		{"anthropic", "claude-sonnet-4-5-20250929", Usage{PromptTokens: 5000, CachedPromptTokens: 3000, CacheWriteTokens: 1500, CompletionTokens: 100}, (500*3 + 3000*0.3 + 1500*3.75 + 100*15) / 1e6},
		// o4-mini: reasoning tokens are billed as output.
		{"openai", "o4-mini", Usage{PromptTokens: 100, CompletionTokens: 1000, ReasoningTokens: 800}, (100*1.1 + 1000*4.4) / 1e6},
	}
	for _, tt := range tests {
		p, ok := Default().Lookup(tt.provider, tt.model)
		if !ok {
			t.Fatalf("Lookup(%q, %q): got no price", tt.provider, tt.model)
		}
		if got := p.Cost(tt.usage); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s/%s: got %.12g, want %.12g", tt.provider, tt.model, got, tt.want)
		}
	}
}
