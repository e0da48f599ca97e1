// Package provider defines what a provider adapter is — pure translation
// between svc's canonical (OpenAI-shaped) types and one wire format — and the
// registry of configured providers: name, adapter, base URL, credential
// signer, model families and enable flag. Adapters live in subpackages, one
// per wire format (provider/openai, …).
//
// proxy, route and wire import provider; adapters import only llm, apierr and
// llm/sse (a test enforces it); mgmt never imports provider packages.
package provider

import (
	"context"
	"io"
	"net/http"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
)

// Deployment is the resolved destination of one upstream call.
type Deployment struct {
	Provider   string
	Model      string // the model name the provider expects
	BaseURL    string // as the provider's SDK takes it (with /v1 for OpenAI-style)
	APIVersion string
	// Region (Bedrock), Project and Location (Vertex AI) where a provider's
	// URLs need them.
	Region   string
	Project  string
	Location string
}

// ChatCall is a chat request as the adapter receives it: the decoded request
// and the caller's original bytes (adapters that speak OpenAI forward those).
type ChatCall struct {
	Req *llm.ChatRequest
	Raw []byte
}

// StreamInfo is filled by an adapter's stream as events pass: usage and model
// are known only at the end of most streams.
type StreamInfo struct {
	Usage llm.Usage
	Model string
	// HideUsage, set by the caller before decoding, asks the adapter not to
	// relay usage-only chunks: svc always asks providers for usage (to bill),
	// but relays it only to clients that asked for it themselves.
	HideUsage bool
	// ToolCalls are the tool calls the answer made, in the order they began,
	// assembled from the events relayed so far as the client assembles them:
	// complete once the stream has ended (io.EOF); before, the last call's
	// Arguments may be partial. Every adapter fills it, in whatever dialect
	// its provider speaks (OpenAI tool_calls, Anthropic tool_use blocks,
	// Gemini functionCall parts, Bedrock toolUse, Cohere tool-call events).
	ToolCalls []ToolCall
}

// ToolCall is one tool call of a streamed answer, as the client will run it.
type ToolCall struct {
	Choice int // the choice it belongs to (OpenAI's n, Gemini's candidates); usually 0
	Index  int // its index among the choice's tool calls, as the chunks number it
	ID     string
	Name   string
	// Arguments is the call's JSON text, its pieces concatenated.
	Arguments []byte
}

// AddToolCall records a piece of the tool call index of choice: the id when
// the call has none yet, the name and args appended (OpenAI clients
// concatenate both). The first piece of a call adds it to ToolCalls.
func (si *StreamInfo) AddToolCall(choice, index int, id, name, args string) {
	var tc *ToolCall
	for i := len(si.ToolCalls) - 1; i >= 0; i-- {
		if c := &si.ToolCalls[i]; c.Choice == choice && c.Index == index {
			tc = c
			break
		}
	}
	if tc == nil {
		si.ToolCalls = append(si.ToolCalls, ToolCall{Choice: choice, Index: index})
		tc = &si.ToolCalls[len(si.ToolCalls)-1]
	}
	if tc.ID == "" {
		tc.ID = id
	}
	tc.Name += name
	tc.Arguments = append(tc.Arguments, args...)
}

// ChatAdapter translates chat completions for one wire format. It never does
// I/O: it builds requests and decodes bodies the caller supplies.
type ChatAdapter interface {
	// NewChatRequest builds the upstream request (without credentials).
	NewChatRequest(ctx context.Context, t Deployment, c ChatCall) (*http.Request, error)
	// DecodeChat turns a successful upstream body into an OpenAI chat
	// completion body, with its usage and model.
	DecodeChat(body []byte) (out []byte, usage llm.Usage, model string, err error)
	// DecodeChatStream turns the upstream stream body into OpenAI chunk events,
	// recording usage and model in info as they pass.
	DecodeChatStream(body io.ReadCloser, info *StreamInfo) llm.Stream
	// DecodeError turns an upstream error answer into an error for the caller.
	DecodeError(provider string, status int, header http.Header, body []byte) *apierr.Error
}

// ModelNamer is the optional ability of adapters whose provider's answers do
// not name the model (Bedrock, Cohere): DecodeChatFor names model in the
// answer, and their streams name info.Model when the caller sets it before
// decoding.
type ModelNamer interface {
	DecodeChatFor(model string, body []byte) (out []byte, usage llm.Usage, respModel string, err error)
}

// ModelLister is the optional ability to list the provider's models.
type ModelLister interface {
	NewModelsRequest(ctx context.Context, t Deployment) (*http.Request, error)
	DecodeModels(body []byte) ([]string, error)
}
