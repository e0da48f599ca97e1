package cohere

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
	"github.com/svc-gateway/svc/internal/provider"
)

// maxEvent bounds one SSE event from Cohere.
const maxEvent = 8 << 20

// DecodeChatStream translates Cohere's v2 chat events into OpenAI chunks:
//
//	message-start    → a chunk with the assistant role
//	content-delta    → a content delta
//	tool-call-start  → a tool call delta with index, id, type, name and the
//	                   arguments the event carries (usually "")
//	tool-call-delta  → a piece of the current tool call's arguments
//	message-end      → a chunk with finish_reason, then (unless
//	                   info.HideUsage) a usage chunk with no choices, then EOF
//
// Other events (content-start, content-end, tool-plan-delta, tool-call-end,
// citations, debug) are skipped. A stream that ends before message-end, or
// whose message-end says ERROR, ends with an UpstreamError, which Next
// returns again if called again. Usage and tool calls are recorded
// in info; Cohere names no model: chunks carry info.Model when the caller sets
// it before decoding.
func (a *Adapter) DecodeChatStream(body io.ReadCloser, info *provider.StreamInfo) llm.Stream {
	return &stream{body: body, r: sse.NewReader(body, maxEvent), info: info, created: a.now().Unix(), tool: -1}
}

type stream struct {
	body       io.ReadCloser
	r          *sse.Reader
	info       *provider.StreamInfo
	created    int64
	id         string
	tool       int  // OpenAI index of the current tool call; -1 before the first
	usage      bool // the usage chunk is due
	done       bool
	llm.Sticky // Next after a failure fails the same way
	buf        []byte
}

