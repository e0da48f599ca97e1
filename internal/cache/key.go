package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/svc-gateway/svc/internal/llm"
)

// keyVersion changes when the canonical form changes, so that entries made
// under an older form are never matched.
const keyVersion = 1

// ignoredExtra are request fields that do not change the answer: they are
// left out of the key.
var ignoredExtra = map[string]bool{
	"stream": true, "stream_options": true, "user": true, "metadata": true, "store": true,
	"service_tier": true, "prompt_cache_key": true, "safety_identifier": true,
}

// scopeInput is everything that must be equal for two requests to share an
// answer, except the last message: the partition and who shares it, the model, the
// conversation before the question, the tools and the sampling parameters.
type scopeInput struct {
	V                int                        `json:"v"`
	Namespace        string                     `json:"ns"`
	Sharing          string                     `json:"tenant"` // Request.Scope, or "*" in a shared namespace
	Model            string                     `json:"model"`
	History          []llm.Message              `json:"history"`
	Tools            []llm.Tool                 `json:"tools,omitempty"`
	ToolChoice       json.RawMessage            `json:"tool_choice,omitempty"`
	ResponseFormat   json.RawMessage            `json:"response_format,omitempty"`
	Temperature      *float64                   `json:"temperature,omitempty"`
	TopP             *float64                   `json:"top_p,omitempty"`
	MaxTokens        *int                       `json:"max_tokens,omitempty"`
	MaxCompletion    *int                       `json:"max_completion_tokens,omitempty"`
	N                *int                       `json:"n,omitempty"`
	Stop             llm.Stop                   `json:"stop,omitempty"`
	Seed             *int64                     `json:"seed,omitempty"`
	PresencePenalty  *float64                   `json:"presence_penalty,omitempty"`
	FrequencyPenalty *float64                   `json:"frequency_penalty,omitempty"`
	Parallel         *bool                      `json:"parallel_tool_calls,omitempty"`
	ReasoningEffort  string                     `json:"reasoning_effort,omitempty"`
	Extra            map[string]json.RawMessage `json:"extra,omitempty"`
}

// lookupKey is one request's identity in the cache.
type lookupKey struct {
	// Scope identifies the request without its last message (hex SHA-256).
	Scope string
	// Key identifies the whole request (hex SHA-256): the exact tiers' key.
	Key string
	// Query is the last message's text when it is a user message made only
	// of text; "" otherwise (no semantic lookup then).
	Query string
}

// makeKey computes the key of req in namespace ns for the callers of
// sharing (Request.Scope). The encoding
// is JSON with struct fields in declaration order and map keys sorted, raw
// JSON compacted: the same request always gives the same key.
func makeKey(req *llm.ChatRequest, ns, sharing string) (lookupKey, error) {
	in := scopeInput{
		V: keyVersion, Namespace: ns, Sharing: sharing, Model: req.Model,
		Tools: req.Tools, ToolChoice: compact(req.ToolChoice), ResponseFormat: compact(req.ResponseFormat),
		Temperature: req.Temperature, TopP: req.TopP, MaxTokens: req.MaxTokens, MaxCompletion: req.MaxCompletionTokens,
		N: req.N, Stop: req.Stop, Seed: req.Seed, PresencePenalty: req.PresencePenalty, FrequencyPenalty: req.FrequencyPenalty,
		Parallel: req.ParallelToolCalls, ReasoningEffort: req.ReasoningEffort,
	}
	for k, v := range req.Extra {
		if ignoredExtra[k] {
			continue
		}
		if in.Extra == nil {
			in.Extra = make(map[string]json.RawMessage, len(req.Extra))
		}
		in.Extra[k] = compact(v)
	}
	msgs := req.Messages
	var last *llm.Message
	if len(msgs) > 0 {
		last = &msgs[len(msgs)-1]
		in.History = msgs[:len(msgs)-1]
	}
	scope, err := json.Marshal(&in)
	if err != nil {
		return lookupKey{}, err
	}
	sh := sha256.Sum256(scope)
	k := lookupKey{Scope: hex.EncodeToString(sh[:])}
	h := sha256.New()
	h.Write(sh[:])
	if last != nil {
		lb, err := json.Marshal(last)
		if err != nil {
			return lookupKey{}, err
		}
		h.Write(lb)
		k.Query = queryText(last)
	}
	k.Key = hex.EncodeToString(h.Sum(nil))
	return k, nil
}

// queryText is m's text when m is a user message of text only.
func queryText(m *llm.Message) string {
	if m.Role != "user" || len(m.ToolCalls) > 0 {
		return ""
	}
	if !m.Content.IsParts {
		return strings.TrimSpace(m.Content.Text)
	}
	var b strings.Builder
	for _, p := range m.Content.Parts {
		if p.Type != "text" {
			return "" // an image or audio part: the text alone does not say what is asked
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.Text)
	}
	return strings.TrimSpace(b.String())
}

// compact returns raw JSON without insignificant whitespace (nil stays nil).
func compact(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
