package cohere

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
)

// chatResponse is Cohere's v2 chat answer.
type chatResponse struct {
	ID           string `json:"id"`
	FinishReason string `json:"finish_reason"`
	Message      struct {
		Role    string `json:"role"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		ToolCalls []llm.ToolCall `json:"tool_calls"`
	} `json:"message"`
	Usage *usage `json:"usage"`
}

// usage is Cohere's usage: billed units and, when known, the model's tokens.
type usage struct {
	BilledUnits *tokenCounts `json:"billed_units"`
	Tokens      *tokenCounts `json:"tokens"`
}

type tokenCounts struct {
	InputTokens  *float64 `json:"input_tokens"`
	OutputTokens *float64 `json:"output_tokens"`
}

// canonical is u in OpenAI's shape: the model's tokens, else the billed ones.
func (u *usage) canonical() llm.Usage {
	if u == nil {
		return llm.Usage{}
	}
	pick := func(get func(*tokenCounts) *float64) int64 {
		for _, c := range []*tokenCounts{u.Tokens, u.BilledUnits} {
			if c != nil {
				if v := get(c); v != nil {
					return int64(*v)
				}
			}
		}
		return 0
	}
	var out llm.Usage
	out.PromptTokens = pick(func(c *tokenCounts) *float64 { return c.InputTokens })
	out.CompletionTokens = pick(func(c *tokenCounts) *float64 { return c.OutputTokens })
	out.TotalTokens = out.PromptTokens + out.CompletionTokens
	return out
}

// finishReason maps Cohere's finish reason to OpenAI's. ERROR (and the v1
// ERROR_* reasons) is the caller's to turn into an error.
func finishReason(r string) (string, bool) {
	switch r {
	case "COMPLETE", "STOP_SEQUENCE", "":
		return "stop", true
	case "MAX_TOKENS":
		return "length", true
	case "TOOL_CALL":
		return "tool_calls", true
	}
	if strings.HasPrefix(r, "ERROR") {
		return "", false
	}
	return "stop", true
}

func generationFailed(reason string) *apierr.Error {
	return apierr.Newf(apierr.UpstreamError, "upstream_generation_failed", "cohere could not complete the generation (finish_reason %s)", reason)
}

// DecodeChat turns Cohere's answer into an OpenAI chat completion. Cohere's
// answer names no model: the model returned, and the body's, is "".
func (a *Adapter) DecodeChat(body []byte) ([]byte, llm.Usage, string, error) {
	return a.DecodeChatFor("", body)
}

// DecodeChatFor is DecodeChat naming model in the answer: Cohere's answers do
// not name the model, so the caller passes the one it called.
func (a *Adapter) DecodeChatFor(model string, body []byte) ([]byte, llm.Usage, string, error) {
	var r chatResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, llm.Usage{}, "", apierr.Wrap(apierr.UpstreamError, "upstream_bad_response", "the provider's answer is not a valid Cohere chat response", err)
	}
	u := r.Usage.canonical()
	fr, ok := finishReason(r.FinishReason)
	if !ok {
		return nil, u, "", generationFailed(r.FinishReason)
	}
	var text strings.Builder
	for _, c := range r.Message.Content {
		if c.Type == "text" || c.Type == "" {
			text.WriteString(c.Text)
		}
	}
	msg := llm.Message{Role: "assistant", Content: llm.TextContent(text.String())}
	if len(r.Message.ToolCalls) > 0 {
		for _, tc := range r.Message.ToolCalls {
			tc.Index = nil
			if tc.Type == "" {
				tc.Type = "function"
			}
			msg.ToolCalls = append(msg.ToolCalls, tc)
		}
		if text.Len() == 0 {
			msg.Content = llm.Content{Null: true, Present: true}
		}
	}
	out := llm.ChatResponse{
		ID:      r.ID,
		Object:  "chat.completion",
		Created: a.now().Unix(),
		Model:   model,
		Choices: []llm.Choice{{Index: 0, Message: msg, FinishReason: fr}},
		Usage:   &u,
	}
	b, err := json.Marshal(&out)
	if err != nil {
		return nil, u, "", apierr.Wrap(apierr.Internal, "encode_failed", "could not encode the chat completion", err)
	}
	return b, u, model, nil
}

// NewModelsRequest builds GET {base}/v1/models.
func (a *Adapter) NewModelsRequest(ctx context.Context, t provider.Deployment) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(t.BaseURL, "/")+"/v1/models", nil)
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "bad_base_url", "the provider's base URL is invalid", err)
	}
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// DecodeModels reads the names of Cohere's model list.
func (a *Adapter) DecodeModels(body []byte) ([]string, error) {
	var list struct {
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, apierr.Wrap(apierr.UpstreamError, "upstream_bad_response", "the provider's model list is not valid", err)
	}
	names := make([]string, 0, len(list.Models))
	for _, m := range list.Models {
		if m.Name != "" {
			names = append(names, m.Name)
		}
	}
	return names, nil
}
