// Package anthropic is the adapter for Anthropic's Messages API: it
// translates svc's canonical OpenAI chat completions to Messages requests
// (request.go), Messages answers and streams back to chat completions and
// chunks (response.go, stream.go), and Anthropic error answers to apierr
// errors (errors.go). native.go reads usage from untranslated Messages
// bodies and streams, for the /native/v1/messages passthrough route.
//
// It is pure translation: it never opens a connection and never sets
// credentials (the x-api-key header is applied by upstream/cred).
//
// Imported by wire (to register it) and tests only. It imports, of svc, only
// llm, llm/sse, apierr and provider, as every adapter (a test enforces it).
package anthropic

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

// DefaultVersion is the anthropic-version header sent when the deployment names
// no API version.
const DefaultVersion = "2023-06-01"

// DefaultMaxTokens is the max_tokens sent when the caller set neither
// max_tokens nor max_completion_tokens: Anthropic requires the field.
const DefaultMaxTokens = 4096

// Adapter speaks Anthropic's Messages API.
type Adapter struct{}

// New returns the adapter.
func New() *Adapter { return &Adapter{} }

// messagesRequest is a Messages API request body.
type messagesRequest struct {
	Model         string          `json:"model"`
	MaxTokens     int             `json:"max_tokens"`
	System        string          `json:"system,omitempty"`
	Messages      []message       `json:"messages"`
	Tools         []tool          `json:"tools,omitempty"`
	ToolChoice    *toolChoice     `json:"tool_choice,omitempty"`
	Temperature   *float64        `json:"temperature,omitempty"`
	TopP          *float64        `json:"top_p,omitempty"`
	TopK          json.RawMessage `json:"top_k,omitempty"`
	StopSequences []string        `json:"stop_sequences,omitempty"`
	Stream        bool            `json:"stream,omitempty"`
	Metadata      *metadata       `json:"metadata,omitempty"`
	Thinking      json.RawMessage `json:"thinking,omitempty"`
	ServiceTier   json.RawMessage `json:"service_tier,omitempty"`
}

// passedExtra are the caller's unmodelled top-level fields that are also
// Messages API fields, passed on as they are.
var passedExtra = []string{"top_k", "thinking", "service_tier"}

type metadata struct {
	UserID string `json:"user_id"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// block is a request content block: text, image, document, tool_use or
// tool_result.
type block struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	Source    *source         `json:"source,omitempty"`
	Title     string          `json:"title,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   []block         `json:"content,omitempty"`
}

type source struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type toolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

// emptySchema is the input_schema of a function declared without parameters.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// NewChatRequest builds POST {base}/v1/messages with the caller's chat
// request translated to a Messages request.
func (a *Adapter) NewChatRequest(ctx context.Context, t provider.Deployment, c provider.ChatCall) (*http.Request, error) {
	body, err := MessagesBody(c.Req, t.Model)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(t.BaseURL, "/")+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "bad_base_url", "the provider's base URL is invalid", err)
	}
	setHeaders(req.Header, t)
	req.Header.Set("Content-Type", "application/json")
	if c.Req.Stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	return req, nil
}

// setHeaders sets the headers every Anthropic request carries.
func setHeaders(h http.Header, t provider.Deployment) {
	v := t.APIVersion
	if v == "" {
		v = DefaultVersion
	}
	h.Set("Anthropic-Version", v)
}

