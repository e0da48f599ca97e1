package audit

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/svc-gateway/svc/internal/metrics"
	"github.com/svc-gateway/svc/internal/store"
)

// HotLogKey is the stream holding the hot tier of entries.
const HotLogKey = "vas:logs"

// Stream groups of the hot tier: the bridge drains the hot tier into SQL;
// the forwarder drains a process's spool into the shared hot tier.
const (
	BridgeGroup  = "bridge"
	forwardGroup = "forward"
)

// forwardBatch bounds the entries one forward moves.
const forwardBatch = 512

// Streams is what the Logger needs of a stream: the store.Streams block.
type Streams = store.Streams

// Options configure a Logger.
type Options struct {
	// Spool is the local, durable stream every entry is appended to before
	// Record returns (internal/spool): the page cache holds it once Record
	// returned, so a process killed at any point after loses no entry.
	// Nil: audit is off (SVC_AUDIT_ENABLED=false), Record does nothing.
	Spool Streams
	// Hot is the shared hot tier (a Redis stream) the forwarder moves the
	// spool's entries to; nil when the spool is itself the hot tier (the
	// embedded default: the in-process bridge drains it).
	Hot Streams
	// Consumer names this process among the spool's consumers.
	Consumer string
	// FlushInterval is the longest an entry waits in the spool before the
	// forwarder moves it (default 100ms).
	FlushInterval time.Duration
}

// Logger records entries: Record encodes the entry and appends it to the
// local spool, synchronously (a write(2), no fsync), so an entry is
// durable before the answer's last byte leaves; a forwarder moves the
// spool's entries to the shared hot tier in batches, acknowledging them in
// the spool only once the hot tier has them. The bridge writes the hot tier
// into SQL; the Logger never writes SQL.
type Logger struct {
	opt Options
	m   *metrics.Metrics
	log *slog.Logger

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// NewLogger starts the forwarder (when opt.Hot is set).
func NewLogger(m *metrics.Metrics, log *slog.Logger, opt Options) *Logger {
	if opt.FlushInterval <= 0 {
		opt.FlushInterval = 100 * time.Millisecond
	}
	if opt.Consumer == "" {
		opt.Consumer = "svc"
	}
	l := &Logger{opt: opt, m: m, log: log, stop: make(chan struct{}), done: make(chan struct{})}
	if opt.Hot == nil || opt.Spool == nil {
		close(l.done)
		return l
	}
	go l.forward()
	return l
}

// Record makes e durable: appended to the spool, else (the spool full or
// failing) to the hot tier directly. An entry neither takes is logged by
// request id and counted (svc_audit_write_failures_total).
func (l *Logger) Record(e *Entry) {
	if l.opt.Spool == nil {
		return
	}
	buf := encodeBufs.Get().(*[]byte)
	js := e.AppendJSON((*buf)[:0])
	// The spool is a local file write: no deadline (and no timer per
	// request) to set up for it. It copies js into its file before it
	// returns, so the buffer serves the next entry.
	err := l.opt.Spool.StreamAppend(context.Background(), HotLogKey, js)
	if err == nil {
		if cap(js) <= maxPooledEntry {
			*buf = js
			encodeBufs.Put(buf)
		}
		return
	}
	// js is not pooled again: the hot tier's client might hold it past a
	// timeout.
	if l.opt.Hot != nil && l.direct(e, js) {
		return
	}
	if l.m != nil {
		l.m.AuditDropped.Inc()
	}
	l.log.Error("audit entry lost: the spool refused it and no hot tier took it", "request_id", e.RequestID, "err", err)
}

// encodeBufs are Record's encoding buffers, reused from entry to entry;
// maxPooledEntry bounds the buffers kept (a large entry's is dropped).
var encodeBufs = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

const maxPooledEntry = 64 << 10

// direct writes js to the hot tier itself, the spool having refused it,
// and reports whether the hot tier took it.
func (l *Logger) direct(e *Entry, js []byte) bool {
	if l.m != nil {
		l.m.AuditDirect.Inc()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return l.opt.Hot.StreamAppend(ctx, HotLogKey, js) == nil
}

// Close stops the forwarder after a last forward (bounded by ctx's
// deadline; entries it could not move stay in the spool for the next
// start).
func (l *Logger) Close() {
	l.once.Do(func() { close(l.stop) })
	<-l.done
}

// forward moves the spool's entries to the hot tier until Close, then once
// more: a batch every FlushInterval (at once again after a full batch), so
// entries move in batches, not one XADD per request. A hot tier that fails
// is retried with backoff (up to 5 s); the entries wait in the spool, which
// is the bounded local spill.
func (l *Logger) forward() {
	defer close(l.done)
	backoff := l.opt.FlushInterval
	for {
		moved, err := l.forwardOnce(context.Background(), 0)
		wait := l.opt.FlushInterval
		switch {
		case err != nil:
			if l.m != nil {
				l.m.AuditForwardFailures.Inc()
			}
			l.log.Warn("audit forward to the hot tier failed; entries wait in the spool", "err", err, "retry_in", backoff)
			wait, backoff = backoff, min(backoff*2, 5*time.Second)
		case moved == forwardBatch:
			wait, backoff = 0, l.opt.FlushInterval
		default:
			backoff = l.opt.FlushInterval
		}
		select {
		case <-l.stop:
			l.drain()
			return
		case <-time.After(wait):
		}
	}
}

// drain forwards what the spool holds, for up to 5 s.
func (l *Logger) drain() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		moved, err := l.forwardOnce(ctx, 0)
		if err != nil || moved == 0 {
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				l.log.Warn("audit entries left in the spool at shutdown; the next start forwards them", "err", err)
			}
			return
		}
	}
}

// forwardOnce moves up to forwardBatch entries (waiting up to block for
// some) and returns how many.
func (l *Logger) forwardOnce(ctx context.Context, block time.Duration) (int, error) {
	return Move(ctx, l.opt.Spool, forwardGroup, l.opt.Consumer, l.opt.Hot, forwardBatch, block)
}

// Move moves up to n entries of the hot-tier stream from one store to
// another: read as consumer of group in from (waiting up to block for
// some), appended to to (bounded by 5 s), then acknowledged in from — so an
// entry is in one of the two at every moment, and in both only until the
// acknowledgement (at least once). It returns how many it moved. The
// forwarder moves a spool to Redis with it; a starting process moves a
// dead process's spool into its own.
func Move(ctx context.Context, from Streams, group, consumer string, to Streams, n int, block time.Duration) (int, error) {
	es, err := from.StreamRead(ctx, HotLogKey, group, consumer, n, time.Minute, block)
	if err != nil || len(es) == 0 {
		return 0, err
	}
	vals := make([][]byte, len(es))
	ids := make([]string, len(es))
	for i, e := range es {
		vals[i], ids[i] = e.Value, e.ID
	}
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := to.StreamAppend(tctx, HotLogKey, vals...); err != nil {
		return 0, err
	}
	if err := from.StreamAck(ctx, HotLogKey, group, ids...); err != nil {
		return 0, err
	}
	return len(es), nil
}
