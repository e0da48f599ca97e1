package provider

import (
	"io"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
)

// ScrubStream wraps an upstream stream so that nothing it yields carries the
// secrets (the key svc sent for the call): its errors come out through
// apierr.Scrubber.Error, and the data of events named "error" (a native
// stream relays the provider's error events as they are) through
// apierr.Scrubber.String. Every other event, and a clean end, passes
// untouched, at the cost of a comparison: the scrubber is built only when
// there is something to scrub.
func ScrubStream(st llm.Stream, secrets ...string) llm.Stream {
	return &scrubStream{Stream: st, s: apierr.NewScrubber(secrets...)}
}

type scrubStream struct {
	llm.Stream
	s *apierr.Scrubber
}

func (w *scrubStream) Next() (sse.Event, error) {
	ev, err := w.Stream.Next()
	if err == io.EOF {
		return ev, err // a clean end: nothing to scrub, and no scrubber to build
	}
	if err != nil {
		return ev, w.s.Error(err)
	}
	if ev.Event == "error" {
		ev.Data = []byte(w.s.String(string(ev.Data)))
	}
	return ev, nil
}
