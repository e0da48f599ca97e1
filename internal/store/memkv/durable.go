package memkv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"
)

// Durable is where a KV keeps the counters that must outlive the process:
// in the embedded default, the spend counters, in SQL (sqlstore.Counters).
// The KV is its only writer (one process owns an embedded store): it loads
// every counter once, at Open, and then writes the absolute values of those
// that changed, so a write retried or repeated is harmless.
type Durable interface {
	// LoadCounters returns every stored counter that has not expired at now.
	LoadCounters(ctx context.Context, now time.Time) ([]Counter, error)
	// SaveCounters stores set (each key's value and expiry replace the
	// stored ones) and removes the keys in gone, all or nothing. It may also
	// remove counters expired at now.
	SaveCounters(ctx context.Context, set []Counter, gone []string, now time.Time) error
}

// Counter is a durable integer counter.
type Counter struct {
	Key     string
	Value   int64
	Expires time.Time // zero: never
}

// Options configure Open.
type Options struct {
	// Durable keeps the integer values at the keys Keep matches; nil: none.
	Durable Durable
	// Keep reports whether the integer value at key must outlive the
	// process. It is the wiring's choice; it is called under the KV's lock
	// on every write, so it must be quick.
	Keep func(key string) bool
	// FlushEvery is how often the changed counters are written (default
	// DefaultFlushEvery): a crash loses at most the changes of one interval.
	FlushEvery time.Duration
	// Log receives a warning when a write fails (default slog.Default()).
	Log *slog.Logger
}

// DefaultFlushEvery is how often a durable KV writes its changed counters.
const DefaultFlushEvery = time.Second

const (
	// saveTimeout bounds one SaveCounters call.
	saveTimeout = 10 * time.Second
	// warnEvery is the least time between two "write failed" warnings.
	warnEvery = 10 * time.Second
)

// durability is the durable part of a KV: what changed since the last
// write, guarded by kv.mu.
type durability struct {
	store Durable
	keep  func(key string) bool
	every time.Duration
	log   *slog.Logger
	dirty map[string]struct{} // keys written or deleted since the last flush
	done  chan struct{}       // closed when the flush loop has stopped

	lastWarn time.Time // of the flush loop only
}

// Open returns an in-process KV. With opts.Durable, it first loads the
// stored counters Keep matches (a stored counter it no longer matches is
// removed at the first write), and from then on writes, every FlushEvery
// and at Close, the integer values at the matching keys that changed: set
// by Set, IncrBy, Reserve, Admit's reservation or Settle's counter, or
// removed by Delete. Values that are not decimal integers, windows and
// logs are never kept. Expiry is kept as an absolute time. Without
// opts.Durable, Open is New.
func Open(ctx context.Context, opts Options) (*KV, error) {
	if opts.Durable == nil {
		return New(), nil
	}
	if opts.Keep == nil {
		return nil, errors.New("memkv: open: a Durable store needs a Keep function")
	}
	if opts.FlushEvery <= 0 {
		opts.FlushEvery = DefaultFlushEvery
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	now := time.Now()
	stored, err := opts.Durable.LoadCounters(ctx, now)
	if err != nil {
		return nil, fmt.Errorf("memkv: load durable counters: %w", err)
	}
	d := &durability{store: opts.Durable, keep: opts.Keep, every: opts.FlushEvery, log: opts.Log,
		dirty: make(map[string]struct{}), done: make(chan struct{})}
	kv := newKV(sweepInterval)
	kv.mu.Lock()
	for _, c := range stored {
		switch {
		case !opts.Keep(c.Key):
			d.dirty[c.Key] = struct{}{} // no item: removed at the first flush
		case c.Expires.IsZero() || now.Before(c.Expires):
			kv.items[c.Key] = &item{value: strconv.AppendInt(nil, c.Value, 10), expires: c.Expires}
		}
	}
	kv.durable = d
	kv.mu.Unlock()
	go kv.flushLoop()
	return kv, nil
}

// changed notes that the value at key was written or deleted. kv.mu must be
// held.
func (kv *KV) changed(key string) {
	if d := kv.durable; d != nil && d.keep(key) {
		d.dirty[key] = struct{}{}
	}
}

func (kv *KV) flushLoop() {
	d := kv.durable
	defer close(d.done)
	t := time.NewTicker(d.every)
	defer t.Stop()
	for {
		select {
		case <-kv.stop:
			return
		case <-t.C:
			if err := kv.flush(); err != nil && time.Since(d.lastWarn) >= warnEvery {
				d.lastWarn = time.Now()
				d.log.Warn("in-process KV: could not write the durable counters; retrying", "err", err)
			}
		}
	}
}

// flush writes the counters changed since the last flush. On failure the
// keys stay to be written by the next one (with the values they have then).
// Only flushLoop, and Close after it has stopped, call flush.
func (kv *KV) flush() error {
	d := kv.durable
	kv.mu.Lock()
	if len(d.dirty) == 0 {
		kv.mu.Unlock()
		return nil
	}
	keys := d.dirty
	d.dirty = make(map[string]struct{})
	now := time.Now()
	var (
		set  []Counter
		gone []string
	)
	for k := range keys {
		if c, ok := kv.durableCounter(k, now); ok {
			set = append(set, c)
		} else {
			gone = append(gone, k)
		}
	}
	kv.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), saveTimeout)
	defer cancel()
	err := d.store.SaveCounters(ctx, set, gone, now)
	if err != nil {
		kv.mu.Lock()
		for k := range keys {
			d.dirty[k] = struct{}{}
		}
		kv.mu.Unlock()
		return fmt.Errorf("memkv: save %d durable counters: %w", len(keys), err)
	}
	return nil
}

// durableCounter returns the counter at key to store, if key holds a live
// decimal integer. kv.mu must be held.
func (kv *KV) durableCounter(key string, now time.Time) (Counter, bool) {
	it, ok := kv.items[key]
	if !ok || it.expired(now) || !it.plain() {
		return Counter{}, false
	}
	n, err := strconv.ParseInt(string(it.value), 10, 64)
	if err != nil {
		return Counter{}, false
	}
	return Counter{Key: key, Value: n, Expires: it.expires}, true
}
