// Package responses is OpenAI's Responses API as svc serves it: the request,
// its input items and the response object; decoding with every field
// checked and every number bounded; the translation of a request to a chat
// completions request and of a chat answer — a body or a stream of chunks —
// back to a response and its typed stream events, for providers without the
// Responses API; the relay of a provider's own Responses stream; and the
// conversation records svc keeps so that previous_response_id works whatever
// provider served the earlier turn (Store, SQLStore).
//
// Translation is pure: it never does I/O. The proxy imports responses; it
// imports llm, llm/sse, apierr, jsonbody and, for its records, sqlstore.
package responses

import (
	"bytes"
	"encoding/json"

	"github.com/svc-gateway/svc/internal/jsonbody"
)

// Request is a POST /v1/responses body, as far as svc reads it. The
// provider's own Responses API receives the caller's bytes instead.
type Request struct {
	Model              string            `json:"model"`
	Input              Input             `json:"input"`
	Instructions       *string           `json:"instructions,omitempty"`
	Tools              []Tool            `json:"tools,omitempty"`
	ToolChoice         json.RawMessage   `json:"tool_choice,omitempty"`
	PreviousResponseID string            `json:"previous_response_id,omitempty"`
	Store              *bool             `json:"store,omitempty"`
	Stream             bool              `json:"stream,omitempty"`
	Background         bool              `json:"background,omitempty"`
	Temperature        *float64          `json:"temperature,omitempty"`
	TopP               *float64          `json:"top_p,omitempty"`
	MaxOutputTokens    *int              `json:"max_output_tokens,omitempty"`
	ParallelToolCalls  *bool             `json:"parallel_tool_calls,omitempty"`
	Reasoning          *Reasoning        `json:"reasoning,omitempty"`
	Text               *TextConfig       `json:"text,omitempty"`
	Metadata           map[string]string `json:"metadata,omitempty"`
	User               string            `json:"user,omitempty"`
	Conversation       json.RawMessage   `json:"conversation,omitempty"`
}

// Stored reports whether the response is to be kept (store defaults to true).
func (r *Request) Stored() bool { return r.Store == nil || *r.Store }

// Reasoning is the request's reasoning configuration.
type Reasoning struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary,omitempty"`
}

// TextConfig is the request's text output configuration.
type TextConfig struct {
	Format    *TextFormat `json:"format,omitempty"`
	Verbosity string      `json:"verbosity,omitempty"`
}

// TextFormat is text.format: text, json_object or json_schema.
type TextFormat struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// Tool is one entry of tools: a function, or a built-in tool svc can only
// pass to a provider that runs it.
type Tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// Input is the request's input: a string (one user message) or items.
type Input struct {
	Text  string
	Items []Item
	// IsItems is true when the input was an array.
	IsItems bool
}

// UnmarshalJSON accepts a string or an array of items.
func (in *Input) UnmarshalJSON(b []byte) error {
	*in = Input{}
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '"':
		return jsonbody.Unmarshal(b, &in.Text)
	case len(b) > 0 && b[0] == '[':
		in.IsItems = true
		return jsonbody.Unmarshal(b, &in.Items)
	}
	return jsonbody.Invalid("input must be a string or an array of input items")
}

// MarshalJSON writes the form the input was read in.
func (in Input) MarshalJSON() ([]byte, error) {
	if in.IsItems {
		if in.Items == nil {
			return []byte("[]"), nil
		}
		return json.Marshal(in.Items)
	}
	return json.Marshal(in.Text)
}

// Item types of input and output.
const (
	TypeMessage            = "message"
	TypeFunctionCall       = "function_call"
	TypeFunctionCallOutput = "function_call_output"
	TypeReasoning          = "reasoning"
	TypeItemReference      = "item_reference"
)

