package audit

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/svc-gateway/svc/internal/metrics"
	"github.com/svc-gateway/svc/internal/store"
)

// HotLogKey is the KV log holding the hot tier of entries.
const HotLogKey = "vas:logs"

// maxBatch bounds one write: one SQL transaction and one hot-tier append.
// The writer yields between batches. (Batches of 64, tried to shorten the
// writer's runs on one CPU, did not move p99 there and cost 5–7 % of
// throughput at c=64: docs/benchmarks.md.)
const maxBatch = 512

// Options configure a Logger.
type Options struct {
	QueueSize     int
	FlushInterval time.Duration
	HotTTL        time.Duration
	// HotMaxEntries caps the hot tier's length (it must not grow with load).
	HotMaxEntries int
}

// HotTier is where the Logger keeps the recent entries: AppendLog of the
// hot-state store's Logs block (memkv in one process, rediskv across
// processes).
type HotTier interface {
	AppendLog(ctx context.Context, key string, lim store.LogLimit, values ...[]byte) error
}

// Logger writes entries off the request path. Record enqueues; a writer
// goroutine batches entries into the KV hot tier and the SQL store. When the
// queue is full, Record writes the entry itself (counted by a metric) rather
// than dropping it. Close drains and flushes everything.
type Logger struct {
	store Store
	hot   HotTier
	m     *metrics.Metrics
	log   *slog.Logger
	opt   Options

	q    chan *Entry
	stop chan struct{} // closed by Close: drain now
	done chan struct{}

	mu     sync.RWMutex // guards closed against Record racing Close
	closed bool
}

// NewLogger starts the writer, which keeps entries in hot and records in s.
func NewLogger(s Store, hot HotTier, m *metrics.Metrics, log *slog.Logger, opt Options) *Logger {
	if opt.QueueSize <= 0 {
		opt.QueueSize = 8192
	}
	if opt.FlushInterval <= 0 {
		opt.FlushInterval = 200 * time.Millisecond
	}
	if opt.HotTTL <= 0 {
		opt.HotTTL = 2 * time.Hour
	}
	if opt.HotMaxEntries <= 0 {
		opt.HotMaxEntries = 10000
	}
	l := &Logger{store: s, hot: hot, m: m, log: log, opt: opt,
		q: make(chan *Entry, opt.QueueSize), stop: make(chan struct{}), done: make(chan struct{})}
	go l.run()
	return l
}

// QueueLen is the number of entries waiting.
func (l *Logger) QueueLen() int { return len(l.q) }

// Record writes e eventually; it never blocks on the stores unless the queue
// is full or the logger is closed, in which case it writes e synchronously.
func (l *Logger) Record(e *Entry) {
	l.mu.RLock()
	if !l.closed {
		select {
		case l.q <- e:
			l.mu.RUnlock()
			return
		default:
		}
	}
	l.mu.RUnlock()
	if l.m != nil {
		l.m.AuditDirect.Inc()
	}
	l.write(context.Background(), []*Entry{e})
}

// Close stops the writer after it has written every queued entry. Entries
// recorded after Close are written synchronously.
func (l *Logger) Close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		<-l.done
		return
	}
	l.closed = true
	close(l.q)
	close(l.stop)
	l.mu.Unlock()
	<-l.done
}

// run wakes on its tick (or at Close) and drains whatever is queued, so a
// request never wakes the writer: a receive per entry cost every request a
// goroutine wake-up.
func (l *Logger) run() {
	defer close(l.done)
	tick := time.NewTicker(l.opt.FlushInterval)
	defer tick.Stop()
	batch := make([]*Entry, 0, maxBatch)
	flush := func() {
		if len(batch) > 0 {
			l.write(context.Background(), batch)
			clear(batch)
			batch = batch[:0]
			runtime.Gosched() // let the requests waiting for a CPU run
		}
	}
	for {
		select {
		case <-tick.C:
		case <-l.stop:
		}
		for {
			select {
			case e, ok := <-l.q:
				if !ok {
					flush()
					return
				}
				batch = append(batch, e)
				if len(batch) == maxBatch {
					flush()
				}
				continue
			default:
			}
			break
		}
		flush()
	}
}

// writeAttempts bounds the tries of a batch the SQL store failed for a
// reason other than its records' data (the database down, a timeout); the
// entries stay in the hot tier after the last.
const writeAttempts = 5

// write persists entries: the hot tier (best effort) and SQL. A batch the
// store fails is retried (writeAttempts times, with backoff), unless the
// store says the failure lies in some records' data (*DataError): it has then
// stored every other record, and retrying would fail the same way. Entries
// that are not stored are logged by request id; every failed write counts in
// svc_audit_write_failures_total.
func (l *Logger) write(ctx context.Context, entries []*Entry) {
	recs := make([]Record, 0, len(entries))
	hot := make([][]byte, 0, len(entries))
	for _, e := range entries {
		js, err := json.Marshal(e)
		if err != nil {
			l.log.Error("audit entry not encodable", "request_id", e.RequestID, "err", err)
			continue
		}
		recs = append(recs, e.record(js))
		hot = append(hot, js)
	}
	kctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	if err := l.hot.AppendLog(kctx, HotLogKey, store.LogLimit{MaxAge: l.opt.HotTTL, MaxLen: l.opt.HotMaxEntries}, hot...); err != nil {
		l.log.Warn("audit hot tier write failed; entries still go to SQL", "entries", len(hot), "err", err)
	}
	cancel()
	if len(recs) == 0 {
		return
	}
	backoff := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := l.store.InsertLogs(sctx, recs)
		cancel()
		if err == nil {
			return
		}
		if l.m != nil {
			l.m.AuditDropped.Inc() // svc_audit_write_failures_total: failed batch writes
		}
		var de *DataError
		if errors.As(err, &de) {
			l.refused(de)
			return
		}
		if attempt == writeAttempts {
			ids := make([]string, len(recs))
			for i, r := range recs {
				ids[i] = r.RequestID
			}
			l.log.Error("audit entries could not be persisted to SQL; they remain in the hot tier", "request_ids", ids, "err", err)
			return
		}
		l.log.Warn("audit batch write failed; retrying", "attempt", attempt, "entries", len(recs), "err", err)
		time.Sleep(backoff)
		backoff *= 2
	}
}

// refused logs the records the store refused for their data: those it kept
// escaped, and those it could not keep.
func (l *Logger) refused(de *DataError) {
	if len(de.Escaped) > 0 {
		l.log.Warn("audit entries stored with their text escaped to ASCII: the database refused them as sent",
			"request_ids", de.Escaped, "err", de.Err)
	}
	if len(de.Rejected) > 0 {
		l.log.Error("audit entries refused by the SQL store for their data; they remain in the hot tier",
			"request_ids", de.Rejected, "err", de.Err)
	}
}
