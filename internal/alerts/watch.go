package alerts

import (
	"strings"
	"sync"
	"time"
)

// Observation is what the Watch learns of one finished request (from its
// audit entry).
type Observation struct {
	Provider  string
	Time      time.Time // when the request ended; zero: now
	OK        bool      // false: the provider failed it (an error answer or no answer)
	Latency   time.Duration
	RequestID string
}

// WatchOptions configure a Watch; zero values take the defaults.
type WatchOptions struct {
	// ErrorRate (SVC_ALERT_ERROR_RATE, default 0.25): a provider whose
	// failures reach this share of its requests in Window, over at least
	// MinRequests requests, raises ProviderFailure.
	ErrorRate   float64
	MinRequests int           // default 20
	Window      time.Duration // SVC_ALERT_WINDOW, default 5m
	// Slow (SVC_ALERT_SLOW_MS, default 30s): a request longer than this
	// raises SlowRequest.
	Slow time.Duration
	// MaxProviders bounds the providers followed (default 1024); a new one
	// beyond it takes the place of one silent for a whole window, or is not
	// followed.
	MaxProviders int
}

// Defaults of WatchOptions.
const (
	DefaultErrorRate    = 0.25
	DefaultMinRequests  = 20
	DefaultWindow       = 5 * time.Minute
	DefaultSlow         = 30 * time.Second
	DefaultMaxProviders = 1024
)

// Sender takes alerts without blocking (*Notifier).
type Sender interface {
	Send(a Alert) bool
}

// slots is the number of buckets a provider's window is counted in: the
// window slides by a thirtieth of itself.
const slots = 30

// Watch turns request observations into ProviderFailure and SlowRequest
// alerts. Memory is bounded: per provider a fixed ring of slots counts;
// an observation allocates nothing unless it raises an alert. Each
// provider raises each kind of alert at most once per Window from this
// process (the Notifier then deduplicates across the fleet).
type Watch struct {
	send      Sender
	rate      float64
	min       int
	window    time.Duration
	width     int64 // ns per slot
	slow      time.Duration
	max       int
	mu        sync.Mutex
	providers map[string]*counts
}

// counts is one provider's ring of slots and its last alerts.
type counts struct {
	ring             [slots]slot
	newest           int64 // index of the newest slot seen
	failedAt, slowAt int64 // ns of the last alert of each kind (0: none)
}

// slot counts the requests of one slot-wide span (idx = time / width).
type slot struct {
	idx           int64
	total, failed int32
}

// NewWatch returns a Watch sending its alerts to s (a *Notifier).
func NewWatch(s Sender, o WatchOptions) *Watch {
	if o.ErrorRate <= 0 || o.ErrorRate > 1 {
		o.ErrorRate = DefaultErrorRate
	}
	if o.MinRequests <= 0 {
		o.MinRequests = DefaultMinRequests
	}
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if o.Slow <= 0 {
		o.Slow = DefaultSlow
	}
	if o.MaxProviders <= 0 {
		o.MaxProviders = DefaultMaxProviders
	}
	return &Watch{send: s, rate: o.ErrorRate, min: o.MinRequests, window: o.Window,
		width: max(int64(o.Window)/slots, 1), slow: o.Slow, max: o.MaxProviders, providers: map[string]*counts{}}
}

// Observe counts o and raises the alerts it calls for. It is cheap and
// never blocks on delivery (Send does not).
func (w *Watch) Observe(o Observation) {
	if w == nil || w.send == nil || o.Provider == "" {
		return
	}
	t := o.Time
	if t.IsZero() {
		t = time.Now()
	}
	ns := t.UnixNano()
	idx := ns / w.width
	var failing, slow bool
	var failed, total int
	w.mu.Lock()
	c := w.counts(o.Provider, idx)
	if c == nil {
		w.mu.Unlock()
		return
	}
	if c.add(idx, o.OK) && !o.OK {
		total, failed = c.sum()
		failing = total >= w.min && float64(failed) >= w.rate*float64(total) && ns-c.failedAt >= int64(w.window)
		if failing {
			c.failedAt = ns
		}
	}
	if o.Latency > w.slow && ns-c.slowAt >= int64(w.window) {
		slow = true
		c.slowAt = ns
	}
	w.mu.Unlock()
	if failing {
		w.send.Send(newProviderFailure(o.Provider, failed, total, w.window, t))
	}
	if slow {
		w.send.Send(newSlowRequest(o.Provider, o.RequestID, o.Latency, w.slow, t))
	}
}

// counts returns provider's counts, adding them when there is room (or a
// provider silent for a whole window to replace); nil when there is none.
// w.mu is held.
func (w *Watch) counts(provider string, idx int64) *counts {
	if c, ok := w.providers[provider]; ok {
		return c
	}
	if len(w.providers) >= w.max {
		for name, c := range w.providers {
			if c.newest <= idx-slots && idx*w.width-c.failedAt >= int64(w.window) && idx*w.width-c.slowAt >= int64(w.window) {
				delete(w.providers, name)
				break
			}
		}
		if len(w.providers) >= w.max {
			return nil
		}
	}
	c := &counts{newest: idx}
	w.providers[strings.Clone(provider)] = c
	return c
}

// add counts one request in slot idx; it reports false for a request older
// than the window (not counted).
func (c *counts) add(idx int64, ok bool) bool {
	if idx <= c.newest-slots {
		return false
	}
	s := &c.ring[((idx%slots)+slots)%slots]
	if s.idx != idx {
		*s = slot{idx: idx}
	}
	s.total++
	if !ok {
		s.failed++
	}
	c.newest = max(c.newest, idx)
	return true
}

// sum adds up the slots within the window ending at the newest.
func (c *counts) sum() (total, failed int) {
	for i := range c.ring {
		if s := &c.ring[i]; s.idx > c.newest-slots {
			total += int(s.total)
			failed += int(s.failed)
		}
	}
	return total, failed
}
