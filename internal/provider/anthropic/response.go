package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
)

// messagesResponse is the part of a Messages API answer svc reads.
type messagesResponse struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	Model      string          `json:"model"`
	Content    []responseBlock `json:"content"`
	StopReason string          `json:"stop_reason"`
	Usage      usage           `json:"usage"`
}

type responseBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// usage is Anthropic's usage object. input_tokens excludes the tokens read
// from and written to the prompt cache. In message_delta events every field
// but output_tokens may be absent, hence the pointers.
type usage struct {
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
}

// merge sets in u the fields present in v.
func (u *usage) merge(v usage) {
	if v.InputTokens != nil {
		u.InputTokens = v.InputTokens
	}
	if v.OutputTokens != nil {
		u.OutputTokens = v.OutputTokens
	}
	if v.CacheCreationInputTokens != nil {
		u.CacheCreationInputTokens = v.CacheCreationInputTokens
	}
	if v.CacheReadInputTokens != nil {
		u.CacheReadInputTokens = v.CacheReadInputTokens
	}
}

func val(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// canonical is u in OpenAI's shape: prompt tokens include the cache reads
// (cached_tokens) and writes (cache_creation_tokens).
func (u *usage) canonical() llm.Usage {
	read, write := val(u.CacheReadInputTokens), val(u.CacheCreationInputTokens)
	out := llm.Usage{
		PromptTokens:        val(u.InputTokens) + read + write,
		CompletionTokens:    val(u.OutputTokens),
		PromptTokensDetails: &llm.PromptTokensDetails{CachedTokens: read, CacheWriteTokens: write},
	}
	out.TotalTokens = out.PromptTokens + out.CompletionTokens
	return out
}

// finishReason maps Anthropic's stop_reason to OpenAI's finish_reason.
func finishReason(stop string) string {
	switch stop {
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_use":
		return "tool_calls"
	case "refusal":
		return "content_filter"
	default: // end_turn, stop_sequence, pause_turn
		return "stop"
	}
}

func badResponse(err error) *apierr.Error {
	return apierr.Wrap(apierr.UpstreamError, "upstream_bad_response", "the provider's answer is not a valid Anthropic message", err)
}

// now is the clock for "created"; tests need not fix it.
var now = time.Now

// DecodeChat turns a Messages API answer into an OpenAI chat completion.
func (a *Adapter) DecodeChat(body []byte) ([]byte, llm.Usage, string, error) {
	var m messagesResponse
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, llm.Usage{}, "", badResponse(err)
	}
	if m.Type != "message" {
		return nil, llm.Usage{}, "", badResponse(nil)
	}
	u := m.Usage.canonical()
	msg := llm.Message{Role: "assistant"}
	var text strings.Builder
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			args := "{}"
			if len(b.Input) > 0 {
				args = string(compactJSON(b.Input))
			}
			msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: b.ID, Type: "function",
				Function: llm.FunctionCall{Name: b.Name, Arguments: args}})
		}
	}
	if text.Len() > 0 || len(msg.ToolCalls) == 0 {
		msg.Content = llm.TextContent(text.String())
	} else {
		msg.Content = llm.Content{Null: true, Present: true}
	}
	out := llm.ChatResponse{
		ID:      m.ID,
		Object:  "chat.completion",
		Created: now().Unix(),
		Model:   m.Model,
		Choices: []llm.Choice{{Index: 0, Message: msg, FinishReason: finishReason(m.StopReason)}},
		Usage:   &u,
	}
	b, err := json.Marshal(&out)
	if err != nil {
		return nil, llm.Usage{}, "", badResponse(err)
	}
	return b, u, m.Model, nil
}

// compactJSON is v without insignificant space, or v when it is not JSON.
func compactJSON(v []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return v
	}
	return buf.Bytes()
}

// NewModelsRequest builds GET {base}/v1/models, asking for the longest page.
func (a *Adapter) NewModelsRequest(ctx context.Context, t provider.Deployment) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(t.BaseURL, "/")+"/v1/models?limit=1000", nil)
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "bad_base_url", "the provider's base URL is invalid", err)
	}
	setHeaders(req.Header, t)
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// DecodeModels reads the ids of a model list.
func (a *Adapter) DecodeModels(body []byte) ([]string, error) {
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, apierr.Wrap(apierr.UpstreamError, "upstream_bad_response", "the provider's model list is not valid", err)
	}
	ids := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	return ids, nil
}
