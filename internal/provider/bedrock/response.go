package bedrock

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
)

// converseResponse is the part of a Converse answer svc reads.
type converseResponse struct {
	Output struct {
		Message *struct {
			Role    string `json:"role"`
			Content []struct {
				Text    *string `json:"text"`
				ToolUse *struct {
					ToolUseID string          `json:"toolUseId"`
					Name      string          `json:"name"`
					Input     json.RawMessage `json:"input"`
				} `json:"toolUse"`
			} `json:"content"`
		} `json:"message"`
	} `json:"output"`
	StopReason string    `json:"stopReason"`
	Usage      *awsUsage `json:"usage"`
}

// awsUsage is Converse's TokenUsage.
type awsUsage struct {
	InputTokens           int64 `json:"inputTokens"`
	OutputTokens          int64 `json:"outputTokens"`
	TotalTokens           int64 `json:"totalTokens"`
	CacheReadInputTokens  int64 `json:"cacheReadInputTokens"`
	CacheWriteInputTokens int64 `json:"cacheWriteInputTokens"`
}

// usage is u in OpenAI's terms: the prompt counts every input token, cached
// (read) and cache-written ones included.
func (u *awsUsage) usage() llm.Usage {
	if u == nil {
		return llm.Usage{}
	}
	out := llm.Usage{
		PromptTokens:     u.InputTokens + u.CacheReadInputTokens + u.CacheWriteInputTokens,
		CompletionTokens: u.OutputTokens,
	}
	out.TotalTokens = out.PromptTokens + out.CompletionTokens
	if u.CacheReadInputTokens > 0 || u.CacheWriteInputTokens > 0 {
		out.PromptTokensDetails = &llm.PromptTokensDetails{CachedTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheWriteInputTokens}
	}
	return out
}

// finishReason maps a Converse stopReason to OpenAI's finish_reason.
func finishReason(stop string) string {
	switch stop {
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_use":
		return "tool_calls"
	case "guardrail_intervened", "content_filtered":
		return "content_filter"
	}
	return "stop" // end_turn, stop_sequence and any new reason
}

// DecodeChat turns a Converse answer into an OpenAI chat completion. The
// answer does not name the model, so the completion's model is empty: callers
// that know it use DecodeChatFor.
func (a *Adapter) DecodeChat(body []byte) ([]byte, llm.Usage, string, error) {
	return a.DecodeChatFor("", body)
}

// DecodeChatFor is DecodeChat with the model id the request was sent to,
// reported as the completion's model.
func (a *Adapter) DecodeChatFor(model string, body []byte) ([]byte, llm.Usage, string, error) {
	var r converseResponse
	if err := json.Unmarshal(body, &r); err != nil || r.Output.Message == nil {
		return nil, llm.Usage{}, "", apierr.Wrap(apierr.UpstreamError, "upstream_bad_response", "the provider's answer is not a valid Converse response", err)
	}
	msg := llm.Message{Role: "assistant"}
	var text strings.Builder
	hasText := false
	for _, b := range r.Output.Message.Content {
		switch {
		case b.Text != nil:
			text.WriteString(*b.Text)
			hasText = true
		case b.ToolUse != nil:
			args := []byte("{}")
			if in := bytes.TrimSpace(b.ToolUse.Input); len(in) > 0 {
				var buf bytes.Buffer
				if err := json.Compact(&buf, in); err == nil {
					args = buf.Bytes()
				}
			}
			msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{
				ID: b.ToolUse.ToolUseID, Type: "function",
				Function: llm.FunctionCall{Name: b.ToolUse.Name, Arguments: string(args)},
			})
		}
		// reasoningContent, citations, images: not relayed.
	}
	if hasText || len(msg.ToolCalls) == 0 {
		msg.Content = llm.TextContent(text.String())
	} else {
		msg.Content = llm.Content{Null: true, Present: true}
	}
	u := r.Usage.usage()
	resp := llm.ChatResponse{
		ID: completionID(), Object: "chat.completion", Created: time.Now().Unix(), Model: model,
		Choices: []llm.Choice{{Index: 0, Message: msg, FinishReason: finishReason(r.StopReason)}},
		Usage:   &u,
	}
	out, err := json.Marshal(&resp)
	if err != nil {
		return nil, llm.Usage{}, "", apierr.Wrap(apierr.Internal, "encode_failed", "the completion could not be encoded", err)
	}
	return out, u, model, nil
}

// completionID returns a fresh "chatcmpl-…" id: Converse answers have none.
func completionID() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	var b [9 + 24]byte
	copy(b[:], "chatcmpl-")
	for i := 9; i < len(b); i++ {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return string(b[:])
}
