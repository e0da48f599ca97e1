package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
)

// maxEvent bounds one event of a provider's Responses stream: the terminal
// event repeats the whole response.
const maxEvent = 16 << 20

// Relay passes a provider's own Responses stream on event by event,
// unchanged. At its terminal event (response.completed, .incomplete or
// .failed) it decodes the response the event carries and calls done with
// it before returning the event; a stream that ends without one, or an
// error event from the provider, ends the relay with an error. Only
// terminal events are decoded.
func Relay(body io.ReadCloser, done func(*Response)) llm.Stream {
	return &relay{body: body, r: sse.NewReader(body, maxEvent), done: done}
}

type relay struct {
	llm.Sticky
	body  io.ReadCloser
	r     *sse.Reader
	done  func(*Response)
	ended bool
}

var typeKey = []byte(`"type"`)

// Next returns the next event.
func (s *relay) Next() (sse.Event, error) { return s.Sticky.Next(s.next) }

func (s *relay) next() (sse.Event, error) {
	if s.ended {
		return sse.Event{}, io.EOF
	}
	ev, err := s.r.Next()
	switch {
	case errors.Is(err, io.EOF):
		return sse.Event{}, apierr.New(apierr.UpstreamError, "upstream_stream_truncated", "the provider's stream ended before the response completed")
	case errors.Is(err, sse.ErrEventTooLarge):
		return sse.Event{}, apierr.Wrap(apierr.UpstreamError, "upstream_bad_response", "the provider sent an oversized stream event", err)
	case err != nil:
		return sse.Event{}, apierr.Wrap(apierr.UpstreamError, "upstream_stream_failed", "the provider's stream failed", err)
	}
	typ := ev.Event
	if typ == "" && bytes.Contains(ev.Data, typeKey) {
		var t struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(ev.Data, &t)
		typ = t.Type
	}
	switch {
	case typ == EventError:
		return sse.Event{}, providerError(ev.Data)
	case Terminal(typ):
		var t struct {
			Response *Response `json:"response"`
		}
		if err := json.Unmarshal(ev.Data, &t); err != nil || t.Response == nil {
			return sse.Event{}, apierr.New(apierr.UpstreamError, "upstream_bad_response", "the provider's final stream event could not be read")
		}
		s.ended = true
		if s.done != nil {
			s.done(t.Response)
		}
	}
	return ev, nil
}

// providerError is a provider's error event as an error for the caller.
func providerError(data []byte) error {
	var e struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(data, &e)
	if e.Message == "" {
		e.Message = "the provider's stream failed"
	}
	if e.Code == "" {
		e.Code = "upstream_stream_error"
	}
	return apierr.New(apierr.UpstreamError, e.Code, e.Message)
}

// Close closes the provider's body.
func (s *relay) Close() error { return s.body.Close() }
