package llm

import (
	"errors"
	"io"

	"github.com/svc-gateway/svc/internal/llm/sse"
)

// Stream is a pull-based sequence of SSE events in the client's wire format
// (for OpenAI chat: one chat.completion.chunk JSON per event, without the final
// [DONE], which the HTTP surface writes). Next returns io.EOF after the last
// event; the event's Data is valid until the next call. Close releases the
// upstream connection and may be called at any time, more than once.
//
// Pipeline stages wrap a Stream to observe it (usage, caching, post-call
// scans); nothing buffers a whole stream.
type Stream interface {
	Next() (sse.Event, error)
	Close() error
}

// Sticky makes a stream's failure final: once the stream function it
// wraps returned an error other than io.EOF, every later call returns that
// error again (a client must not read a failed stream as a clean end).
// Adapters embed it and define Next as s.Sticky.Next(s.next).
type Sticky struct{ err error }

// Next returns next's event, or the error the stream already failed with.
func (s *Sticky) Next(next func() (sse.Event, error)) (sse.Event, error) {
	if s.err != nil {
		return sse.Event{}, s.err
	}
	ev, err := next()
	if err != nil && !errors.Is(err, io.EOF) {
		s.err = err
	}
	return ev, err
}
