package provider_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm/sse"
	"github.com/svc-gateway/svc/internal/provider"
)

// events is an llm.Stream of fixed events, then end.
type events struct {
	evs []sse.Event
	end error
}

func (s *events) Next() (sse.Event, error) {
	if len(s.evs) == 0 {
		return sse.Event{}, s.end
	}
	e := s.evs[0]
	s.evs = s.evs[1:]
	return e, nil
}

func (s *events) Close() error { return nil }

func TestScrubStream(t *testing.T) {
	const key = "local-Server-secret-42"
	chunk := sse.Event{Data: []byte(`{"choices":[{"delta":{"content":"hi"}}]}`)}
	errEvent := sse.Event{Event: "error", Data: []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"bad key ` + key + `"}}`)}
	upstream := &events{
		evs: []sse.Event{chunk, errEvent},
		end: apierr.New(apierr.UpstreamError, "upstream_stream_error", "the provider reported an error mid-stream: key "+key),
	}
	st := provider.ScrubStream(upstream, key)
	var got []sse.Event
	var end error
	for {
		e, err := st.Next()
		if err != nil {
			end = err
			break
		}
		got = append(got, e)
	}
	want := []sse.Event{chunk, {Event: "error", Data: []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"bad key [redacted]"}}`)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if e := apierr.From(end); e.Kind != apierr.UpstreamError || strings.Contains(end.Error(), key) || strings.Contains(string(apierr.JSON(end)), key) {
		t.Errorf("end: got %v (%v), want the UpstreamError without the key", end, e.Kind)
	}
	clean := provider.ScrubStream(&events{end: io.EOF}, key)
	if _, err := clean.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("a clean end: got %v, want io.EOF", err)
	}
}

// TestScrubStreamCleanIsFree checks a stream that ends well costs the
// wrapper nothing per event and builds no scrubber: the allocations of a
// whole relay are those of wrapping it.
func TestScrubStreamCleanIsFree(t *testing.T) {
	chunk := sse.Event{Data: []byte(`{"choices":[{"delta":{"content":"hi"}}]}`)}
	evs := make([]sse.Event, 100)
	for i := range evs {
		evs[i] = chunk
	}
	up := &events{end: io.EOF}
	allocs := testing.AllocsPerRun(100, func() {
		up.evs = evs
		st := provider.ScrubStream(up, "local-Server-secret-42")
		for {
			if _, err := st.Next(); err != nil {
				break
			}
		}
	})
	if allocs > 3 {
		t.Errorf("a clean 100-event relay allocates %v times, want at most 3 (the wrapper)", allocs)
	}
}