// event is the part of a Cohere stream event the stream reads.
type event struct {
	Type  string `json:"type"`
	ID    string `json:"id"`
	Delta struct {
		Message struct {
			Content   contentDelta  `json:"content"`
			ToolCalls toolCallDelta `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
		Usage        *usage `json:"usage"`
	} `json:"delta"`
}

// contentDeltaEvent is a content-delta event.
type contentDeltaEvent struct {
	Type  string `json:"type"`
	Delta struct {
		Message struct {
			Content struct {
				Text *string `json:"text"`
			} `json:"content"`
		} `json:"message"`
	} `json:"delta"`
}

// contentDelta is delta.message.content: an object in content events, an
// array in message-start (ignored).
type contentDelta struct {
	Text *string
}

func (c *contentDelta) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	var v struct {
		Text *string `json:"text"`
	}
	err := json.Unmarshal(b, &v)
	c.Text = v.Text
	return err
}

// toolCallDelta is delta.message.tool_calls: an object in tool call events,
// an array in message-start (ignored).
type toolCallDelta struct {
	ID        string
	Name      string
	Arguments *string
	Present   bool
}

func (t *toolCallDelta) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	var v struct {
		ID       string `json:"id"`
		Function struct {
			Name      string  `json:"name"`
			Arguments *string `json:"arguments"`
		} `json:"function"`
	}
	err := json.Unmarshal(b, &v)
	*t = toolCallDelta{ID: v.ID, Name: v.Function.Name, Arguments: v.Function.Arguments, Present: true}
	return err
}

// Next is next with its failure made final (llm.Sticky).
func (s *stream) Next() (sse.Event, error) { return s.Sticky.Next(s.next) }

func (s *stream) next() (sse.Event, error) {
	for {
		if s.usage {
			s.usage, s.done = false, true
			u := s.info.Usage
			return s.emit(llm.ChatChunk{Choices: []llm.ChunkChoice{}, Usage: &u})
		}
		if s.done {
			return sse.Event{}, io.EOF
		}
		ev, err := s.r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return sse.Event{}, apierr.New(apierr.UpstreamError, "upstream_stream_truncated", "the provider's stream ended before message-end")
			}
			if errors.Is(err, sse.ErrEventTooLarge) {
				return sse.Event{}, apierr.Wrap(apierr.UpstreamError, "upstream_bad_response", "the provider sent an oversized stream event", err)
			}
			return sse.Event{}, apierr.Wrap(apierr.UpstreamError, "upstream_stream_failed", "the provider's stream failed", err)
		}
		data := bytes.TrimSpace(ev.Data)
		if len(data) == 0 {
			continue
		}
		if ev.Event == "content-delta" {
			// The hot path: Cohere names the event, and a content delta's
			// shape is fixed.
			var cd contentDeltaEvent
			if json.Unmarshal(data, &cd) == nil && (cd.Type == "" || cd.Type == "content-delta") {
				if t := cd.Delta.Message.Content.Text; t != nil {
					return s.emitContent(*t), nil
				}
				continue
			}
		}
		var e event
		if err := json.Unmarshal(data, &e); err != nil {
			return sse.Event{}, apierr.Wrap(apierr.UpstreamError, "upstream_bad_response", "the provider sent a stream event that is not JSON", err)
		}
		if e.Type == "" {
			e.Type = ev.Event
		}
		switch e.Type {
		case "message-start":
			s.id = e.ID
			empty := ""
			return s.emit(s.choice(llm.Delta{Role: "assistant", Content: &empty}, nil))
		case "content-delta":
			if t := e.Delta.Message.Content.Text; t != nil {
				return s.emitContent(*t), nil
			}
			continue // a thinking delta, or nothing
		case "tool-call-start":
			tc := &e.Delta.Message.ToolCalls
			if !tc.Present {
				return sse.Event{}, apierr.New(apierr.UpstreamError, "upstream_bad_response", "the provider sent a tool-call-start without a tool call")
			}
			s.tool++
			i := s.tool
			call := llm.ToolCall{Index: &i, ID: tc.ID, Type: "function", Function: llm.FunctionCall{Name: tc.Name}}
			if tc.Arguments != nil {
				call.Function.Arguments = *tc.Arguments
			}
			s.info.AddToolCall(0, i, call.ID, call.Function.Name, call.Function.Arguments)
			return s.emit(s.choice(llm.Delta{ToolCalls: []llm.ToolCall{call}}, nil))
		case "tool-call-delta":
			tc := &e.Delta.Message.ToolCalls
			if tc.Arguments == nil || s.tool < 0 {
				continue
			}
			i := s.tool
			s.info.AddToolCall(0, i, "", "", *tc.Arguments)
			call := llm.ToolCall{Index: &i, Function: llm.FunctionCall{Arguments: *tc.Arguments}}
			return s.emit(s.choice(llm.Delta{ToolCalls: []llm.ToolCall{call}}, nil))
		case "message-end":
			s.info.Usage = e.Delta.Usage.canonical()
			fr, ok := finishReason(e.Delta.FinishReason)
			if !ok {
				s.done = true
				return sse.Event{}, generationFailed(e.Delta.FinishReason)
			}
			s.usage = !s.info.HideUsage
			s.done = true
			return s.emit(s.choice(llm.Delta{}, &fr))
		}
	}
}

func (s *stream) choice(d llm.Delta, finish *string) llm.ChatChunk {
	return llm.ChatChunk{Choices: []llm.ChunkChoice{{Index: 0, Delta: d, FinishReason: finish}}}
}

// emit fills the chunk's common fields and encodes it.
func (s *stream) emit(c llm.ChatChunk) (sse.Event, error) {
	c.ID, c.Object, c.Created, c.Model = s.id, "chat.completion.chunk", s.created, s.info.Model
	b, err := json.Marshal(&c)
	if err != nil {
		return sse.Event{}, apierr.Wrap(apierr.Internal, "encode_failed", "could not encode a chat chunk", err)
	}
	s.buf = append(s.buf[:0], b...)
	return sse.Event{Data: s.buf}, nil
}

// emitContent encodes a content delta without reflection: the hot path.
// Its bytes are what emit would produce.
func (s *stream) emitContent(text string) sse.Event {
	b := s.buf[:0]
	b = append(b, `{"id":`...)
	b = llm.AppendJSONString(b, s.id)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, s.created, 10)
	b = append(b, `,"model":`...)
	b = llm.AppendJSONString(b, s.info.Model)
	b = append(b, `,"choices":[{"index":0,"delta":{"content":`...)
	b = llm.AppendJSONString(b, text)
	b = append(b, `},"finish_reason":null}]}`...)
	s.buf = b
	return sse.Event{Data: b}
}

func (s *stream) Close() error { return s.body.Close() }
