package proxy

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
)

// errShutdown is the cause an exchange's context ends with when the server
// ran out of drain time.
var errShutdown = errors.New("proxy: shutting down")

// shutdownError is the caller's error for an exchange cut by the shutdown,
// or nil when ctx did not end for that reason.
func shutdownError(ctx context.Context) error {
	if !errors.Is(context.Cause(ctx), errShutdown) {
		return nil
	}
	return apierr.Wrap(apierr.Unavailable, "shutting_down",
		"svc is shutting down: the request was still running when the drain time (SVC_SHUTDOWN_TIMEOUT) ran out; retry it", errShutdown)
}

// cutByShutdown reports the shutdown, instead of the read error it caused,
// as the error of a stream cut by it.
type cutByShutdown struct {
	llm.Stream
	ctx context.Context
}

func (s cutByShutdown) Next() (sse.Event, error) {
	ev, err := s.Stream.Next()
	if err != nil && !errors.Is(err, io.EOF) {
		if e := shutdownError(s.ctx); e != nil {
			return ev, e
		}
	}
	return ev, err
}

// inflight holds the cancel functions of the exchanges running, so that
// Abort can end them with errShutdown. It is sharded: every request adds
// and removes itself, and one mutex would be contended at high concurrency.
type inflight struct {
	next   atomic.Uint64
	shards [inflightShards]struct {
		mu sync.Mutex
		m  map[uint64]context.CancelCauseFunc
		_  [48]byte // keep shards on separate cache lines
	}
}

const inflightShards = 32

// add registers cancel and returns the function that removes it.
func (f *inflight) add(cancel context.CancelCauseFunc) (remove func()) {
	id := f.next.Add(1)
	s := &f.shards[id%inflightShards]
	s.mu.Lock()
	if s.m == nil {
		s.m = make(map[uint64]context.CancelCauseFunc)
	}
	s.m[id] = cancel
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.m, id)
		s.mu.Unlock()
	}
}

// cancelAll ends every registered exchange with cause.
func (f *inflight) cancelAll(cause error) {
	for i := range f.shards {
		s := &f.shards[i]
		s.mu.Lock()
		for _, cancel := range s.m {
			cancel(cause)
		}
		s.mu.Unlock()
	}
}
