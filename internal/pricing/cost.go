package pricing

// Usage is the token usage of one request, counted as OpenAI counts it:
// PromptTokens is every token of the prompt and CompletionTokens every token
// generated, and the other counts are parts of those two.
type Usage struct {
	// PromptTokens counts every prompt token, cached or not
	// (usage.prompt_tokens).
	PromptTokens int64
	// CompletionTokens counts every generated token, reasoning included
	// (usage.completion_tokens).
	CompletionTokens int64
	// CachedPromptTokens is the part of PromptTokens read from the
	// provider's cache (usage.prompt_tokens_details.cached_tokens;
	// Anthropic's cache_read_input_tokens).
	CachedPromptTokens int64
	// CacheWriteTokens is the part of PromptTokens written to the provider's
	// cache (Anthropic's cache_creation_input_tokens). Anthropic's own
	// input_tokens leaves out both cache counts, so an adapter translating
	// its usage adds them to PromptTokens.
	CacheWriteTokens int64
	// ReasoningTokens is the part of CompletionTokens spent on reasoning
	// (usage.completion_tokens_details.reasoning_tokens).
	ReasoningTokens int64
}

// Cost returns what u costs at price p, in US dollars: cached prompt tokens
// at the cached-input price, cache-write tokens at the cache-write price,
// the rest of the prompt at the input price, reasoning tokens at the
// reasoning price and the rest of the completion at the output price.
//
// Counts below zero count as zero, and parts larger than their whole are
// charged in full while the rest of the whole counts as zero, so that an
// inconsistent usage report never yields a negative cost.
func (p Price) Cost(u Usage) float64 {
	prompt := max(u.PromptTokens, 0)
	cached := max(u.CachedPromptTokens, 0)
	written := max(u.CacheWriteTokens, 0)
	completion := max(u.CompletionTokens, 0)
	reasoning := max(u.ReasoningTokens, 0)

	uncached := max(prompt-cached-written, 0)
	answer := max(completion-reasoning, 0)
	return (float64(uncached)*p.Input +
		float64(cached)*p.CachedInput +
		float64(written)*p.CacheWrite +
		float64(answer)*p.Output +
		float64(reasoning)*p.Reasoning) / 1e6
}
