// Package health keeps per provider+model health figures — requests, errors,
// latency percentiles, requests in flight — shared by every process through
// the KV store, so every replica routes on the same picture.
//
// Observations are aggregated in memory and flushed once a second as atomic
// counter increments into per-minute buckets (never read-modify-write); the
// fleet-wide figures are read back once a second and served from memory, so
// the request path takes one short lock to record and none to read.
//
// wire, proxy and mgmt import health; it imports store only.
package health

import (
	"context"
	"log/slog"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-gateway/svc/internal/store"
)

// Window is how far back the figures look.
const Window = 5 * time.Minute

// bucketBounds are the upper bounds of the latency histogram, in ms; the
// last bucket is open.
var bucketBounds = []int64{25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000}

// series is one provider+model's accumulating deltas.
type series struct {
	requests, errors int64
	buckets          [12]int64 // len(bucketBounds)+1
}

// Figures are a provider+model's health over the window, fleet-wide.
type Figures struct {
	Provider  string        `json:"provider"`
	Model     string        `json:"model"`
	Requests  int64         `json:"requests"`
	Errors    int64         `json:"errors"`
	ErrorRate float64       `json:"error_rate"`
	P50       time.Duration `json:"-"`
	P95       time.Duration `json:"-"`
	P50MS     int64         `json:"p50_ms"`
	P95MS     int64         `json:"p95_ms"`
	InFlight  int64         `json:"in_flight"`
}

// Tracker records observations and serves the figures.
type Tracker struct {
	kv  Store
	log *slog.Logger
	now func() time.Time

	mu      sync.Mutex
	pending map[string]*series       // "provider\x00model" → deltas since the last flush
	known   map[string]struct{}      // every series seen here, to read back
	flight  map[string]*atomic.Int64 // in-flight per series, this process
	figures atomic.Pointer[map[string]Figures]
}

// Store is where the figures are shared: store.Counters' IncrBy for the
// minute buckets, store.Values' Get to read them back, and store.Logs for
// the list of series (memkv, rediskv).
type Store interface {
	store.Logs
	Get(ctx context.Context, key string) ([]byte, error)
	IncrBy(ctx context.Context, key string, delta int64, ttl time.Duration) (int64, error)
}

// New returns a tracker; Run flushes and refreshes it.
func New(kv Store, log *slog.Logger) *Tracker {
	t := &Tracker{kv: kv, log: log, now: time.Now, pending: map[string]*series{}, known: map[string]struct{}{}, flight: map[string]*atomic.Int64{}}
	empty := map[string]Figures{}
	t.figures.Store(&empty)
	return t
}

func seriesKey(provider, model string) string { return provider + "\x00" + model }

// Start marks a call in flight; the returned func ends it with its outcome.
func (t *Tracker) Start(provider, model string) func(latency time.Duration, failed bool) {
	k := seriesKey(provider, model)
	t.mu.Lock()
	f := t.flight[k]
	if f == nil {
		f = &atomic.Int64{}
		t.flight[k] = f
	}
	t.mu.Unlock()
	f.Add(1)
	return func(latency time.Duration, failed bool) {
		f.Add(-1)
		t.Observe(provider, model, latency, failed)
	}
}

// Observe records one finished call.
func (t *Tracker) Observe(provider, model string, latency time.Duration, failed bool) {
	ms := latency.Milliseconds()
	b := sort.Search(len(bucketBounds), func(i int) bool { return ms <= bucketBounds[i] })
	k := seriesKey(provider, model)
	t.mu.Lock()
	s := t.pending[k]
	if s == nil {
		s = &series{}
		t.pending[k] = s
		t.known[k] = struct{}{}
	}
	s.requests++
	if failed {
		s.errors++
	}
	s.buckets[b]++
	t.mu.Unlock()
}

// Run flushes and refreshes every second until ctx ends (then flushes once more).
func (t *Tracker) Run(ctx context.Context) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			t.Flush(context.Background())
			return nil
		case <-tick.C:
			t.Flush(ctx)
			t.Refresh(ctx)
		}
	}
}

func bucketKey(series string, minute int64, field string) string {
	return "health:" + strconv.FormatInt(minute, 10) + ":" + series + ":" + field
}

// Flush adds this process's deltas to the shared minute buckets.
func (t *Tracker) Flush(ctx context.Context) {
	t.mu.Lock()
	pending := t.pending
	t.pending = map[string]*series{}
	t.mu.Unlock()
	minute := t.now().Unix() / 60
	ttl := Window + 2*time.Minute
	names := make([][]byte, 0, len(pending))
	for k := range pending {
		names = append(names, []byte(k))
	}
	if len(names) > 0 {
		// Other processes (a separate management API) discover series here.
		if err := t.kv.AppendLog(ctx, seriesLog, store.LogLimit{MaxAge: Window + 2*time.Minute, MaxLen: 10000}, names...); err != nil {
			t.log.Debug("health series log failed", "err", err)
		}
	}
	for k, s := range pending {
		name := strings.ReplaceAll(k, "\x00", "|")
		incr := func(field string, n int64) {
			if n == 0 {
				return
			}
			if _, err := t.kv.IncrBy(ctx, bucketKey(name, minute, field), n, ttl); err != nil {
				t.log.Debug("health flush failed", "err", err)
			}
		}
		incr("requests", s.requests)
		incr("errors", s.errors)
		for i, n := range s.buckets {
			incr("b"+strconv.Itoa(i), n)
		}
	}
}

