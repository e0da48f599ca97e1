package gemini

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
)

// The GenerateContentResponse, as much of it as svc reads. A streamed event
// has the same shape.
type (
	genResponse struct {
		Candidates     []candidate     `json:"candidates"`
		PromptFeedback *promptFeedback `json:"promptFeedback"`
		UsageMetadata  *usageMetadata  `json:"usageMetadata"`
		ModelVersion   string          `json:"modelVersion"`
		ResponseID     string          `json:"responseId"`
	}
	candidate struct {
		Content      content `json:"content"`
		FinishReason string  `json:"finishReason"`
		Index        int     `json:"index"`
	}
	promptFeedback struct {
		BlockReason        string `json:"blockReason"`
		BlockReasonMessage string `json:"blockReasonMessage"`
	}
	usageMetadata struct {
		PromptTokenCount        int64 `json:"promptTokenCount"`
		CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
		CachedContentTokenCount int64 `json:"cachedContentTokenCount"`
		ThoughtsTokenCount      int64 `json:"thoughtsTokenCount"`
		TotalTokenCount         int64 `json:"totalTokenCount"`
	}
)

// usage is u in OpenAI's shape: thoughts count as completion (and reasoning)
// tokens, cached content as cached prompt tokens.
func (u *usageMetadata) usage() llm.Usage {
	if u == nil {
		return llm.Usage{}
	}
	out := llm.Usage{
		PromptTokens:            u.PromptTokenCount,
		CompletionTokens:        u.CandidatesTokenCount + u.ThoughtsTokenCount,
		PromptTokensDetails:     &llm.PromptTokensDetails{CachedTokens: u.CachedContentTokenCount},
		CompletionTokensDetails: &llm.CompletionTokensDetails{ReasoningTokens: u.ThoughtsTokenCount},
	}
	out.TotalTokens = out.PromptTokens + out.CompletionTokens
	return out
}

// finishReason maps Gemini's finishReason; calls says whether the candidate
// called functions. An empty reason is "" (no finish yet).
func finishReason(r string, calls bool) string {
	switch r {
	case "":
		return ""
	case "MAX_TOKENS":
		return "length"
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE":
		return "content_filter"
	}
	if calls { // STOP, and MALFORMED_FUNCTION_CALL, OTHER, … with calls made
		return "tool_calls"
	}
	return "stop"
}

// blocked is the error for a prompt Gemini refused to answer.
func blocked(f *promptFeedback) *apierr.Error {
	msg := "the provider blocked the prompt (" + f.BlockReason + ")"
	if f.BlockReasonMessage != "" {
		msg += ": " + apierr.Redact(f.BlockReasonMessage)
	}
	return &apierr.Error{Kind: apierr.InvalidRequest, Code: "prompt_blocked", Message: msg}
}

