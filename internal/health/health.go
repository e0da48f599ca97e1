// Package health keeps per provider+model health figures — requests, errors,
// latency percentiles and their moving average, requests in flight — shared
// by every process through the KV store, so every replica routes on the same
// picture.
//
// Observations are aggregated in memory and flushed once a second as atomic
// counter increments into per-minute buckets (never read-modify-write); the
// fleet-wide figures are read back once a second and served from memory, so
// the request path takes one short lock to record and none to read. Models
// the Known hook does not recognise are kept as one series per provider
// (model Other), so invented model names make no new keys.
//
// Probe turns this process's own recent outcomes into a readiness check.
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
	// P95EMA is the exponential moving average of each minute's p95 (see
	// latencyEMA): what the latency strategy orders by.
	P95EMA   time.Duration `json:"-"`
	P95EMAMS int64         `json:"p95_ema_ms"`
	InFlight int64         `json:"in_flight"`
}

// Other is the model under which calls of a model Known does not recognise
// are counted.
const Other = "other"

// Tracker records observations and serves the figures.
type Tracker struct {
	kv    Store
	log   *slog.Logger
	now   func() time.Time
	known func(provider, model string) bool // nil: every model is known

	mu      sync.Mutex
	pending map[string]*series       // "provider\x00model" → deltas since the last flush
	seen    map[string]struct{}      // every series seen here, to read back
	flight  map[string]*atomic.Int64 // in-flight per series, this process
	recent  map[string]*outcomes     // per provider, this process's last minute (Probe)
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
	t := &Tracker{kv: kv, log: log, now: time.Now, pending: map[string]*series{}, seen: map[string]struct{}{},
		flight: map[string]*atomic.Int64{}, recent: map[string]*outcomes{}}
	empty := map[string]Figures{}
	t.figures.Store(&empty)
	return t
}

// Known sets the models that get a series of their own: known(provider,
// model) false counts the call under model Other, and every figure asked
// for such a model is Other's. Build it from what svc knows (the price
// table, the routing configuration, the providers' model lists), so that a
// caller inventing model names cannot create store keys. It is called on
// the request path: it must be fast and safe for concurrent use. Call it
// before the Tracker is used; nil (the default) knows every model.
func (t *Tracker) Known(known func(provider, model string) bool) *Tracker {
	t.known = known
	return t
}

// seriesKey is the series of provider and model, unknown models folded
// into Other.
func (t *Tracker) seriesKey(provider, model string) string {
	if t.known != nil && !t.known(provider, model) {
		model = Other
	}
	return provider + "\x00" + model
}

// knownSeries reports whether the series k (as logged by any process) has a
// model Known recognises, or is Other.
func (t *Tracker) knownSeries(k string) bool {
	provider, model, ok := strings.Cut(k, "\x00")
	return ok && (t.known == nil || model == Other || t.known(provider, model))
}

// Start marks a call in flight; the returned func ends it with its outcome.
func (t *Tracker) Start(provider, model string) func(latency time.Duration, failed bool) {
	k := t.seriesKey(provider, model)
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
		t.observe(k, provider, latency, failed)
	}
}

// Observe records one finished call; failed means the provider failed it
// (5xx, 429, no answer), not the caller's mistake.
func (t *Tracker) Observe(provider, model string, latency time.Duration, failed bool) {
	t.observe(t.seriesKey(provider, model), provider, latency, failed)
}