// Item is one input or output item: a message, a function call, a
// function call's output, reasoning, or a reference to an earlier item.
type Item struct {
	Type    string   `json:"type,omitempty"`
	ID      string   `json:"id,omitempty"`
	Status  string   `json:"status,omitempty"`
	Role    string   `json:"role,omitempty"`
	Content *Content `json:"content,omitempty"`
	// function_call
	CallID    string  `json:"call_id,omitempty"`
	Name      string  `json:"name,omitempty"`
	Arguments *string `json:"arguments,omitempty"`
	// function_call_output: a string, or an array of content parts.
	Output *Content `json:"output,omitempty"`
	// reasoning
	Summary          []Part  `json:"summary,omitempty"`
	EncryptedContent *string `json:"encrypted_content,omitempty"`
}

// Kind is the item's type, a message when it names none (the "easy" input
// message {role, content}).
func (it *Item) Kind() string {
	if it.Type == "" {
		return TypeMessage
	}
	return it.Type
}

// Content is a message's content, or a function call's output: a string
// or an array of parts.
type Content struct {
	Text    string
	Parts   []Part
	IsParts bool
}

// UnmarshalJSON accepts a string or an array of parts.
func (c *Content) UnmarshalJSON(b []byte) error {
	*c = Content{}
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '"':
		return jsonbody.Unmarshal(b, &c.Text)
	case len(b) > 0 && b[0] == '[':
		c.IsParts = true
		return jsonbody.Unmarshal(b, &c.Parts)
	}
	return jsonbody.Invalid("content must be a string or an array of content parts")
}

// MarshalJSON writes the form the content was read in.
func (c Content) MarshalJSON() ([]byte, error) {
	if c.IsParts {
		if c.Parts == nil {
			return []byte("[]"), nil
		}
		return json.Marshal(c.Parts)
	}
	return json.Marshal(c.Text)
}

// Content part types.
const (
	PartInputText  = "input_text"
	PartInputImage = "input_image"
	PartInputFile  = "input_file"
	PartOutputText = "output_text"
	PartRefusal    = "refusal"
	PartSummary    = "summary_text"
)

// Part is one content part.
type Part struct {
	Type     string  `json:"type"`
	Text     *string `json:"text,omitempty"`
	ImageURL string  `json:"image_url,omitempty"`
	FileID   string  `json:"file_id,omitempty"`
	Detail   string  `json:"detail,omitempty"`
	FileData string  `json:"file_data,omitempty"`
	FileURL  string  `json:"file_url,omitempty"`
	Filename string  `json:"filename,omitempty"`
	Refusal  *string `json:"refusal,omitempty"`
	// Annotations of output_text (always [] in what svc writes).
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// Response is the response object.
type Response struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	CreatedAt          int64             `json:"created_at"`
	Status             string            `json:"status"`
	Error              *ResponseError    `json:"error"`
	IncompleteDetails  *Incomplete       `json:"incomplete_details"`
	Instructions       *string           `json:"instructions"`
	MaxOutputTokens    *int              `json:"max_output_tokens"`
	Model              string            `json:"model"`
	Output             []Item            `json:"output"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Reasoning          Reasoning         `json:"reasoning"`
	Store              bool              `json:"store"`
	Temperature        *float64          `json:"temperature"`
	Text               TextConfig        `json:"text"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	Tools              []Tool            `json:"tools"`
	TopP               *float64          `json:"top_p"`
	Truncation         string            `json:"truncation"`
	Usage              *Usage            `json:"usage"`
	User               *string           `json:"user"`
	Metadata           map[string]string `json:"metadata"`
}

// ResponseError is a failed response's error.
type ResponseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Incomplete says why a response stopped early.
type Incomplete struct {
	Reason string `json:"reason"`
}

// Usage is the response's token usage.
type Usage struct {
	InputTokens         int64         `json:"input_tokens"`
	InputTokensDetails  InputDetails  `json:"input_tokens_details"`
	OutputTokens        int64         `json:"output_tokens"`
	OutputTokensDetails OutputDetails `json:"output_tokens_details"`
	TotalTokens         int64         `json:"total_tokens"`
}

// InputDetails break input tokens down.
type InputDetails struct {
	CachedTokens int64 `json:"cached_tokens"`
}

// OutputDetails break output tokens down.
type OutputDetails struct {
	ReasoningTokens int64 `json:"reasoning_tokens"`
}