// completionID is the OpenAI id for a response.
func completionID(responseID string) string {
	if responseID != "" {
		return "chatcmpl-" + responseID
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "chatcmpl-" + hex.EncodeToString(b[:])
}

// message turns a candidate's parts into text (thought parts skipped) and
// tool calls, numbered from next.
func message(parts []part, next int) (text string, calls []llm.ToolCall) {
	var sb strings.Builder
	for _, p := range parts {
		switch {
		case p.Thought:
		case p.FunctionCall != nil:
			calls = append(calls, toolCall(p.FunctionCall, p.ThoughtSignature, next+len(calls)))
		case p.Text != "":
			sb.WriteString(p.Text)
		}
	}
	return sb.String(), calls
}

// sigSep separates a tool call id from the thought signature Gemini attached
// to the call. Gemini 3 models reject a conversation whose function calls
// come back without their signatures, and OpenAI clients have nowhere to keep
// one but the id, which they echo in the assistant message and tool results.
const sigSep = "__thought__"

// splitCallID splits a tool call id made by toolCall into the id and the
// thought signature ("" when there is none).
func splitCallID(id string) (base, sig string) {
	base, sig, _ = strings.Cut(id, sigSep)
	return base, sig
}

// toolCall is an OpenAI tool call for fc, the index-th of its choice, with
// Gemini's thought signature (if any) carried in its id.
func toolCall(fc *functionCall, signature string, index int) llm.ToolCall {
	id := fc.ID
	if id == "" {
		id = "call_" + strconv.Itoa(index)
	}
	if signature != "" {
		id += sigSep + signature
	}
	args := "{}"
	if a, err := objectJSON(string(fc.Args)); err == nil {
		args = string(a)
	}
	return llm.ToolCall{ID: id, Type: "function", Function: llm.FunctionCall{Name: fc.Name, Arguments: args}}
}

// DecodeChat turns a GenerateContentResponse into an OpenAI chat completion,
// one choice per candidate.
func (a *Adapter) DecodeChat(body []byte) ([]byte, llm.Usage, string, error) {
	var g genResponse
	if err := json.Unmarshal(body, &g); err != nil {
		return nil, llm.Usage{}, "", apierr.Wrap(apierr.UpstreamError, "upstream_bad_response", "the provider's answer is not a valid GenerateContentResponse", err)
	}
	usage := g.UsageMetadata.usage()
	if len(g.Candidates) == 0 {
		if g.PromptFeedback != nil && g.PromptFeedback.BlockReason != "" {
			return nil, usage, g.ModelVersion, blocked(g.PromptFeedback)
		}
		return nil, usage, g.ModelVersion, apierr.New(apierr.UpstreamError, "upstream_bad_response", "the provider's answer has no candidates")
	}
	resp := llm.ChatResponse{
		ID: completionID(g.ResponseID), Object: "chat.completion", Created: time.Now().Unix(),
		Model: g.ModelVersion, Choices: make([]llm.Choice, 0, len(g.Candidates)), Usage: &usage,
	}
	for i, c := range g.Candidates {
		text, calls := message(c.Content.Parts, 0)
		m := llm.Message{Role: "assistant", Content: llm.TextContent(text), ToolCalls: calls}
		if text == "" && len(calls) > 0 {
			m.Content = llm.Content{Null: true, Present: true}
		}
		idx := c.Index
		if len(g.Candidates) > 1 && idx == 0 {
			idx = i
		}
		fr := finishReason(c.FinishReason, len(calls) > 0)
		if fr == "" {
			fr = finishReason("STOP", len(calls) > 0)
		}
		resp.Choices = append(resp.Choices, llm.Choice{Index: idx, Message: m, FinishReason: fr})
	}
	out, err := json.Marshal(&resp)
	if err != nil {
		return nil, usage, g.ModelVersion, apierr.Wrap(apierr.Internal, "encode_failed", "could not encode the completion", err)
	}
	return out, usage, g.ModelVersion, nil
}

// NewModelsRequest builds, for the Gemini API, GET {base}/v1beta/models; for
// Vertex AI, GET {vertex base}/v1beta1/publishers/google/models.
func (a *Adapter) NewModelsRequest(ctx context.Context, t provider.Deployment) (*http.Request, error) {
	var u string
	if a.vertex {
		base, err := vertexBase(t)
		if err != nil {
			return nil, err
		}
		u = base + "/v1beta1/publishers/google/models?pageSize=1000"
	} else {
		u = strings.TrimRight(orDefault(t.BaseURL, DefaultBaseURL), "/") + "/v1beta/models?pageSize=1000"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "bad_base_url", "the provider's base URL is invalid", err)
	}
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// DecodeModels reads the model names of a list ("models/gemini-2.5-flash" and
// "publishers/google/models/gemini-2.5-flash" are both "gemini-2.5-flash").
func (a *Adapter) DecodeModels(body []byte) ([]string, error) {
	var list struct {
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
		PublisherModels []struct {
			Name string `json:"name"`
		} `json:"publisherModels"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, apierr.Wrap(apierr.UpstreamError, "upstream_bad_response", "the provider's model list is not valid", err)
	}
	ids := make([]string, 0, len(list.Models)+len(list.PublisherModels))
	for _, m := range append(list.Models, list.PublisherModels...) {
		if i := strings.LastIndex(m.Name, "models/"); i >= 0 {
			m.Name = m.Name[i+len("models/"):]
		}
		if m.Name != "" {
			ids = append(ids, m.Name)
		}
	}
	return ids, nil
}
