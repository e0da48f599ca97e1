// Package bedrock is the adapter for the Amazon Bedrock Runtime Converse API
// (POST /model/{modelId}/converse and /converse-stream): it translates svc's
// OpenAI-shaped chat requests into Converse requests, and Converse answers,
// event streams (application/vnd.amazon.eventstream) and errors back into
// OpenAI chat completions, chunks and apierr errors. It is pure translation:
// credentials (SigV4 or a Bedrock API key) are applied by upstream/cred.
//
// Imported by wire (to register it) and tests only. Of svc it imports only
// llm, llm/sse, apierr and provider (a test enforces it); of third parties,
// the AWS event stream decoder.
package bedrock

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
)

// Adapter speaks the Bedrock Runtime Converse API.
type Adapter struct{}

// New returns the adapter.
func New() *Adapter { return &Adapter{} }

// converseRequest is the body of Converse and ConverseStream.
type converseRequest struct {
	Messages        []message        `json:"messages"`
	System          []systemBlock    `json:"system,omitempty"`
	InferenceConfig *inferenceConfig `json:"inferenceConfig,omitempty"`
	ToolConfig      *toolConfig      `json:"toolConfig,omitempty"`
}

type systemBlock struct {
	Text string `json:"text"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// block is one ContentBlock: exactly one field is set.
type block struct {
	Text       *string     `json:"text,omitempty"`
	Image      *image      `json:"image,omitempty"`
	Document   *document   `json:"document,omitempty"`
	ToolUse    *toolUse    `json:"toolUse,omitempty"`
	ToolResult *toolResult `json:"toolResult,omitempty"`
}

type source struct {
	Bytes string `json:"bytes"` // base64, as the JSON protocol carries blobs
}

type image struct {
	Format string `json:"format"`
	Source source `json:"source"`
}

type document struct {
	Format string `json:"format"`
	Name   string `json:"name"`
	Source source `json:"source"`
}

type toolUse struct {
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

type toolResult struct {
	ToolUseID string              `json:"toolUseId"`
	Content   []toolResultContent `json:"content"`
}

type toolResultContent struct {
	Text *string         `json:"text,omitempty"`
	JSON json.RawMessage `json:"json,omitempty"`
}

type inferenceConfig struct {
	MaxTokens     *int     `json:"maxTokens,omitempty"`
	Temperature   *float64 `json:"temperature,omitempty"`
	TopP          *float64 `json:"topP,omitempty"`
	StopSequences []string `json:"stopSequences,omitempty"`
}

type toolConfig struct {
	Tools      []toolEntry     `json:"tools"`
	ToolChoice json.RawMessage `json:"toolChoice,omitempty"`
}

type toolEntry struct {
	ToolSpec toolSpec `json:"toolSpec"`
}

type toolSpec struct {
	Name        string      `json:"name"`
	Description string      `json:"description,omitempty"`
	InputSchema inputSchema `json:"inputSchema"`
}

type inputSchema struct {
	JSON json.RawMessage `json:"json"`
}

// BaseURL is the Bedrock Runtime endpoint of t: its BaseURL when set, else
// the regional endpoint.
func BaseURL(t provider.Deployment) (string, error) {
	if t.BaseURL != "" {
		return strings.TrimRight(t.BaseURL, "/"), nil
	}
	if t.Region == "" {
		return "", apierr.New(apierr.Unavailable, "provider_not_configured",
			"provider bedrock has no region: set BEDROCK_REGION (or BEDROCK_API_BASE)")
	}
	return "https://bedrock-runtime." + t.Region + ".amazonaws.com", nil
}

// NewChatRequest builds POST {base}/model/{modelId}/converse (or
// /converse-stream for a stream) with the request translated to Converse.
func (a *Adapter) NewChatRequest(ctx context.Context, t provider.Deployment, c provider.ChatCall) (*http.Request, error) {
	base, err := BaseURL(t)
	if err != nil {
		return nil, err
	}
	body, err := Translate(c.Req)
	if err != nil {
		return nil, err
	}
	op := "/converse"
	if c.Req.Stream {
		op = "/converse-stream"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/model/"+escapeModelID(t.Model)+op, bytes.NewReader(body))
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "bad_base_url", "the provider's base URL is invalid", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Req.Stream {
		req.Header.Set("Accept", "application/vnd.amazon.eventstream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	return req, nil
}

// escapeModelID percent-encodes every byte of a model id or ARN but the
// unreserved ones, as the AWS SDKs do for a path label (':' and '/' included).
func escapeModelID(id string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// Translate returns the Converse body for r.
func Translate(r *llm.ChatRequest) ([]byte, error) {
	if r.N != nil && *r.N > 1 {
		return nil, apierr.BadParam("n", "bedrock does not support n greater than 1")
	}
	var out converseRequest
	for i, m := range r.Messages {
		switch m.Role {
		case "system", "developer":
			for _, t := range texts(m.Content) {
				out.System = append(out.System, systemBlock{Text: t})
			}
		case "user":
			blocks, err := userBlocks(i, m.Content)
			if err != nil {
				return nil, err
			}
			out.Messages = appendTurn(out.Messages, "user", blocks)
		case "assistant":
			blocks, err := assistantBlocks(i, m)
			if err != nil {
				return nil, err
			}
			out.Messages = appendTurn(out.Messages, "assistant", blocks)
		case "tool":
			if m.ToolCallID == "" {
				return nil, apierr.BadParam(fmt.Sprintf("messages[%d].tool_call_id", i), "messages[%d].tool_call_id is required for role tool", i)
			}
			text := m.Content.String()
			var content toolResultContent
			if trimmed := bytes.TrimSpace([]byte(text)); len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed) {
				content.JSON = trimmed
			} else {
				content.Text = &text
			}
			b := block{ToolResult: &toolResult{ToolUseID: m.ToolCallID, Content: []toolResultContent{content}}}
			out.Messages = appendTurn(out.Messages, "user", []block{b})
		default:
			return nil, apierr.BadParam(fmt.Sprintf("messages[%d].role", i), "messages[%d].role %q is not supported by bedrock", i, m.Role)
		}
	}
	if len(out.Messages) == 0 {
		return nil, apierr.BadParam("messages", "bedrock needs at least one user or assistant message")
	}
	var ic inferenceConfig
	ic.MaxTokens = r.MaxTokens
	if r.MaxCompletionTokens != nil {
		ic.MaxTokens = r.MaxCompletionTokens
	}
	ic.Temperature, ic.TopP, ic.StopSequences = r.Temperature, r.TopP, r.Stop
	if ic.MaxTokens != nil || ic.Temperature != nil || ic.TopP != nil || len(ic.StopSequences) > 0 {
		out.InferenceConfig = &ic
	}
	tc, err := tools(r)
	if err != nil {
		return nil, err
	}
	out.ToolConfig = tc
	b, err := json.Marshal(&out)
	if err != nil {
		return nil, apierr.Wrap(apierr.InvalidRequest, "invalid_request", "the request cannot be translated for bedrock", err)
	}
	return b, nil
}

// appendTurn adds blocks as a turn of role, merged into the last turn when it
// has the same role (Converse wants the roles to alternate).
func appendTurn(msgs []message, role string, blocks []block) []message {
	if len(blocks) == 0 {
		return msgs
	}
	if n := len(msgs); n > 0 && msgs[n-1].Role == role {
		msgs[n-1].Content = append(msgs[n-1].Content, blocks...)
		return msgs
	}
	return append(msgs, message{Role: role, Content: blocks})
}

// texts returns the texts of a content: the string, or each text part.
func texts(c llm.Content) []string {
	if !c.IsParts {
		if c.Text == "" {
			return nil
		}
		return []string{c.Text}
	}
	var out []string
	for _, p := range c.Parts {
		if p.Type == "text" && p.Text != "" {
			out = append(out, p.Text)
		}
	}
	return out
}

func textBlock(s string) block { return block{Text: &s} }

func userBlocks(i int, c llm.Content) ([]block, error) {
	if !c.IsParts {
		return []block{textBlock(c.Text)}, nil
	}
	var out []block
	for j, p := range c.Parts {
		param := fmt.Sprintf("messages[%d].content[%d]", i, j)
		switch p.Type {
		case "text":
			out = append(out, textBlock(p.Text))
		case "image_url":
			mime, data, ok := dataURI(p.ImageURL.URL)
			if !ok {
				return nil, apierr.BadParam(param+".image_url", "%s.image_url: bedrock needs the image's bytes: send a base64 data URI (data:image/png;base64,…), not a URL", param)
			}
			format, ok := imageFormats[mime]
			if !ok {
				return nil, apierr.BadParam(param+".image_url", "%s.image_url: bedrock accepts png, jpeg, gif and webp images, not %q", param, mime)
			}
			out = append(out, block{Image: &image{Format: format, Source: source{Bytes: data}}})
		case "file":
			if p.File == nil || p.File.FileData == "" {
				return nil, apierr.BadParam(param+".file", "%s.file: bedrock needs the file's bytes in file_data (a base64 data URI); file ids are not supported", param)
			}
			mime, data, ok := dataURI(p.File.FileData)
			if !ok || mime != "application/pdf" {
				return nil, apierr.BadParam(param+".file", "%s.file.file_data must be a base64 data URI of a PDF (data:application/pdf;base64,…)", param)
			}
			out = append(out, block{Document: &document{Format: "pdf", Name: documentName(p.File.Filename, j), Source: source{Bytes: data}}})
		default:
			return nil, apierr.BadParam(param+".type", "%s.type %q is not supported by bedrock", param, p.Type)
		}
	}
	return out, nil
}

var imageFormats = map[string]string{
	"image/png": "png", "image/jpeg": "jpeg", "image/jpg": "jpeg", "image/gif": "gif", "image/webp": "webp",
}

// dataURI splits "data:<mime>;base64,<data>".
func dataURI(s string) (mime, data string, ok bool) {
	rest, ok := strings.CutPrefix(s, "data:")
	if !ok {
		return "", "", false
	}
	meta, data, ok := strings.Cut(rest, ",")
	if !ok || data == "" {
		return "", "", false
	}
	mime, enc, _ := strings.Cut(meta, ";")
	if !strings.EqualFold(enc, "base64") && !strings.HasSuffix(strings.ToLower(meta), ";base64") {
		return "", "", false
	}
	return strings.ToLower(mime), data, true
}

// documentName makes a file name acceptable to Converse: alphanumerics,
// single spaces, hyphens, parentheses and square brackets.
func documentName(filename string, j int) string {
	if k := strings.LastIndexByte(filename, '.'); k > 0 {
		filename = filename[:k]
	}
	var b strings.Builder
	space := false
	for _, r := range filename {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '(', r == ')', r == '[', r == ']':
			b.WriteRune(r)
			space = false
		case !space && b.Len() > 0:
			b.WriteByte(' ')
			space = true
		}
	}
	name := strings.TrimSpace(b.String())
	if name == "" {
		name = fmt.Sprintf("document-%d", j+1)
	}
	return name
}

func assistantBlocks(i int, m llm.Message) ([]block, error) {
	var out []block
	for _, t := range texts(m.Content) {
		out = append(out, textBlock(t))
	}
	for j, tc := range m.ToolCalls {
		input := json.RawMessage(`{}`)
		if args := strings.TrimSpace(tc.Function.Arguments); args != "" {
			if !json.Valid([]byte(args)) {
				return nil, apierr.BadParam(fmt.Sprintf("messages[%d].tool_calls[%d].function.arguments", i, j), "messages[%d].tool_calls[%d].function.arguments is not valid JSON", i, j)
			}
			input = json.RawMessage(args)
		}
		out = append(out, block{ToolUse: &toolUse{ToolUseID: tc.ID, Name: tc.Function.Name, Input: input}})
	}
	return out, nil
}

// tools returns the toolConfig for r's tools and tool_choice; none for
// tool_choice "none".
func tools(r *llm.ChatRequest) (*toolConfig, error) {
	if len(r.Tools) == 0 {
		return nil, nil
	}
	var choice json.RawMessage
	switch tc := bytes.TrimSpace(r.ToolChoice); {
	case len(tc) == 0, string(tc) == "null", string(tc) == `"auto"`:
		if len(tc) > 0 && string(tc) != "null" {
			choice = json.RawMessage(`{"auto":{}}`)
		}
	case string(tc) == `"none"`:
		return nil, nil
	case string(tc) == `"required"`:
		choice = json.RawMessage(`{"any":{}}`)
	default:
		var named struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if err := json.Unmarshal(tc, &named); err != nil || named.Function.Name == "" {
			return nil, apierr.BadParam("tool_choice", `tool_choice must be "none", "auto", "required" or {"type":"function","function":{"name":…}}`)
		}
		b, _ := json.Marshal(map[string]map[string]string{"tool": {"name": named.Function.Name}})
		choice = b
	}
	out := &toolConfig{ToolChoice: choice}
	for i, t := range r.Tools {
		if t.Type != "" && t.Type != "function" {
			return nil, apierr.BadParam(fmt.Sprintf("tools[%d].type", i), "tools[%d].type %q is not supported by bedrock", i, t.Type)
		}
		schema := t.Function.Parameters
		if len(bytes.TrimSpace(schema)) == 0 || string(bytes.TrimSpace(schema)) == "null" {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out.Tools = append(out.Tools, toolEntry{ToolSpec: toolSpec{Name: t.Function.Name, Description: t.Function.Description, InputSchema: inputSchema{JSON: schema}}})
	}
	return out, nil
}

var _ provider.ChatAdapter = (*Adapter)(nil)
