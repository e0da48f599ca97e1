package provider

import (
	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
)

// ScrubStream wraps an upstream stream so that nothing it yields carries the
// secrets (the key svc sent for the call): its errors come out through
// apierr.Scrubber.Error, and the data of events named "error" (a native
// stream relays the provider's error events as they are) through
// apierr.Scrubber.String. Every other event passes untouched, at the cost of
// one comparison.
func ScrubStream(st llm.Stream, secrets ...string) llm.Stream {
	return &scrubStream{Stream: st, s: apierr.NewScrubber(secrets...)}
}

type scrubStream struct {
	llm.Stream
	s *apierr.Scrubber
}

func (w *scrubStream) Next() (sse.Event, error) {
	ev, err := w.Stream.Next()
	if err != nil {
		return ev, w.s.Error(err)
	}
	if ev.Event == "error" {
		ev.Data = []byte(w.s.String(string(ev.Data)))
	}
	return ev, nil
}
