package anthropic

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

// maxEvent bounds one SSE event from the provider.
const maxEvent = 8 << 20

// DecodeChatStream translates a Messages API stream into OpenAI
// chat.completion.chunk events as they arrive, one upstream event at a time:
//
//	message_start                 → a chunk with the assistant role
//	content_block_start text      → a content chunk if the block has text
//	content_block_start tool_use  → a tool_calls chunk with id, name and empty arguments
//	content_block_delta text      → a content chunk
//	content_block_delta json      → a tool_calls chunk with the arguments piece
//	message_delta                 → a chunk with the finish_reason
//	message_stop                  → a usage-only chunk (unless info.HideUsage), then io.EOF
//
// Thinking blocks, pings and block stops produce nothing; an error event ends
// the stream with an apierr error. Usage, model and tool calls (tool_use
// blocks, their input from the input_json_delta pieces) are recorded in info.
// Chunk text is copied from the provider's JSON strings without decoding.
func (a *Adapter) DecodeChatStream(body io.ReadCloser, info *provider.StreamInfo) llm.Stream {
	return &stream{body: body, r: sse.NewReader(body, maxEvent), info: info}
}

// streamEvent is the part of a stream event svc reads. Strings relayed into
// chunks are kept as raw JSON, which the decoder copies into the same buffers
// event after event.
type streamEvent struct {
	Type    string `json:"type"`
	Index   int64  `json:"index"`
	Message struct {
		ID    json.RawMessage `json:"id"`
		Model json.RawMessage `json:"model"`
		Usage usage           `json:"usage"`
	} `json:"message"`
	ContentBlock struct {
		Type string          `json:"type"`
		ID   json.RawMessage `json:"id"`
		Name json.RawMessage `json:"name"`
		Text json.RawMessage `json:"text"`
	} `json:"content_block"`
	Delta struct {
		Type        string          `json:"type"`
		Text        json.RawMessage `json:"text"`
		PartialJSON json.RawMessage `json:"partial_json"`
		StopReason  string          `json:"stop_reason"`
	} `json:"delta"`
	Usage usage     `json:"usage"`
	Error errorInfo `json:"error"`
}

// reset clears e for the next event, keeping its buffers.
func (e *streamEvent) reset() {
	e.Type, e.Index = "", 0
	e.Message.ID, e.Message.Model, e.Message.Usage = e.Message.ID[:0], e.Message.Model[:0], usage{}
	e.ContentBlock.Type = ""
	e.ContentBlock.ID, e.ContentBlock.Name, e.ContentBlock.Text = e.ContentBlock.ID[:0], e.ContentBlock.Name[:0], e.ContentBlock.Text[:0]
	e.Delta.Type, e.Delta.StopReason = "", ""
	e.Delta.Text, e.Delta.PartialJSON = e.Delta.Text[:0], e.Delta.PartialJSON[:0]
	e.Usage = usage{}
	e.Error = errorInfo{}
}

// toolSlot maps an Anthropic content block index to an OpenAI tool call index.
type toolSlot struct {
	block int64
	call  int
}

type stream struct {
	body io.ReadCloser
	r    *sse.Reader
	info *provider.StreamInfo

	ev     streamEvent
	usage  usage
	prefix []byte // the chunk up to and including `"choices":[`
	out    []byte // the chunk being returned
	tools  []toolSlot
	done   bool  // message_stop seen
	err    error // sticky error
}

func (s *stream) Next() (sse.Event, error) {
	for {
		if s.err != nil {
			return sse.Event{}, s.err
		}
		if s.done {
			return sse.Event{}, io.EOF
		}
		ev, err := s.r.Next()
		if err != nil {
			s.err = readError(err)
			continue
		}
		if ev.Event == "ping" {
			continue
		}
		if text, ok := fastTextDelta(ev.Data); ok {
			if len(text) <= 2 {
				continue
			}
			return sse.Event{Data: s.content(text)}, nil
		}
		s.ev.reset()
		if err := json.Unmarshal(ev.Data, &s.ev); err != nil {
			s.err = apierr.Wrap(apierr.UpstreamError, "upstream_bad_response", "the provider sent a stream event that is not valid JSON", err)
			continue
		}
		typ := s.ev.Type
		if typ == "" {
			typ = ev.Event
		}
		if out, ok := s.translate(typ); ok {
			return sse.Event{Data: out}, nil
		}
	}
}

var (
	textDeltaHead = []byte(`{"type":"content_block_delta","index":`)
	textDeltaMid  = []byte(`,"delta":{"type":"text_delta","text":`)
	textDeltaTail = []byte(`}}`)
)

// fastTextDelta recognises, without decoding, a text delta in the compact
// form Anthropic sends, the bulk of every stream, and returns its text as a
// raw JSON string. Anything else is left to the decoder.
func fastTextDelta(data []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(data, textDeltaHead)
	if !ok {
		return nil, false
	}
	i := 0
	for i < len(rest) && i < 10 && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == 0 {
		return nil, false
	}
	rest, ok = bytes.CutPrefix(rest[i:], textDeltaMid)
	if !ok {
		return nil, false
	}
	text, ok := bytes.CutSuffix(rest, textDeltaTail)
	// One JSON string and nothing else: json.Valid refuses `"a"},"b":{"c"`.
	if !ok || !isString(text) || text[len(text)-1] != '"' || !json.Valid(text) {
		return nil, false
	}
	return text, true
}

// readError is the error for a failure to read the next upstream event.
func readError(err error) error {
	switch {
	case errors.Is(err, io.EOF):
		return apierr.New(apierr.UpstreamError, "upstream_stream_truncated", "the provider's stream was truncated: it ended before message_stop")
	case errors.Is(err, sse.ErrEventTooLarge):
		return apierr.Wrap(apierr.UpstreamError, "upstream_bad_response", "the provider sent an oversized stream event", err)
	}
	return apierr.Wrap(apierr.UpstreamError, "upstream_stream_failed", "the provider's stream failed", err)
}

