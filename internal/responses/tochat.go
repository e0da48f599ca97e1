package responses

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
)

// ToChat translates r into a chat completions request for provider, which
// has no Responses API: instructions become the system message, history
// (the earlier turns' input and output items, oldest first) and the input
// become messages, function tools become chat tools. What a chat
// completions API cannot express — built-in tools, files uploaded to
// OpenAI, a server-side conversation — is a 400 naming the field.
func ToChat(r *Request, history []Item, provider string) (*llm.ChatRequest, error) {
	if err := chatCan(r, provider); err != nil {
		return nil, err
	}
	c := &llm.ChatRequest{
		Model:             r.Model,
		Stream:            r.Stream,
		Temperature:       r.Temperature,
		TopP:              r.TopP,
		MaxTokens:         r.MaxOutputTokens,
		ParallelToolCalls: r.ParallelToolCalls,
		User:              r.User,
	}
	if r.Stream {
		c.StreamOptions = &llm.StreamOptions{IncludeUsage: true}
	}
	if r.Reasoning != nil && r.Reasoning.Effort != "" && r.Reasoning.Effort != "none" {
		c.ReasoningEffort = r.Reasoning.Effort
	}
	var err error
	if c.Tools, err = chatTools(r.Tools, provider); err != nil {
		return nil, err
	}
	if c.ToolChoice, err = chatToolChoice(r.ToolChoice, provider); err != nil {
		return nil, err
	}
	if c.ResponseFormat, err = chatFormat(r.Text); err != nil {
		return nil, err
	}
	if r.Instructions != nil && *r.Instructions != "" {
		c.Messages = append(c.Messages, llm.Message{Role: "system", Content: llm.TextContent(*r.Instructions)})
	}
	m := messages{provider: provider, history: history, out: c.Messages}
	for i := range history {
		if err := m.add(&history[i], fmt.Sprintf("previous_response_id (item %d)", i)); err != nil {
			return nil, err
		}
	}
	if !r.Input.IsItems {
		m.out = append(m.out, llm.Message{Role: "user", Content: llm.TextContent(r.Input.Text)})
	}
	for i := range r.Input.Items {
		if err := m.add(&r.Input.Items[i], fmt.Sprintf("input[%d]", i)); err != nil {
			return nil, err
		}
	}
	c.Messages = m.out
	return c, nil
}

// chatCan refuses what no chat completions API can do.
func chatCan(r *Request, provider string) error {
	switch {
	case len(r.Conversation) > 0 && string(r.Conversation) != "null":
		return apierr.BadParam("conversation", "conversations are not supported by provider %s; use previous_response_id, which svc keeps", provider)
	case r.Background:
		return apierr.BadParam("background", "background responses are not supported by provider %s", provider)
	}
	return nil
}

// builtinTools are the Responses API's tools that OpenAI runs itself.
const builtinHint = "only function tools can be sent to a provider without the Responses API"

// chatTools translates the function tools; a built-in tool is a 400 naming it.
func chatTools(tools []Tool, provider string) ([]llm.Tool, error) {
	var out []llm.Tool
	for i, t := range tools {
		if t.Type != "function" {
			return nil, &apierr.Error{Kind: apierr.InvalidRequest, Code: "unsupported_tool", Param: fmt.Sprintf("tools[%d].type", i),
				Message: fmt.Sprintf("tool %q is not supported by provider %s: %s", t.Type, provider, builtinHint)}
		}
		out = append(out, llm.Tool{Type: "function", Function: llm.FunctionDecl{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters, Strict: t.Strict}})
	}
	return out, nil
}

// chatToolChoice translates tool_choice: the modes as they are, a function
// by name into chat's nesting; a built-in tool is a 400.
func chatToolChoice(tc json.RawMessage, provider string) (json.RawMessage, error) {
	s := strings.TrimSpace(string(tc))
	if s == "" || s == "null" || s[0] == '"' {
		return tc, nil
	}
	var c struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal(tc, &c); err != nil {
		return nil, apierr.BadParam("tool_choice", "tool_choice must be a string or an object with a type")
	}
	if c.Type != "function" || c.Name == "" {
		return nil, &apierr.Error{Kind: apierr.InvalidRequest, Code: "unsupported_tool", Param: "tool_choice",
			Message: fmt.Sprintf("tool_choice %q is not supported by provider %s: %s", c.Type, provider, builtinHint)}
	}
	return json.Marshal(map[string]any{"type": "function", "function": map[string]string{"name": c.Name}})
}

// chatFormat translates text.format into response_format.
func chatFormat(t *TextConfig) (json.RawMessage, error) {
	if t == nil || t.Format == nil || t.Format.Type == "text" {
		return nil, nil
	}
	f := t.Format
	if f.Type == "json_object" {
		return json.RawMessage(`{"type":"json_object"}`), nil
	}
	schema := map[string]any{"name": f.Name, "schema": f.Schema}
	if f.Description != "" {
		schema["description"] = f.Description
	}
	if f.Strict != nil {
		schema["strict"] = *f.Strict
	}
	return json.Marshal(map[string]any{"type": "json_schema", "json_schema": schema})
}