// MessagesBody translates r to a Messages API request body for model.
// Every failure is an InvalidRequest naming the offending field.
func MessagesBody(r *llm.ChatRequest, model string) ([]byte, error) {
	out := messagesRequest{
		Model:         model,
		MaxTokens:     DefaultMaxTokens,
		Temperature:   r.Temperature,
		TopP:          r.TopP,
		StopSequences: r.Stop,
		Stream:        r.Stream,
	}
	switch {
	case r.MaxTokens != nil:
		out.MaxTokens = *r.MaxTokens
	case r.MaxCompletionTokens != nil:
		out.MaxTokens = *r.MaxCompletionTokens
	}
	if r.Temperature != nil && *r.Temperature > 1 {
		return nil, apierr.BadParam("temperature", "Anthropic accepts a temperature between 0 and 1")
	}
	if r.N != nil && *r.N > 1 {
		return nil, apierr.BadParam("n", "Anthropic does not accept n > 1: it returns one choice per request")
	}
	if r.User != "" {
		out.Metadata = &metadata{UserID: r.User}
	}
	for _, k := range passedExtra {
		v, ok := r.Extra[k]
		if !ok {
			continue
		}
		switch k {
		case "top_k":
			out.TopK = v
		case "thinking":
			out.Thinking = v
		case "service_tier":
			out.ServiceTier = v
		}
	}

	var system []string
	for i, m := range r.Messages {
		switch m.Role {
		case "system", "developer":
			s, err := systemText(i, m.Content)
			if err != nil {
				return nil, err
			}
			if s != "" {
				system = append(system, s)
			}
		case "user":
			blocks, err := userBlocks(i, m.Content)
			if err != nil {
				return nil, err
			}
			out.Messages = appendMessage(out.Messages, "user", blocks)
		case "assistant":
			blocks, err := assistantBlocks(i, m)
			if err != nil {
				return nil, err
			}
			out.Messages = appendMessage(out.Messages, "assistant", blocks)
		case "tool":
			b, err := toolResult(i, m)
			if err != nil {
				return nil, err
			}
			out.Messages = appendMessage(out.Messages, "user", []block{b})
		default:
			return nil, apierr.BadParam(fmt.Sprintf("messages[%d].role", i), "Anthropic does not accept role %q in messages[%d]; use tool messages for tool results", m.Role, i)
		}
	}
	if len(out.Messages) == 0 {
		return nil, apierr.BadParam("messages", "Anthropic needs at least one user or assistant message besides the system prompt")
	}
	out.System = strings.Join(system, "\n\n")

	if err := translateTools(r, &out); err != nil {
		return nil, err
	}

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&out); err != nil {
		return nil, apierr.Wrap(apierr.InvalidRequest, "invalid_json", "the request could not be encoded for Anthropic", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// appendMessage adds blocks as a message of role, merged into the last
// message when it has the same role: Anthropic requires roles to alternate.
func appendMessage(msgs []message, role string, blocks []block) []message {
	if len(blocks) == 0 {
		return msgs
	}
	if n := len(msgs); n > 0 && msgs[n-1].Role == role {
		msgs[n-1].Content = append(msgs[n-1].Content, blocks...)
		return msgs
	}
	return append(msgs, message{Role: role, Content: blocks})
}

func textBlock(s string) block { return block{Type: "text", Text: &s} }

// systemText is the text of a system or developer message.
func systemText(i int, c llm.Content) (string, error) {
	if !c.IsParts {
		return c.Text, nil
	}
	var parts []string
	for j, p := range c.Parts {
		if p.Type != "text" {
			return "", unsupportedPart(i, j, p.Type, "in a system message")
		}
		if p.Text != "" {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n"), nil
}

// userBlocks translates a user message's content.
func userBlocks(i int, c llm.Content) ([]block, error) {
	if !c.IsParts {
		if c.Text == "" {
			return nil, apierr.BadParam(fmt.Sprintf("messages[%d].content", i), "messages[%d].content is empty: Anthropic does not accept empty messages", i)
		}
		return []block{textBlock(c.Text)}, nil
	}
	blocks := make([]block, 0, len(c.Parts))
	for j, p := range c.Parts {
		param := fmt.Sprintf("messages[%d].content[%d]", i, j)
		switch p.Type {
		case "text":
			if p.Text != "" {
				blocks = append(blocks, textBlock(p.Text))
			}
		case "image_url":
			if p.ImageURL == nil {
				return nil, apierr.BadParam(param+".image_url", "%s.image_url.url is required", param)
			}
			src, err := imageSource(param, p.ImageURL.URL)
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, block{Type: "image", Source: src})
		case "file":
			b, err := documentBlock(param, p.File)
			if err != nil {
				return nil, err
			}
			blocks = append(blocks, b)
		default:
			return nil, unsupportedPart(i, j, p.Type, "")
		}
	}
	if len(blocks) == 0 {
		return nil, apierr.BadParam(fmt.Sprintf("messages[%d].content", i), "messages[%d].content is empty: Anthropic does not accept empty messages", i)
	}
	return blocks, nil
}

func unsupportedPart(i, j int, typ, where string) error {
	if where != "" {
		where = " " + where
	}
	return apierr.BadParam(fmt.Sprintf("messages[%d].content[%d].type", i, j),
		"Anthropic does not accept %s content parts%s (messages[%d].content[%d])", typ, where, i, j)
}

// imageSource is the source of an image_url: a base64 data URI or an
// http(s) URL.
func imageSource(param, u string) (*source, error) {
	if strings.HasPrefix(u, "data:") {
		mt, data, ok := parseDataURI(u)
		if !ok {
			return nil, apierr.BadParam(param+".image_url.url", "%s.image_url.url is not a base64 data URI", param)
		}
		switch mt {
		case "image/jpeg", "image/png", "image/gif", "image/webp":
		default:
			return nil, apierr.BadParam(param+".image_url.url", "Anthropic does not accept images of type %q (jpeg, png, gif and webp only)", mt)
		}
		return &source{Type: "base64", MediaType: mt, Data: data}, nil
	}
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		return &source{Type: "url", URL: u}, nil
	}
	return nil, apierr.BadParam(param+".image_url.url", "%s.image_url.url must be an https URL or a base64 data URI", param)
}

// documentBlock translates a file part: Anthropic takes inline PDFs.
func documentBlock(param string, f *llm.File) (block, error) {
	if f == nil || (f.FileData == "" && f.FileID == "") {
		return block{}, apierr.BadParam(param+".file", "%s.file needs file_data", param)
	}
	if f.FileData == "" {
		return block{}, apierr.BadParam(param+".file.file_id", "Anthropic does not accept OpenAI file ids; send the file inline as file_data")
	}
	mt, data, ok := parseDataURI(f.FileData)
	if !ok {
		return block{}, apierr.BadParam(param+".file.file_data", "%s.file.file_data is not a base64 data URI", param)
	}
	if mt != "application/pdf" {
		return block{}, apierr.BadParam(param+".file.file_data", "Anthropic does not accept files of type %q (PDF only)", mt)
	}
	return block{Type: "document", Source: &source{Type: "base64", MediaType: mt, Data: data}, Title: f.Filename}, nil
}

// parseDataURI splits "data:<media type>;base64,<data>".
func parseDataURI(u string) (mediaType, data string, ok bool) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return "", "", false
	}
	meta, data, ok := strings.Cut(rest, ",")
	if !ok {
		return "", "", false
	}
	mediaType, ok = strings.CutSuffix(meta, ";base64")
	if !ok || mediaType == "" || data == "" {
		return "", "", false
	}
	if i := strings.IndexByte(mediaType, ';'); i >= 0 { // parameters
		mediaType = mediaType[:i]
	}
	return strings.ToLower(mediaType), data, true
}

