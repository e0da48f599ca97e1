package responses

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
)

// NewID is a new identifier with prefix (resp_, msg_, fc_): 24 random bytes
// in hex, as long as OpenAI's.
func NewID(prefix string) string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// Frame is the response object for r before any output: its id, the
// request's settings echoed, status in_progress.
func Frame(r *Request, id string, created int64) *Response {
	resp := &Response{
		ID: id, Object: "response", CreatedAt: created, Status: "in_progress",
		Instructions: r.Instructions, MaxOutputTokens: r.MaxOutputTokens, Model: r.Model,
		Output: []Item{}, ParallelToolCalls: r.ParallelToolCalls == nil || *r.ParallelToolCalls,
		Store: r.Stored(), Temperature: r.Temperature, TopP: r.TopP, Truncation: "disabled",
		ToolChoice: r.ToolChoice, Tools: r.Tools, Metadata: r.Metadata,
		Text: TextConfig{Format: &TextFormat{Type: "text"}},
	}
	if resp.Tools == nil {
		resp.Tools = []Tool{}
	}
	if resp.Metadata == nil {
		resp.Metadata = map[string]string{}
	}
	if len(resp.ToolChoice) == 0 {
		resp.ToolChoice = json.RawMessage(`"auto"`)
	}
	if r.PreviousResponseID != "" {
		resp.PreviousResponseID = &r.PreviousResponseID
	}
	if r.User != "" {
		resp.User = &r.User
	}
	if r.Reasoning != nil {
		resp.Reasoning = *r.Reasoning
	}
	if r.Text != nil {
		resp.Text = *r.Text
		if resp.Text.Format == nil {
			resp.Text.Format = &TextFormat{Type: "text"}
		}
	}
	return resp
}

// FromChat completes resp, a Frame, from a chat completion body (OpenAI's
// shape: what every adapter's DecodeChat returns): the first choice's
// text, refusal and tool calls become output items, its finish reason the
// status, and the usage Responses-shaped.
func FromChat(resp *Response, body []byte) error {
	var c llm.ChatResponse
	if err := json.Unmarshal(body, &c); err != nil {
		return apierr.Wrap(apierr.UpstreamError, "bad_upstream_response", "the provider's answer could not be read", err)
	}
	if len(c.Choices) == 0 {
		return apierr.New(apierr.UpstreamError, "bad_upstream_response", "the provider's answer has no choices")
	}
	ch := c.Choices[0]
	text := ch.Message.Content.String()
	if text != "" || ch.Message.Refusal != "" || len(ch.Message.ToolCalls) == 0 {
		resp.Output = append(resp.Output, messageItem(NewID("msg_"), text, ch.Message.Refusal))
	}
	for _, tc := range ch.Message.ToolCalls {
		resp.Output = append(resp.Output, callItem(NewID("fc_"), tc.ID, tc.Function.Name, tc.Function.Arguments))
	}
	finish(resp, ch.FinishReason)
	if c.Usage != nil {
		resp.Usage = usageOf(c.Usage)
	}
	return nil
}

// messageItem is a completed assistant message with text or a refusal.
func messageItem(id, text, refusal string) Item {
	var part Part
	if refusal != "" && text == "" {
		part = Part{Type: PartRefusal, Refusal: &refusal}
	} else {
		part = Part{Type: PartOutputText, Text: &text, Annotations: json.RawMessage("[]")}
	}
	return Item{Type: TypeMessage, ID: id, Status: "completed", Role: "assistant",
		Content: &Content{IsParts: true, Parts: []Part{part}}}
}

// callItem is a completed function call.
func callItem(id, callID, name, args string) Item {
	return Item{Type: TypeFunctionCall, ID: id, Status: "completed", CallID: callID, Name: name, Arguments: &args}
}

// finish sets the status from a chat finish reason: the output limit and
// the content filter make a response incomplete.
func finish(resp *Response, reason string) {
	switch reason {
	case "length":
		resp.Status, resp.IncompleteDetails = "incomplete", &Incomplete{Reason: "max_output_tokens"}
	case "content_filter":
		resp.Status, resp.IncompleteDetails = "incomplete", &Incomplete{Reason: "content_filter"}
	default:
		resp.Status = "completed"
	}
}

// usageOf is chat usage in the Responses API's shape.
func usageOf(u *llm.Usage) *Usage {
	return &Usage{
		InputTokens:         u.PromptTokens,
		InputTokensDetails:  InputDetails{CachedTokens: u.Cached()},
		OutputTokens:        u.CompletionTokens,
		OutputTokensDetails: OutputDetails{ReasoningTokens: u.Reasoning()},
		TotalTokens:         u.Total(),
	}
}

// ChatUsage is a response's usage in chat's shape, for pricing and limits.
func ChatUsage(u *Usage) llm.Usage {
	if u == nil {
		return llm.Usage{}
	}
	out := llm.Usage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.TotalTokens}
	if u.InputTokensDetails.CachedTokens > 0 {
		out.PromptTokensDetails = &llm.PromptTokensDetails{CachedTokens: u.InputTokensDetails.CachedTokens}
	}
	if u.OutputTokensDetails.ReasoningTokens > 0 {
		out.CompletionTokensDetails = &llm.CompletionTokensDetails{ReasoningTokens: u.OutputTokensDetails.ReasoningTokens}
	}
	return out
}
