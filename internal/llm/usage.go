package llm

// Usage is token usage in OpenAI's shape. Cached tokens are a subset of the
// prompt tokens and reasoning tokens a subset of the completion tokens.
type Usage struct {
	PromptTokens            int64                    `json:"prompt_tokens"`
	CompletionTokens        int64                    `json:"completion_tokens"`
	TotalTokens             int64                    `json:"total_tokens"`
	PromptTokensDetails     *PromptTokensDetails     `json:"prompt_tokens_details,omitempty"`
	CompletionTokensDetails *CompletionTokensDetails `json:"completion_tokens_details,omitempty"`
}

// PromptTokensDetails breaks down prompt tokens.
type PromptTokensDetails struct {
	CachedTokens int64 `json:"cached_tokens"`
	// CacheWriteTokens are prompt tokens written to the provider's prompt cache
	// (billed differently by some providers). Not part of OpenAI's schema.
	CacheWriteTokens int64 `json:"cache_creation_tokens,omitempty"`
	AudioTokens      int64 `json:"audio_tokens,omitempty"`
}

// CompletionTokensDetails breaks down completion tokens.
type CompletionTokensDetails struct {
	ReasoningTokens int64 `json:"reasoning_tokens"`
	AudioTokens     int64 `json:"audio_tokens,omitempty"`
}

// Cached is the number of cached prompt tokens.
func (u *Usage) Cached() int64 {
	if u == nil || u.PromptTokensDetails == nil {
		return 0
	}
	return u.PromptTokensDetails.CachedTokens
}

// CacheWrite is the number of prompt tokens written to the provider's cache.
func (u *Usage) CacheWrite() int64 {
	if u == nil || u.PromptTokensDetails == nil {
		return 0
	}
	return u.PromptTokensDetails.CacheWriteTokens
}

// Reasoning is the number of reasoning tokens.
func (u *Usage) Reasoning() int64 {
	if u == nil || u.CompletionTokensDetails == nil {
		return 0
	}
	return u.CompletionTokensDetails.ReasoningTokens
}

// Total returns TotalTokens, or prompt+completion when the provider left it 0.
func (u *Usage) Total() int64 {
	if u == nil {
		return 0
	}
	if u.TotalTokens > 0 {
		return u.TotalTokens
	}
	return u.PromptTokens + u.CompletionTokens
}