// assistantBlocks translates an assistant message: its text, then its tool
// calls as tool_use blocks.
func assistantBlocks(i int, m llm.Message) ([]block, error) {
	var blocks []block
	if m.Content.IsParts {
		for j, p := range m.Content.Parts {
			switch p.Type {
			case "text":
				if p.Text != "" {
					blocks = append(blocks, textBlock(p.Text))
				}
			case "refusal":
				if p.Refusal != "" {
					blocks = append(blocks, textBlock(p.Refusal))
				}
			default:
				return nil, unsupportedPart(i, j, p.Type, "in an assistant message")
			}
		}
	} else if m.Content.Text != "" {
		blocks = append(blocks, textBlock(m.Content.Text))
	}
	for j, tc := range m.ToolCalls {
		param := fmt.Sprintf("messages[%d].tool_calls[%d]", i, j)
		if tc.ID == "" || tc.Function.Name == "" {
			return nil, apierr.BadParam(param, "%s needs an id and a function name", param)
		}
		input := json.RawMessage(`{}`)
		if args := strings.TrimSpace(tc.Function.Arguments); args != "" {
			if !json.Valid([]byte(args)) || args[0] != '{' {
				return nil, apierr.BadParam(param+".function.arguments", "%s.function.arguments is not a JSON object", param)
			}
			var buf bytes.Buffer
			if err := json.Compact(&buf, []byte(args)); err != nil {
				return nil, apierr.BadParam(param+".function.arguments", "%s.function.arguments is not a JSON object", param)
			}
			input = buf.Bytes()
		}
		blocks = append(blocks, block{Type: "tool_use", ID: tc.ID, Name: tc.Function.Name, Input: input})
	}
	return blocks, nil
}

