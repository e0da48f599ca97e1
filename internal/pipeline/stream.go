package pipeline

import (
	"errors"
	"io"

	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
)

// OnEvent is called for every event of a stream as it passes.
type OnEvent func(ev sse.Event)

// OnEnd is called once when a stream ends: with nil after a clean end, with the
// error otherwise (including a Close before the end, reported as ErrAbandoned).
type OnEnd func(err error)

// ErrAbandoned is passed to OnEnd when a stream is closed before its end,
// typically because the caller went away.
var ErrAbandoned = errors.New("stream closed before its end")

// Observe wraps s so that each event is passed to onEvent (may be nil) and
// onEnd (may be nil) runs exactly once when the stream ends or is closed.
func Observe(s llm.Stream, onEvent OnEvent, onEnd OnEnd) llm.Stream {
	return &observed{s: s, onEvent: onEvent, onEnd: onEnd}
}

type observed struct {
	s       llm.Stream
	onEvent OnEvent
	onEnd   OnEnd
	done    bool
}

func (o *observed) Next() (sse.Event, error) {
	ev, err := o.s.Next()
	if err != nil {
		if errors.Is(err, io.EOF) {
			o.finish(nil)
		} else {
			o.finish(err)
		}
		return ev, err
	}
	if o.onEvent != nil {
		o.onEvent(ev)
	}
	return ev, nil
}

func (o *observed) Close() error {
	err := o.s.Close()
	o.finish(ErrAbandoned)
	return err
}

func (o *observed) finish(err error) {
	if o.done {
		return
	}
	o.done = true
	if o.onEnd != nil {
		o.onEnd(err)
	}
}

// ObserveReader wraps r so that onEnd runs once when it reaches EOF (nil),
// fails (the error) or is closed early (ErrAbandoned).
func ObserveReader(r io.ReadCloser, onEnd OnEnd) io.ReadCloser {
	return &observedReader{r: r, onEnd: onEnd}
}

type observedReader struct {
	r     io.ReadCloser
	onEnd OnEnd
	done  bool
}

func (o *observedReader) Read(p []byte) (int, error) {
	n, err := o.r.Read(p)
	if err != nil {
		if errors.Is(err, io.EOF) {
			o.finish(nil)
		} else {
			o.finish(err)
		}
	}
	return n, err
}

func (o *observedReader) Close() error {
	err := o.r.Close()
	o.finish(ErrAbandoned)
	return err
}

func (o *observedReader) finish(err error) {
	if o.done {
		return
	}
	o.done = true
	if o.onEnd != nil {
		o.onEnd(err)
	}
}

// Rewrite wraps s so that fn sees every event before the caller does and
// decides its fate: it returns the event to pass on (the same or a changed
// one), ErrDrop to drop it (the next event is read), or any other error to
// end the stream with that error: s is closed (the upstream call ends) and
// the caller's Next returns the error, which the HTTP surface sends as the
// dialect's error event. This is how a stage acts on a stream still
// flowing: post-call compliance redacting a delta, the guard stopping a
// tool call. Nothing is buffered.
func Rewrite(s llm.Stream, fn func(ev sse.Event) (sse.Event, error)) llm.Stream {
	return &rewritten{s: s, fn: fn}
}

// ErrDrop, returned by a Rewrite function, drops the event.
var ErrDrop = errors.New("pipeline: drop the event")

type rewritten struct {
	s   llm.Stream
	fn  func(sse.Event) (sse.Event, error)
	err error // the error that ended the stream, returned from then on
}

func (r *rewritten) Next() (sse.Event, error) {
	if r.err != nil {
		return sse.Event{}, r.err
	}
	for {
		ev, err := r.s.Next()
		if err != nil {
			return ev, err
		}
		out, err := r.fn(ev)
		switch {
		case err == nil:
			return out, nil
		case errors.Is(err, ErrDrop):
			continue
		}
		r.err = err
		_ = r.s.Close()
		return sse.Event{}, err
	}
}

func (r *rewritten) Close() error { return r.s.Close() }
