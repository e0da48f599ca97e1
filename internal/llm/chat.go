package llm

import (
	"bytes"
	"encoding/json"

	"github.com/svc-gateway/svc/internal/jsonbody"
)

// ChatRequest is an OpenAI chat completions request. Fields svc does not model
// are kept verbatim in Extra by DecodeChatRequest, so translating adapters can
// pass them on; the OpenAI adapter forwards the caller's original bytes instead.
type ChatRequest struct {
	Model               string          `json:"model"`
	Messages            []Message       `json:"messages"`
	Stream              bool            `json:"stream,omitempty"`
	StreamOptions       *StreamOptions  `json:"stream_options,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
	TopP                *float64        `json:"top_p,omitempty"`
	MaxTokens           *int            `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int            `json:"max_completion_tokens,omitempty"`
	N                   *int            `json:"n,omitempty"`
	Stop                Stop            `json:"stop,omitempty"`
	Seed                *int64          `json:"seed,omitempty"`
	PresencePenalty     *float64        `json:"presence_penalty,omitempty"`
	FrequencyPenalty    *float64        `json:"frequency_penalty,omitempty"`
	Tools               []Tool          `json:"tools,omitempty"`
	ToolChoice          json.RawMessage `json:"tool_choice,omitempty"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls,omitempty"`
	ResponseFormat      json.RawMessage `json:"response_format,omitempty"`
	ReasoningEffort     string          `json:"reasoning_effort,omitempty"`
	User                string          `json:"user,omitempty"`

	// Extra holds the request's top-level fields not modelled above.
	Extra map[string]json.RawMessage `json:"-"`
}

// StreamOptions are the OpenAI stream options.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Message is one chat message.
type Message struct {
	Role       string     `json:"role"`
	Content    Content    `json:"content"`
	Name       string     `json:"name,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Refusal    string     `json:"refusal,omitempty"`
}

// Content is a message's content: a plain string, an array of parts, or null.
type Content struct {
	Text  string
	Parts []Part
	// IsParts is true when the content was (or is to be) an array of parts.
	IsParts bool
	// Null is true when the content was JSON null.
	Null bool
	// Present is true when the message had a content field at all.
	Present bool
}

// TextContent returns a plain-string content.
func TextContent(s string) Content { return Content{Text: s, Present: true} }

// UnmarshalJSON accepts a string, an array of parts or null.
func (c *Content) UnmarshalJSON(b []byte) error {
	*c = Content{Present: true}
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || bytes.Equal(b, []byte("null")):
		c.Null = true
		return nil
	case b[0] == '"':
		return jsonbody.Unmarshal(b, &c.Text)
	case b[0] == '[':
		c.IsParts = true
		return jsonbody.Unmarshal(b, &c.Parts)
	}
	return errContentType
}

// errContentType is the decoder's cause for a content of the wrong type; the
// decoder adds the field's path.
var errContentType error = jsonbody.Invalid("content must be a string, an array of content parts or null")

// MarshalJSON writes the form the content was read in.
func (c Content) MarshalJSON() ([]byte, error) {
	switch {
	case c.IsParts:
		if c.Parts == nil {
			return []byte("[]"), nil
		}
		return json.Marshal(c.Parts)
	case c.Null && c.Text == "":
		return []byte("null"), nil
	}
	return json.Marshal(c.Text)
}

// String concatenates the text of the content (text parts only).
func (c Content) String() string {
	if !c.IsParts {
		return c.Text
	}
	var b []byte
	for _, p := range c.Parts {
		if p.Type == "text" {
			if len(b) > 0 {
				b = append(b, '\n')
			}
			b = append(b, p.Text...)
		}
	}
	return string(b)
}

// Part is one content part: text, image_url, input_audio, file, refusal.
type Part struct {
	Type       string      `json:"type"`
	Text       string      `json:"text,omitempty"`
	ImageURL   *ImageURL   `json:"image_url,omitempty"`
	InputAudio *InputAudio `json:"input_audio,omitempty"`
	File       *File       `json:"file,omitempty"`
	Refusal    string      `json:"refusal,omitempty"`
}

// ImageURL is an image reference: an https URL or a base64 data URI.
type ImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

// InputAudio is base64 audio with its format (wav, mp3).
type InputAudio struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

// File is an inline file (base64 data URI) or an uploaded file id.
type File struct {
	FileID   string `json:"file_id,omitempty"`
	FileData string `json:"file_data,omitempty"`
	Filename string `json:"filename,omitempty"`
}

// Stop is the `stop` field: a string or an array of strings.
type Stop []string

// UnmarshalJSON accepts a string, an array of strings or null.
func (s *Stop) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var one string
		if err := jsonbody.Unmarshal(b, &one); err != nil {
			return err
		}
		*s = Stop{one}
		return nil
	}
	var many []string
	if err := jsonbody.Unmarshal(b, &many); err != nil {
		return err
	}
	*s = many
	return nil
}

// Tool is a tool definition offered to the model.
type Tool struct {
	Type     string       `json:"type"`
	Function FunctionDecl `json:"function"`
}

// FunctionDecl declares a callable function.
type FunctionDecl struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// ToolCall is a call the model made. In stream deltas, Index identifies the
// call and Function.Arguments arrives in pieces.
type ToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function FunctionCall `json:"function"`
}

// FunctionCall is the function a tool call invokes, arguments as JSON text.
type FunctionCall struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// ChatResponse is a non-streamed chat completion.
type ChatResponse struct {
	ID                string   `json:"id"`
	Object            string   `json:"object"`
	Created           int64    `json:"created"`
	Model             string   `json:"model"`
	Choices           []Choice `json:"choices"`
	Usage             *Usage   `json:"usage,omitempty"`
	SystemFingerprint string   `json:"system_fingerprint,omitempty"`
}

// Choice is one completion choice.
type Choice struct {
	Index        int     `json:"index"`
	Message      Message `json:"message"`
	FinishReason string  `json:"finish_reason"`
}

// ChatChunk is one `chat.completion.chunk` of a stream.
type ChatChunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []ChunkChoice `json:"choices"`
	Usage   *Usage        `json:"usage,omitempty"`
}

// ChunkChoice is one choice's delta in a chunk.
type ChunkChoice struct {
	Index        int     `json:"index"`
	Delta        Delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

// Delta is the incremental message of a chunk.
type Delta struct {
	Role      string     `json:"role,omitempty"`
	Content   *string    `json:"content,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	Refusal   *string    `json:"refusal,omitempty"`
}
