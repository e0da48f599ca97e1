package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
	"github.com/svc-gateway/svc/internal/provider"
)

// maxEvent bounds one SSE event from a provider.
const maxEvent = 8 << 20

// DecodeChatStream relays the provider's chunks as they are, ending at [DONE]
// (which the HTTP surface writes itself). Usage, model and tool calls are
// recorded in info; only the chunks that name tool_calls are decoded for the
// latter (mayHaveToolCalls).
// A failure ends the stream: Next returns it again if called again.
func (a *Adapter) DecodeChatStream(body io.ReadCloser, info *provider.StreamInfo) llm.Stream {
	return &stream{body: body, r: sse.NewReader(body, maxEvent), info: info}
}

type stream struct {
	body       io.ReadCloser
	r          *sse.Reader
	info       *provider.StreamInfo
	done       bool
	llm.Sticky // Next after a failure fails the same way
}

var (
	doneData     = []byte("[DONE]")
	usageKey     = []byte(`"usage"`)
	errorPrefix  = []byte(`{"error"`)
	toolCallsKey = []byte(`"tool_calls"`)
)

// Next is next with its failure made final (llm.Sticky).
func (s *stream) Next() (sse.Event, error) { return s.Sticky.Next(s.next) }

func (s *stream) next() (sse.Event, error) {
	for {
		if s.done {
			return sse.Event{}, io.EOF
		}
		ev, err := s.r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return sse.Event{}, apierr.New(apierr.UpstreamError, "upstream_stream_truncated", "the provider's stream ended before [DONE]")
			}
			if errors.Is(err, sse.ErrEventTooLarge) {
				return sse.Event{}, apierr.Wrap(apierr.UpstreamError, "upstream_bad_response", "the provider sent an oversized stream event", err)
			}
			return sse.Event{}, apierr.Wrap(apierr.UpstreamError, "upstream_stream_failed", "the provider's stream failed", err)
		}
		data := bytes.TrimSpace(ev.Data)
		if bytes.Equal(data, doneData) {
			s.done = true
			return sse.Event{}, io.EOF
		}
		if len(data) == 0 {
			continue
		}
		if bytes.HasPrefix(data, errorPrefix) {
			return sse.Event{}, streamError(data)
		}
		if mayHaveToolCalls(data) {
			s.recordToolCalls(data)
		}
		if s.info.Model == "" || hasUsage(data) {
			var sum summary
			if err := jsonv2.Unmarshal(data, &sum, lenient); err == nil {
				if s.info.Model == "" {
					s.info.Model = sum.Model
				}
				if sum.Usage != nil {
					s.info.Usage = *sum.Usage
					if s.info.HideUsage && len(sum.Choices) == 0 {
						continue
					}
				}
			}
		}
		return ev, nil
	}
}

func (s *stream) Close() error { return s.body.Close() }

// mayHaveToolCalls reports, cheaply, whether a chunk may carry tool call
// deltas: they are an array inside the choices array, so a chunk with one
// '[' (the bulk of a stream) has none; only a chunk with more is searched
// for the key (a content chunk cannot hold it unescaped).
func mayHaveToolCalls(data []byte) bool {
	i := bytes.IndexByte(data, '[')
	if i < 0 || bytes.IndexByte(data[i+1:], '[') < 0 {
		return false
	}
	return bytes.Contains(data, toolCallsKey)
}

// toolChunk is the part of a chunk with tool call deltas svc reads.
type toolChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
	} `json:"choices"`
}

// recordToolCalls adds the chunk's tool call deltas to info. A chunk that
// does not decode is relayed all the same, as the rest of the stream is.
func (s *stream) recordToolCalls(data []byte) {
	var c toolChunk
	if jsonv2.Unmarshal(data, &c, lenient) != nil {
		return
	}
	for _, ch := range c.Choices {
		for _, d := range ch.Delta.ToolCalls {
			s.info.AddToolCall(ch.Index, d.Index, d.ID, d.Function.Name, d.Function.Arguments)
		}
	}
}

// streamError turns an in-stream error object into an UpstreamError.
func streamError(data []byte) error {
	var b errorBody
	_ = json.Unmarshal(data, &b)
	msg := "the provider reported an error mid-stream"
	if b.Error.Message != "" {
		msg += ": " + apierr.Redact(b.Error.Message)
	}
	return apierr.New(apierr.UpstreamError, "upstream_stream_error", msg)
}

// hasUsage reports whether a chunk carries a usage object. Every chunk of an
// OpenAI stream with include_usage has "usage":null, so looking for the key
// alone would decode every chunk.
func hasUsage(data []byte) bool {
	for rest := data; ; {
		i := bytes.Index(rest, usageKey)
		if i < 0 {
			return false
		}
		rest = rest[i+len(usageKey):]
		v := bytes.TrimLeft(rest, " \t\r\n")
		if len(v) > 0 && v[0] == ':' {
			v = bytes.TrimLeft(v[1:], " \t\r\n")
			if len(v) > 0 && v[0] == '{' {
				return true
			}
		}
	}
}
