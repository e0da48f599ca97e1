package anthropic

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
	"github.com/svc-gateway/svc/internal/provider"
)

// This file serves svc's /native/v1/messages route, which forwards Anthropic
// bodies untranslated: it only reads usage and model as they pass.

// NativeUsage reads the usage (in OpenAI's shape) and model of a non-stream
// Messages API answer.
func NativeUsage(body []byte) (llm.Usage, string, error) {
	var m struct {
		Type  string `json:"type"`
		Model string `json:"model"`
		Usage usage  `json:"usage"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return llm.Usage{}, "", badResponse(err)
	}
	if m.Type != "message" {
		return llm.Usage{}, "", badResponse(nil)
	}
	return m.Usage.canonical(), m.Model, nil
}

// NativeStream relays a Messages API stream event by event, unchanged (event
// name and data, pings included) but for credentials in error events, which
// are redacted (apierr.RedactShapes), recording usage and model in info from
// message_start and message_delta, and tool calls from tool_use blocks and
// their input_json_delta pieces (text deltas are not decoded). It ends with io.EOF after message_stop, or
// after relaying an error event (the provider ends the stream there); a
// stream that ends before either is an UpstreamError.
func NativeStream(body io.ReadCloser, info *provider.StreamInfo) llm.Stream {
	return &nativeStream{body: body, r: sse.NewReader(body, maxEvent), info: info}
}

type nativeStream struct {
	body  io.ReadCloser
	r     *sse.Reader
	info  *provider.StreamInfo
	usage usage
	tools []toolSlot
	done  bool
	err   error
}

var (
	typeMessageStart = []byte(`"message_start"`)
	typeMessageDelta = []byte(`"message_delta"`)
	typeMessageStop  = []byte(`"message_stop"`)
	typeError        = []byte(`"error"`)
	typeToolUse      = []byte(`"tool_use"`)
	typeInputJSON    = []byte(`"input_json_delta"`)
)

func (s *nativeStream) Next() (sse.Event, error) {
	if s.err != nil {
		return sse.Event{}, s.err
	}
	if s.done {
		return sse.Event{}, io.EOF
	}
	ev, err := s.r.Next()
	if err != nil {
		s.err = readError(err)
		return sse.Event{}, s.err
	}
	typ := ev.Event
	if typ == "" {
		typ = nativeType(ev.Data)
	}
	switch typ {
	case "message_start":
		var m struct {
			Message struct {
				Model string `json:"model"`
				Usage usage  `json:"usage"`
			} `json:"message"`
		}
		if json.Unmarshal(ev.Data, &m) == nil {
			s.usage = usage{}
			s.usage.merge(m.Message.Usage)
			s.info.Usage = s.usage.canonical()
			s.info.Model = m.Message.Model
		}
	case "message_delta":
		var m struct {
			Usage usage `json:"usage"`
		}
		if json.Unmarshal(ev.Data, &m) == nil {
			s.usage.merge(m.Usage)
			s.info.Usage = s.usage.canonical()
		}
	case "content_block_start":
		if bytes.Contains(ev.Data, typeToolUse) {
			s.toolStart(ev.Data)
		}
	case "content_block_delta":
		// Text deltas, the bulk of a stream, are not decoded.
		if bytes.Contains(ev.Data, typeInputJSON) {
			s.toolDelta(ev.Data)
		}
	case "message_stop":
		s.done = true
	case "error":
		// The provider's error text goes to the caller as it is: redact
		// credentials (the caller scrubs the exact key with ScrubStream).
		s.done = true
		if r := apierr.RedactShapes(string(ev.Data)); r != string(ev.Data) {
			ev.Data = []byte(r)
		}
	}
	return ev, nil
}

// toolStart records a tool_use block's start in info.
func (s *nativeStream) toolStart(data []byte) {
	var e struct {
		Index        int64 `json:"index"`
		ContentBlock struct {
			Type string `json:"type"`
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"content_block"`
	}
	if json.Unmarshal(data, &e) != nil || e.ContentBlock.Type != "tool_use" {
		return
	}
	call := len(s.tools)
	s.tools = append(s.tools, toolSlot{block: e.Index, call: call})
	s.info.AddToolCall(0, call, e.ContentBlock.ID, e.ContentBlock.Name, "")
}

// toolDelta records a piece of a tool_use block's input in info.
func (s *nativeStream) toolDelta(data []byte) {
	var e struct {
		Index int64 `json:"index"`
		Delta struct {
			Type        string `json:"type"`
			PartialJSON string `json:"partial_json"`
		} `json:"delta"`
	}
	if json.Unmarshal(data, &e) != nil || e.Delta.Type != "input_json_delta" {
		return
	}
	for i := len(s.tools) - 1; i >= 0; i-- {
		if s.tools[i].block == e.Index {
			s.info.AddToolCall(0, s.tools[i].call, "", "", e.Delta.PartialJSON)
			return
		}
	}
}

// nativeType finds the type of an event the stream did not name, cheaply:
// only the types NativeStream acts on (content blocks only when they hold a
// tool call).
func nativeType(data []byte) string {
	var t struct {
		Type string `json:"type"`
	}
	for _, k := range [][]byte{typeMessageStart, typeMessageDelta, typeMessageStop, typeError, typeToolUse, typeInputJSON} {
		if bytes.Contains(data, k) {
			if json.Unmarshal(data, &t) == nil {
				return t.Type
			}
			return ""
		}
	}
	return ""
}

func (s *nativeStream) Close() error { return s.body.Close() }
