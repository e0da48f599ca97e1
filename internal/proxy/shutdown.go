package proxy

import (
	"errors"
	"io"
	"sync"

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
// right away (upstreamStream), and every exchange that fails from then on
// is recorded as cut by the shutdown (the record stage; the connections of
// requests still waiting for an answer are closed next, by the server).
func (p *Proxy) Abort() {
	p.aborting.Store(true)
	p.running.closeAll()
}

// inflight holds the upstream bodies of the streams in flight, so that
// Abort can end them.
type inflight struct {
	mu   sync.Mutex
	next handle
	m    map[handle]io.Closer
}

// handle identifies an entry of inflight.
type handle uint64

// add registers c and returns its handle.
func (f *inflight) add(c io.Closer) handle {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = make(map[handle]io.Closer)
	}
	f.next++
	f.m[f.next] = c
	return f.next
}

// remove drops the entry of h.
func (f *inflight) remove(h handle) {
	f.mu.Lock()
	delete(f.m, h)
	f.mu.Unlock()
}

// closeAll closes every registered body.
func (f *inflight) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.m {
		_ = c.Close()
	}
}