// translate handles the decoded event of type typ and returns the chunk it
// becomes, if any.
func (s *stream) translate(typ string) ([]byte, bool) {
	e := &s.ev
	switch typ {
	case "message_start":
		s.usage = usage{}
		s.usage.merge(e.Message.Usage)
		s.info.Usage = s.usage.canonical()
		var model string
		if isString(e.Message.Model) {
			_ = json.Unmarshal(e.Message.Model, &model)
		}
		s.info.Model = model
		s.buildPrefix(e.Message.ID, e.Message.Model)
		return s.choice(`{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`), true

	case "content_block_start":
		switch e.ContentBlock.Type {
		case "text":
			if !isString(e.ContentBlock.Text) || len(e.ContentBlock.Text) <= 2 {
				return nil, false
			}
			return s.content(e.ContentBlock.Text), true
		case "tool_use":
			call := len(s.tools)
			s.tools = append(s.tools, toolSlot{block: e.Index, call: call})
			s.info.AddToolCall(0, call, jsonString(e.ContentBlock.ID), jsonString(e.ContentBlock.Name), "")
			b := s.start()
			b = append(b, `{"index":0,"delta":{"tool_calls":[{"index":`...)
			b = strconv.AppendInt(b, int64(call), 10)
			b = append(b, `,"id":`...)
			b = appendRawString(b, e.ContentBlock.ID)
			b = append(b, `,"type":"function","function":{"name":`...)
			b = appendRawString(b, e.ContentBlock.Name)
			b = append(b, `,"arguments":""}}]},"finish_reason":null}]}`...)
			s.out = b
			return b, true
		}
		return nil, false // thinking, redacted_thinking, server tools

	case "content_block_delta":
		switch e.Delta.Type {
		case "text_delta":
			if !isString(e.Delta.Text) || len(e.Delta.Text) <= 2 {
				return nil, false
			}
			return s.content(e.Delta.Text), true
		case "input_json_delta":
			call, ok := s.toolCall(e.Index)
			if !ok || !isString(e.Delta.PartialJSON) || len(e.Delta.PartialJSON) <= 2 {
				return nil, false
			}
			s.info.AddToolCall(0, call, "", "", jsonString(e.Delta.PartialJSON))
			b := s.start()
			b = append(b, `{"index":0,"delta":{"tool_calls":[{"index":`...)
			b = strconv.AppendInt(b, int64(call), 10)
			b = append(b, `,"function":{"arguments":`...)
			b = append(b, e.Delta.PartialJSON...)
			b = append(b, `}}]},"finish_reason":null}]}`...)
			s.out = b
			return b, true
		}
		return nil, false // thinking_delta, signature_delta, citations_delta

	case "message_delta":
		s.usage.merge(e.Usage)
		s.info.Usage = s.usage.canonical()
		if e.Delta.StopReason == "" {
			return nil, false
		}
		b := s.start()
		b = append(b, `{"index":0,"delta":{},"finish_reason":"`...)
		b = append(b, finishReason(e.Delta.StopReason)...)
		b = append(b, `"}]}`...)
		s.out = b
		return b, true

	case "message_stop":
		s.done = true
		if s.info.HideUsage {
			return nil, false
		}
		u, _ := json.Marshal(&s.info.Usage)
		b := s.start()
		b = append(b, `],"usage":`...)
		b = append(b, u...)
		b = append(b, '}')
		s.out = b
		return b, true

	case "error":
		s.err = streamError(e.Error)
		return nil, false
	}
	return nil, false // ping, content_block_stop, unknown events
}

// toolCall is the OpenAI tool call index of the content block at index.
func (s *stream) toolCall(index int64) (int, bool) {
	for i := len(s.tools) - 1; i >= 0; i-- {
		if s.tools[i].block == index {
			return s.tools[i].call, true
		}
	}
	return 0, false
}

// content is a chunk with the content delta raw, a JSON string.
func (s *stream) content(raw []byte) []byte {
	b := s.start()
	b = append(b, `{"index":0,"delta":{"content":`...)
	b = append(b, raw...)
	b = append(b, `},"finish_reason":null}]}`...)
	s.out = b
	return b
}

// choice is a chunk whose choices and end are rest.
func (s *stream) choice(rest string) []byte {
	s.out = append(s.start(), rest...)
	return s.out
}

// start begins a chunk in s.out with its common prefix.
func (s *stream) start() []byte {
	if s.prefix == nil {
		s.buildPrefix(nil, nil)
	}
	return append(s.out[:0], s.prefix...)
}

// buildPrefix sets the chunks' common prefix from the message's raw id and
// model.
func (s *stream) buildPrefix(id, model json.RawMessage) {
	b := append(s.prefix[:0], `{"id":`...)
	b = appendRawString(b, id)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, now().Unix(), 10)
	b = append(b, `,"model":`...)
	b = appendRawString(b, model)
	s.prefix = append(b, `,"choices":[`...)
}

func (s *stream) Close() error { return s.body.Close() }

// jsonString is the value of raw if it is a JSON string, else "".
func jsonString(raw json.RawMessage) string {
	var v string
	if isString(raw) {
		_ = json.Unmarshal(raw, &v)
	}
	return v
}

// isString reports whether raw is a JSON string (the decoder validated it).
func isString(raw json.RawMessage) bool { return len(raw) >= 2 && raw[0] == '"' }

// appendRawString appends raw if it is a JSON string, else "".
func appendRawString(b []byte, raw json.RawMessage) []byte {
	if !isString(raw) {
		return append(b, `""`...)
	}
	return append(b, raw...)
}