// messages builds the chat messages of a conversation's items.
type messages struct {
	provider string
	history  []Item
	out      []llm.Message
}

// add appends the message(s) of one item; at names it in errors.
func (m *messages) add(it *Item, at string) error {
	switch it.Kind() {
	case TypeMessage:
		msg, err := m.message(it, at)
		if err != nil {
			return err
		}
		m.out = append(m.out, msg)
	case TypeFunctionCall:
		m.call(it)
	case TypeFunctionCallOutput:
		text, err := m.text(it.Output, at+".output")
		if err != nil {
			return err
		}
		m.out = append(m.out, llm.Message{Role: "tool", ToolCallID: it.CallID, Content: llm.TextContent(text)})
	case TypeItemReference:
		ref := m.find(it.ID)
		if ref == nil {
			return apierr.BadParam(at+".id", "no earlier item has id %q", it.ID)
		}
		return m.add(ref, at)
	}
	// Reasoning items are the provider's own; a chat API cannot take them.
	return nil
}

// call appends a function call to the assistant message just before it,
// or starts one: chat carries a turn's calls on one assistant message.
func (m *messages) call(it *Item) {
	tc := llm.ToolCall{ID: it.CallID, Type: "function", Function: llm.FunctionCall{Name: it.Name, Arguments: *it.Arguments}}
	if n := len(m.out); n > 0 && m.out[n-1].Role == "assistant" {
		m.out[n-1].ToolCalls = append(m.out[n-1].ToolCalls, tc)
		return
	}
	m.out = append(m.out, llm.Message{Role: "assistant", Content: llm.Content{Present: true, Null: true}, ToolCalls: []llm.ToolCall{tc}})
}

// find is the item of the history with id.
func (m *messages) find(id string) *Item {
	for i := range m.history {
		if m.history[i].ID == id && m.history[i].Kind() != TypeItemReference {
			return &m.history[i]
		}
	}
	return nil
}

// message translates a message item.
func (m *messages) message(it *Item, at string) (llm.Message, error) {
	role := it.Role
	if role == "developer" {
		role = "system" // chat-only servers do not all know "developer"
	}
	msg := llm.Message{Role: role}
	c := it.Content
	if !c.IsParts || role == "assistant" || role == "system" {
		text, err := m.text(c, at+".content")
		if err != nil {
			return msg, err
		}
		msg.Content = llm.TextContent(text)
		if role == "assistant" {
			msg.Refusal = refusal(c)
		}
		return msg, nil
	}
	msg.Content = llm.Content{IsParts: true, Present: true, Parts: make([]llm.Part, 0, len(c.Parts))}
	for j, p := range c.Parts {
		part, err := m.part(p, fmt.Sprintf("%s.content[%d]", at, j))
		if err != nil {
			return msg, err
		}
		msg.Content.Parts = append(msg.Content.Parts, part)
	}
	return msg, nil
}

// part translates one content part of a user message.
func (m *messages) part(p Part, at string) (llm.Part, error) {
	switch p.Type {
	case PartInputImage:
		if p.ImageURL == "" {
			return llm.Part{}, m.unsupported(at+".file_id", "files uploaded to OpenAI (file_id)")
		}
		return llm.Part{Type: "image_url", ImageURL: &llm.ImageURL{URL: p.ImageURL, Detail: p.Detail}}, nil
	case PartInputFile:
		if p.FileData == "" {
			return llm.Part{}, m.unsupported(at+".file_data", "files by file_id or file_url (send file_data, a base64 data URI)")
		}
		return llm.Part{Type: "file", File: &llm.File{FileData: p.FileData, Filename: p.Filename}}, nil
	}
	return llm.Part{Type: "text", Text: deref(p.Text)}, nil
}

// text is the text of a content: its text parts joined; a part that is not
// text (an image in a system message or a tool's output) is a 400.
func (m *messages) text(c *Content, at string) (string, error) {
	if !c.IsParts {
		return c.Text, nil
	}
	var b strings.Builder
	for j, p := range c.Parts {
		switch p.Type {
		case PartInputText, PartOutputText:
			b.WriteString(deref(p.Text))
		case PartRefusal:
		default:
			return "", m.unsupported(fmt.Sprintf("%s[%d].type", at, j), p.Type+" content here")
		}
	}
	return b.String(), nil
}

func (m *messages) unsupported(param, what string) error {
	return &apierr.Error{Kind: apierr.InvalidRequest, Code: "unsupported_content", Param: param,
		Message: fmt.Sprintf("%s cannot be sent to provider %s", what, m.provider)}
}

// refusal is an assistant content's refusal text.
func refusal(c *Content) string {
	for _, p := range c.Parts {
		if p.Type == PartRefusal {
			return deref(p.Refusal)
		}
	}
	return ""
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
