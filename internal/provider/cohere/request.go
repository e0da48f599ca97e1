// Package cohere owns the adapter for Cohere's v2 API: OpenAI chat
// completions translated to and from Cohere's POST /v2/chat (its answer and
// its typed server-sent events), the model list (GET /v1/models) and rerank
// (POST /v2/rerank). Translation is pure; the key is a Bearer token that
// upstream/cred adds.
//
// Imported by wire (to register it) and tests only. It imports, of svc, only
// llm, llm/sse, apierr and provider, as every adapter.
package cohere

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
)

// Adapter speaks Cohere's v2 API. The base URL is the host root
// (https://api.cohere.com).
type Adapter struct {
	// now stamps the "created" of answers; tests fix it.
	now func() time.Time
}

// New returns the adapter.
func New() *Adapter { return &Adapter{now: time.Now} }

// chatRequest is Cohere's v2 chat request.
type chatRequest struct {
	Model            string          `json:"model"`
	Messages         []message       `json:"messages"`
	Tools            []tool          `json:"tools,omitempty"`
	ToolChoice       string          `json:"tool_choice,omitempty"`
	Stream           bool            `json:"stream,omitempty"`
	MaxTokens        *int            `json:"max_tokens,omitempty"`
	Temperature      *float64        `json:"temperature,omitempty"`
	P                *float64        `json:"p,omitempty"`
	StopSequences    []string        `json:"stop_sequences,omitempty"`
	Seed             *int64          `json:"seed,omitempty"`
	FrequencyPenalty *float64        `json:"frequency_penalty,omitempty"`
	PresencePenalty  *float64        `json:"presence_penalty,omitempty"`
	ResponseFormat   *responseFormat `json:"response_format,omitempty"`
}

// message is a Cohere v2 message. Content is a string or an array of parts.
type message struct {
	Role       string         `json:"role"`
	Content    any            `json:"content,omitempty"`
	ToolCalls  []llm.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	ToolPlan   string         `json:"tool_plan,omitempty"`
}

// tool is a Cohere v2 tool: OpenAI's without "strict".
type tool struct {
	Type     string       `json:"type"`
	Function toolFunction `json:"function"`
}

type toolFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type part struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

type responseFormat struct {
	Type       string          `json:"type"`
	JSONSchema json.RawMessage `json:"json_schema,omitempty"`
}

// NewChatRequest builds POST {base}/v2/chat from the caller's OpenAI request.
// What Cohere cannot express (n > 1, audio and file parts, the legacy
// function role) is refused with a 400 naming the field.
func (a *Adapter) NewChatRequest(ctx context.Context, t provider.Deployment, c provider.ChatCall) (*http.Request, error) {
	body, err := translate(c.Req, t.Model)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(t.BaseURL, "/")+"/v2/chat", bytes.NewReader(body))
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "bad_base_url", "the provider's base URL is invalid", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Req.Stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	return req, nil
}

func translate(r *llm.ChatRequest, model string) ([]byte, error) {
	out := chatRequest{
		Model:            model,
		Stream:           r.Stream,
		MaxTokens:        r.MaxTokens,
		Temperature:      r.Temperature,
		P:                r.TopP,
		StopSequences:    r.Stop,
		Seed:             r.Seed,
		FrequencyPenalty: r.FrequencyPenalty,
		PresencePenalty:  r.PresencePenalty,
	}
	for _, t := range r.Tools {
		out.Tools = append(out.Tools, tool{Type: "function", Function: toolFunction{
			Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters}})
	}
	if out.MaxTokens == nil {
		out.MaxTokens = r.MaxCompletionTokens
	}
	if r.N != nil && *r.N > 1 {
		return nil, apierr.BadParam("n", "n must be 1 for Cohere models")
	}
	for i, m := range r.Messages {
		cm, err := translateMessage(i, &m)
		if err != nil {
			return nil, err
		}
		out.Messages = append(out.Messages, cm)
	}
	if err := toolChoice(r.ToolChoice, &out); err != nil {
		return nil, err
	}
	rf, err := translateResponseFormat(r.ResponseFormat)
	if err != nil {
		return nil, err
	}
	out.ResponseFormat = rf
	b, err := json.Marshal(&out)
	if err != nil {
		return nil, apierr.Wrap(apierr.InvalidRequest, "invalid_request", "the request cannot be translated for Cohere", err)
	}
	return b, nil
}