// observe records one finished call of series k, of provider.
func (t *Tracker) observe(k, provider string, latency time.Duration, failed bool) {
	ms := latency.Milliseconds()
	b := sort.Search(len(bucketBounds), func(i int) bool { return ms <= bucketBounds[i] })
	slot := t.now().Unix() / probeSlotSeconds
	t.mu.Lock()
	s := t.pending[k]
	if s == nil {
		s = &series{}
		t.pending[k] = s
		t.seen[k] = struct{}{}
	}
	s.requests++
	if failed {
		s.errors++
	}
	s.buckets[b]++
	o := t.recent[provider]
	if o == nil {
		o = &outcomes{}
		t.recent[provider] = o
	}
	o.add(slot, failed)
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
// by any process within the window (series of models Known does not
// recognise are not read).
func (t *Tracker) Refresh(ctx context.Context) {
	if logged, err := t.kv.ReadLog(ctx, seriesLog, t.now().Add(-Window), 0); err == nil {
		t.mu.Lock()
		for _, n := range logged {
			if k := string(n); t.knownSeries(k) {
				t.seen[k] = struct{}{}
			}
		}
		t.mu.Unlock()
	}
	t.mu.Lock()
	names := make([]string, 0, len(t.seen))
	for k := range t.seen {
		names = append(names, k)
	}
	t.mu.Unlock()
	now := t.now()
	out := make(map[string]Figures, len(names))
	for _, k := range names {
		out[k] = t.read(ctx, k, now)
	}
	t.figures.Store(&out)
}

// read returns the fleet-wide figures of series k at now from the store.
func (t *Tracker) read(ctx context.Context, k string, now time.Time) Figures {
	name := strings.ReplaceAll(k, "\x00", "|")
	get := func(minute int64, field string) int64 {
		b, err := t.kv.Get(ctx, bucketKey(name, minute, field))
		if err != nil {
			return 0
		}
		n, _ := strconv.ParseInt(string(b), 10, 64)
		return n
	}
	current := now.Unix() / 60
	minutes := make([]series, Window/time.Minute) // oldest first; the last is the current minute
	var s series
	for i := range minutes {
		m, ms := current-int64(len(minutes)-1-i), &minutes[i]
		ms.requests, ms.errors = get(m, "requests"), get(m, "errors")
		for j := range ms.buckets {
			ms.buckets[j] = get(m, "b"+strconv.Itoa(j))
		}
		s.add(ms)
	}
	provider, model, _ := strings.Cut(k, "\x00")
	f := Figures{Provider: provider, Model: model, Requests: s.requests, Errors: s.errors,
		P50: percentile(&s, 0.50), P95: percentile(&s, 0.95)}
	elapsed := time.Duration(now.UnixNano() - current*60*int64(time.Second))
	f.P95EMA = latencyEMA(minutes, elapsed)
	if s.requests > 0 {
		f.ErrorRate = float64(s.errors) / float64(s.requests)
	}
	f.P50MS, f.P95MS, f.P95EMAMS = f.P50.Milliseconds(), f.P95.Milliseconds(), f.P95EMA.Milliseconds()
	return f
}

// add adds o's counts to s.
func (s *series) add(o *series) {
	s.requests += o.requests
	s.errors += o.errors
	for i, n := range o.buckets {
		s.buckets[i] += n
	}
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

// Figures returns the figures of one series (zero when unknown); a model
// Known does not recognise gets Other's figures, with Model Other.
func (t *Tracker) Figures(provider, model string) Figures {
	k := t.seriesKey(provider, model)
	f := (*t.figures.Load())[k]
	f.Provider, f.Model, _ = strings.Cut(k, "\x00")
	f.InFlight = t.inFlight(k)
	return f
}

// SuccessRate is the fleet-wide share of calls of a series that did not fail
// over the window, and whether any were measured (route.SuccessRates).
func (t *Tracker) SuccessRate(provider, model string) (float64, bool) {
	f := (*t.figures.Load())[t.seriesKey(provider, model)]
	return 1 - f.ErrorRate, f.Requests > 0
}

// All returns every known series' figures, sorted.
func (t *Tracker) All() []Figures {
	m := *t.figures.Load()
	out := make([]Figures, 0, len(m))
	for k, f := range m {
		f.InFlight = t.inFlight(k)
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
	return t.inFlight(t.seriesKey(provider, model))
}

func (t *Tracker) inFlight(k string) int64 {
	t.mu.Lock()
	f := t.flight[k]
	t.mu.Unlock()
	if f == nil {
		return 0
	}
	return f.Load()
}

// LatencyP95 is the series' p95 latency as a rolling exponential moving
// average (Figures.P95EMA), fleet-wide; 0 when not measured in the window.
// The latency strategy orders by it (route.Health).
func (t *Tracker) LatencyP95(provider, model string) time.Duration {
	return (*t.figures.Load())[t.seriesKey(provider, model)].P95EMA
}

// UnhealthyErrorRate is the error rate above which a series is unhealthy,
// once it has MinRequests requests in the window.
const (
	UnhealthyErrorRate = 0.5
	MinRequests        = 10
)

// Healthy reports whether the series is fit to route to.
func (t *Tracker) Healthy(provider, model string) bool {
	f := (*t.figures.Load())[t.seriesKey(provider, model)]
	return f.Requests < MinRequests || f.ErrorRate < UnhealthyErrorRate
}
