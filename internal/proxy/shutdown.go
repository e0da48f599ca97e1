package proxy

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/svc-gateway/svc/internal/apierr"
)

// errShuttingDown is the error of an exchange that was still running when
// the server's drain time ran out.
var errShuttingDown = apierr.Wrap(apierr.Unavailable, "shutting_down",
	"svc is shutting down: the request was still running when the drain time (SVC_SHUTDOWN_TIMEOUT) ran out; retry it",
	errors.New("proxy: aborted past the drain time"))

// Abort ends the exchanges still running, for the server to call when its
// drain time has passed: every stream (and raw body) in flight has its
// upstream body closed, so it ends with a 503 shutting_down error event
// right away, and every exchange that fails from then on is recorded as cut
// by the shutdown (the connections of requests still waiting for an answer
// are closed next, by the server).
func (p *Proxy) Abort() {
	p.aborting.Store(true)
	p.running.closeAll()
}

// inflight holds the upstream bodies of the streams in flight, so that
// Abort can end them. It is sharded: every stream adds and removes itself,
// and one mutex would be contended at high concurrency.
type inflight struct {
	next   atomic.Uint64
	shards [inflightShards]struct {
		mu sync.Mutex
		m  map[uint64]io.Closer
		_  [48]byte // keep shards on separate cache lines
	}
}

const inflightShards = 32

// handle identifies an entry of inflight.
type handle uint64

// add registers c and returns its handle.
func (f *inflight) add(c io.Closer) handle {
	id := f.next.Add(1)
	s := &f.shards[id%inflightShards]
	s.mu.Lock()
	if s.m == nil {
		s.m = make(map[uint64]io.Closer)
	}
	s.m[id] = c
	s.mu.Unlock()
	return handle(id)
}

// remove drops the entry of h.
func (f *inflight) remove(h handle) {
	s := &f.shards[uint64(h)%inflightShards]
	s.mu.Lock()
	delete(s.m, uint64(h))
	s.mu.Unlock()
}

// closeAll closes every registered body.
func (f *inflight) closeAll() {
	for i := range f.shards {
		s := &f.shards[i]
		s.mu.Lock()
		for _, c := range s.m {
			_ = c.Close()
		}
		s.mu.Unlock()
	}
}