func translateMessage(i int, m *llm.Message) (message, error) {
	out := message{Role: m.Role}
	switch m.Role {
	case "system", "developer":
		out.Role = "system"
	case "user", "assistant":
	case "tool":
		out.ToolCallID = m.ToolCallID
	default:
		return out, apierr.BadParam(fmt.Sprintf("messages[%d].role", i), "messages[%d].role %q is not supported for Cohere models; use tool messages", i, m.Role)
	}
	content, err := translateContent(i, m)
	if err != nil {
		return out, err
	}
	out.Content = content
	if m.Role == "assistant" && len(m.ToolCalls) > 0 {
		// Cohere carries an assistant's words beside its tool calls as the
		// tool plan.
		if text, ok := content.(string); ok {
			out.Content, out.ToolPlan = nil, text
		}
		for _, tc := range m.ToolCalls {
			tc.Index = nil
			if tc.Type == "" {
				tc.Type = "function"
			}
			out.ToolCalls = append(out.ToolCalls, tc)
		}
	}
	return out, nil
}

// translateContent returns a string, a []part, or nil (no content).
func translateContent(i int, m *llm.Message) (any, error) {
	c := &m.Content
	if !c.IsParts {
		if c.Text == "" && (c.Null || !c.Present || len(m.ToolCalls) > 0) {
			return nil, nil
		}
		return c.Text, nil
	}
	parts := make([]part, 0, len(c.Parts))
	for j, p := range c.Parts {
		switch p.Type {
		case "text":
			parts = append(parts, part{Type: "text", Text: p.Text})
		case "image_url":
			if m.Role != "user" {
				return nil, apierr.BadParam(fmt.Sprintf("messages[%d].content[%d]", i, j), "images are accepted in user messages only")
			}
			parts = append(parts, part{Type: "image_url", ImageURL: &imageURL{URL: p.ImageURL.URL, Detail: p.ImageURL.Detail}})
		case "refusal":
			parts = append(parts, part{Type: "text", Text: p.Refusal})
		default:
			return nil, apierr.BadParam(fmt.Sprintf("messages[%d].content[%d].type", i, j), "content parts of type %q are not supported for Cohere models", p.Type)
		}
	}
	if len(parts) == 0 {
		return nil, nil
	}
	return parts, nil
}

// toolChoice maps OpenAI's tool_choice: "required" and "none" have Cohere
// equivalents; a named function becomes REQUIRED with only that tool offered.
func toolChoice(raw json.RawMessage, out *chatRequest) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "auto":
		case "required":
			out.ToolChoice = "REQUIRED"
		case "none":
			out.ToolChoice = "NONE"
		default:
			return apierr.BadParam("tool_choice", "tool_choice %q is not one of auto, required, none", s)
		}
		return nil
	}
	var named struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &named); err != nil || named.Function.Name == "" {
		return apierr.BadParam("tool_choice", "tool_choice must be a string or {\"type\":\"function\",\"function\":{\"name\":…}}")
	}
	for _, t := range out.Tools {
		if t.Function.Name == named.Function.Name {
			out.Tools = []tool{t}
			out.ToolChoice = "REQUIRED"
			return nil
		}
	}
	return apierr.BadParam("tool_choice", "tool_choice names function %q, which is not among the tools", named.Function.Name)
}

func translateResponseFormat(raw json.RawMessage) (*responseFormat, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	if err := json.Unmarshal(raw, &rf); err != nil {
		return nil, apierr.BadParam("response_format", "response_format must be an object")
	}
	switch rf.Type {
	case "text", "":
		return nil, nil
	case "json_object":
		return &responseFormat{Type: "json_object"}, nil
	case "json_schema":
		out := &responseFormat{Type: "json_object"}
		if rf.JSONSchema != nil && len(rf.JSONSchema.Schema) > 0 {
			out.JSONSchema = rf.JSONSchema.Schema
		}
		return out, nil
	}
	return nil, apierr.BadParam("response_format.type", "response_format.type %q is not one of text, json_object, json_schema", rf.Type)
}

var (
	_ provider.ChatAdapter   = (*Adapter)(nil)
	_ provider.ModelLister   = (*Adapter)(nil)
	_ provider.RerankAdapter = (*Adapter)(nil)
)