// seriesLog lists the series any process flushed recently.
const seriesLog = "health:series"

// Refresh reads the fleet-wide figures of every series seen here or flushed
// by any process within the window.
func (t *Tracker) Refresh(ctx context.Context) {
	if logged, err := t.kv.ReadLog(ctx, seriesLog, t.now().Add(-Window), 0); err == nil {
		t.mu.Lock()
		for _, n := range logged {
			t.known[string(n)] = struct{}{}
		}
		t.mu.Unlock()
	}
	t.mu.Lock()
	names := make([]string, 0, len(t.known))
	for k := range t.known {
		names = append(names, k)
	}
	t.mu.Unlock()
	now := t.now().Unix() / 60
	minutes := int64(Window / time.Minute)
	out := make(map[string]Figures, len(names))
	for _, k := range names {
		name := strings.ReplaceAll(k, "\x00", "|")
		var s series
		read := func(minute int64, field string) int64 {
			b, err := t.kv.Get(ctx, bucketKey(name, minute, field))
			if err != nil {
				return 0
			}
			n, _ := strconv.ParseInt(string(b), 10, 64)
			return n
		}
		for m := now - minutes + 1; m <= now; m++ {
			s.requests += read(m, "requests")
			s.errors += read(m, "errors")
			for i := range s.buckets {
				s.buckets[i] += read(m, "b"+strconv.Itoa(i))
			}
		}
		provider, model, _ := strings.Cut(k, "\x00")
		f := Figures{Provider: provider, Model: model, Requests: s.requests, Errors: s.errors,
			P50: percentile(&s, 0.50), P95: percentile(&s, 0.95)}
		if s.requests > 0 {
			f.ErrorRate = float64(s.errors) / float64(s.requests)
		}
		f.P50MS, f.P95MS = f.P50.Milliseconds(), f.P95.Milliseconds()
		out[k] = f
	}
	t.figures.Store(&out)
}

// percentile is the upper bound of the bucket holding quantile q.
func percentile(s *series, q float64) time.Duration {
	var total int64
	for _, n := range s.buckets {
		total += n
	}
	if total == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(total)))
	var seen int64
	for i, n := range s.buckets {
		seen += n
		if seen >= rank {
			if i < len(bucketBounds) {
				return time.Duration(bucketBounds[i]) * time.Millisecond
			}
			return time.Duration(2*bucketBounds[len(bucketBounds)-1]) * time.Millisecond
		}
	}
	return 0
}

// Figures returns the figures of one series (zero when unknown).
func (t *Tracker) Figures(provider, model string) Figures {
	k := seriesKey(provider, model)
	f := (*t.figures.Load())[k]
	f.Provider, f.Model = provider, model
	f.InFlight = t.InFlight(provider, model)
	return f
}

// SuccessRate is the fleet-wide share of calls of a series that did not fail
// over the window, and whether any were measured (route.SuccessRates).
func (t *Tracker) SuccessRate(provider, model string) (float64, bool) {
	f := (*t.figures.Load())[seriesKey(provider, model)]
	return 1 - f.ErrorRate, f.Requests > 0
}

// All returns every known series' figures, sorted.
func (t *Tracker) All() []Figures {
	m := *t.figures.Load()
	out := make([]Figures, 0, len(m))
	for _, f := range m {
		f.InFlight = t.InFlight(f.Provider, f.Model)
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Provider != out[j].Provider {
			return out[i].Provider < out[j].Provider
		}
		return out[i].Model < out[j].Model
	})
	return out
}

// InFlight is this process's calls in flight for the series.
func (t *Tracker) InFlight(provider, model string) int64 {
	t.mu.Lock()
	f := t.flight[seriesKey(provider, model)]
	t.mu.Unlock()
	if f == nil {
		return 0
	}
	return f.Load()
}

// LatencyP95 is the fleet-wide p95 over the window.
func (t *Tracker) LatencyP95(provider, model string) time.Duration {
	return (*t.figures.Load())[seriesKey(provider, model)].P95
}

// UnhealthyErrorRate is the error rate above which a series is unhealthy,
// once it has MinRequests requests in the window.
const (
	UnhealthyErrorRate = 0.5
	MinRequests        = 10
)

// Healthy reports whether the series is fit to route to.
func (t *Tracker) Healthy(provider, model string) bool {
	f := (*t.figures.Load())[seriesKey(provider, model)]
	return f.Requests < MinRequests || f.ErrorRate < UnhealthyErrorRate
}