// toolResult translates a tool message to a tool_result block.
func toolResult(i int, m llm.Message) (block, error) {
	if m.ToolCallID == "" {
		return block{}, apierr.BadParam(fmt.Sprintf("messages[%d].tool_call_id", i), "messages[%d].tool_call_id is required for role tool", i)
	}
	b := block{Type: "tool_result", ToolUseID: m.ToolCallID}
	if !m.Content.IsParts {
		if m.Content.Text != "" {
			b.Content = []block{textBlock(m.Content.Text)}
		}
		return b, nil
	}
	for j, p := range m.Content.Parts {
		switch p.Type {
		case "text":
			if p.Text != "" {
				b.Content = append(b.Content, textBlock(p.Text))
			}
		case "image_url":
			if p.ImageURL == nil {
				return block{}, unsupportedPart(i, j, p.Type, "without a url")
			}
			src, err := imageSource(fmt.Sprintf("messages[%d].content[%d]", i, j), p.ImageURL.URL)
			if err != nil {
				return block{}, err
			}
			b.Content = append(b.Content, block{Type: "image", Source: src})
		default:
			return block{}, unsupportedPart(i, j, p.Type, "in a tool message")
		}
	}
	return b, nil
}

// translateTools sets tools and tool_choice.
func translateTools(r *llm.ChatRequest, out *messagesRequest) error {
	for i, t := range r.Tools {
		param := fmt.Sprintf("tools[%d]", i)
		if t.Type != "function" {
			return apierr.BadParam(param+".type", "Anthropic does not accept tools of type %q (function only)", t.Type)
		}
		if t.Function.Name == "" {
			return apierr.BadParam(param+".function.name", "%s.function.name is required", param)
		}
		schema := t.Function.Parameters
		if len(bytes.TrimSpace(schema)) == 0 || bytes.Equal(bytes.TrimSpace(schema), []byte("null")) {
			schema = emptySchema
		}
		out.Tools = append(out.Tools, tool{Name: t.Function.Name, Description: t.Function.Description, InputSchema: schema})
	}
	var tc *toolChoice
	if c := bytes.TrimSpace(r.ToolChoice); len(c) > 0 && !bytes.Equal(c, []byte("null")) {
		var s string
		if c[0] == '"' {
			if err := json.Unmarshal(c, &s); err != nil {
				return apierr.BadParam("tool_choice", "tool_choice must be none, auto, required or a function")
			}
			switch s {
			case "none":
				tc = &toolChoice{Type: "none"}
			case "auto":
				tc = &toolChoice{Type: "auto"}
			case "required":
				tc = &toolChoice{Type: "any"}
			default:
				return apierr.BadParam("tool_choice", "tool_choice %q is not one of none, auto, required", s)
			}
		} else {
			var f struct {
				Type     string `json:"type"`
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			}
			if err := json.Unmarshal(c, &f); err != nil || f.Type != "function" || f.Function.Name == "" {
				return apierr.BadParam("tool_choice", "tool_choice must be none, auto, required or {\"type\":\"function\",\"function\":{\"name\":…}}")
			}
			tc = &toolChoice{Type: "tool", Name: f.Function.Name}
		}
	}
	if r.ParallelToolCalls != nil && !*r.ParallelToolCalls && len(out.Tools) > 0 {
		if tc == nil {
			tc = &toolChoice{Type: "auto"}
		}
		if tc.Type != "none" {
			tc.DisableParallelToolUse = true
		}
	}
	if tc != nil && len(out.Tools) == 0 {
		if tc.Type == "none" {
			return nil // nothing to choose from: leave it out
		}
		return apierr.BadParam("tool_choice", "tool_choice needs tools")
	}
	out.ToolChoice = tc
	return nil
}

var (
	_ provider.ChatAdapter = (*Adapter)(nil)
	_ provider.ModelLister = (*Adapter)(nil)
)
