package health

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/store"

	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func exercise(t *testing.T, kv Store) {
	ctx := context.Background()
	a, b := New(kv, quiet()), New(kv, quiet())
	// Two replicas serve the same provider+model.
	for i := 0; i < 90; i++ {
		a.Observe("openai", "gpt-4o", 40*time.Millisecond, false)
	}
	for i := 0; i < 10; i++ {
		b.Observe("openai", "gpt-4o", 900*time.Millisecond, i < 8)
	}
	a.Flush(ctx)
	b.Flush(ctx)
	a.Refresh(ctx)
	b.Refresh(ctx)
	// A process that never served the series (a separate management API)
	// finds it through the store.
	mgmt := New(kv, quiet())
	mgmt.Refresh(ctx)
	if all := mgmt.All(); len(all) != 1 || all[0].Requests != 100 {
		t.Errorf("management process sees %+v, want the fleet's series", all)
	}
	for name, tr := range map[string]*Tracker{"a": a, "b": b} {
		f := tr.Figures("openai", "gpt-4o")
		if f.Requests != 100 || f.Errors != 8 {
			t.Errorf("replica %s sees %d requests, %d errors; want the fleet's 100+ and 8", name, f.Requests, f.Errors)
		}
		if f.P50 != 50*time.Millisecond || f.P95 != time.Second {
			t.Errorf("replica %s: p50 %v p95 %v, want 50ms and 1s (bucket bounds)", name, f.P50, f.P95)
		}
		if !tr.Healthy("openai", "gpt-4o") {
			t.Errorf("replica %s: 8%% errors should be healthy", name)
		}
	}
}

func TestFleetFiguresMemory(t *testing.T) { exercise(t, memkv.New()) }

func TestFleetFiguresRedis(t *testing.T) { exercise(t, storetest.RedisKV(t)) }

func TestUnhealthyAndInFlight(t *testing.T) {
	ctx := context.Background()
	tr := New(memkv.New(), quiet())
	for i := 0; i < 20; i++ {
		tr.Observe("groq", "llama", 10*time.Millisecond, i%4 != 0) // 75% errors
	}
	tr.Flush(ctx)
	tr.Refresh(ctx)
	if tr.Healthy("groq", "llama") {
		t.Error("75% errors over 20 requests should be unhealthy")
	}
	if !tr.Healthy("groq", "other") {
		t.Error("an unknown series is healthy")
	}
	end1 := tr.Start("groq", "llama")
	end2 := tr.Start("groq", "llama")
	if n := tr.InFlight("groq", "llama"); n != 2 {
		t.Errorf("in flight = %d, want 2", n)
	}
	end1(time.Millisecond, false)
	end2(time.Millisecond, true)
	if n := tr.InFlight("groq", "llama"); n != 0 {
		t.Errorf("in flight = %d, want 0", n)
	}
	tr.Flush(ctx)
	tr.Refresh(ctx)
	if f := tr.Figures("groq", "llama"); f.Requests != 22 {
		t.Errorf("requests = %d, want 22", f.Requests)
	}
	if all := tr.All(); len(all) != 1 || all[0].Provider != "groq" {
		t.Errorf("All = %+v", all)
	}
}

func TestWindowAges(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	tr := New(memkv.New(), quiet())
	tr.now = func() time.Time { return now }
	tr.Observe("p", "m", time.Millisecond, true)
	tr.Flush(ctx)
	now = now.Add(Window + time.Minute)
	tr.Refresh(ctx)
	if f := tr.Figures("p", "m"); f.Requests != 0 {
		t.Errorf("after the window: %d requests, want 0", f.Requests)
	}
}

// keyRecorder is a Store that records every key written.
type keyRecorder struct {
	Store
	mu   sync.Mutex
	keys map[string]bool
	logs [][]byte
}

func (r *keyRecorder) IncrBy(ctx context.Context, key string, delta int64, ttl time.Duration) (int64, error) {
	r.mu.Lock()
	r.keys[key] = true
	r.mu.Unlock()
	return r.Store.IncrBy(ctx, key, delta, ttl)
}

func (r *keyRecorder) AppendLog(ctx context.Context, key string, lim store.LogLimit, values ...[]byte) error {
	r.mu.Lock()
	r.logs = append(r.logs, values...)
	r.mu.Unlock()
	return r.Store.AppendLog(ctx, key, lim, values...)
}

// TestKnownFoldsInventedModels checks that model names a caller invents make
// no store keys of their own: they are counted under Other, and their
// figures are Other's.
func TestKnownFoldsInventedModels(t *testing.T) {
	ctx := context.Background()
	rec := &keyRecorder{Store: memkv.New(), keys: map[string]bool{}}
	tr := New(rec, quiet()).Known(func(provider, model string) bool { return provider == "openai" && model == "gpt-4o" })
	tr.Observe("openai", "gpt-4o", 40*time.Millisecond, false)
	for i := range 1000 {
		tr.Observe("openai", fmt.Sprintf("invented-%d", i), 40*time.Millisecond, i%2 == 0)
	}
	tr.Flush(ctx)
	tr.Refresh(ctx)
	for k := range rec.keys {
		if !strings.Contains(k, ":openai|gpt-4o:") && !strings.Contains(k, ":openai|other:") {
			t.Errorf("store key %q: want only keys of openai|gpt-4o and openai|other", k)
		}
	}
	if len(rec.logs) != 2 {
		t.Errorf("series announced: got %d, want 2 (gpt-4o and other)", len(rec.logs))
	}
	if f := tr.Figures("openai", "invented-7"); f.Model != Other || f.Requests != 1000 || f.Errors != 500 {
		t.Errorf("an invented model's figures: got %+v, want Other's 1000 requests, 500 errors", f)
	}
	if f := tr.Figures("openai", "gpt-4o"); f.Requests != 1 {
		t.Errorf("a known model's figures: got %d requests, want 1", f.Requests)
	}
	if got := len(tr.All()); got != 2 {
		t.Errorf("series: got %d, want 2", got)
	}
	// A series another process logged under an invented name is not read.
	other := New(rec, quiet())
	other.Observe("openai", "invented-x", time.Millisecond, false)
	other.Flush(ctx)
	tr.Refresh(ctx)
	if got := len(tr.All()); got != 2 {
		t.Errorf("after another process logged an invented series: %d series, want 2", got)
	}
	end := tr.Start("openai", "invented-1")
	if n := tr.InFlight("openai", "invented-2"); n != 1 {
		t.Errorf("in flight of invented models: got %d, want 1 (Other's)", n)
	}
	end(time.Millisecond, false)
}

// hist is a minute of n calls of latency d.
func hist(n int64, d time.Duration) series {
	var s series
	ms := d.Milliseconds()
	b := sort.Search(len(bucketBounds), func(i int) bool { return ms <= bucketBounds[i] })
	s.requests, s.buckets[b] = n, n
	return s
}

func TestLatencyEMA(t *testing.T) {
	ms := time.Millisecond
	none := series{}
	cases := []struct {
		name    string
		minutes []series
		elapsed time.Duration
		want    time.Duration
	}{
		{"no calls", []series{none, none, none}, 30 * time.Second, 0},
		{"one minute of calls", []series{none, hist(10, 900*ms), none}, 0, time.Second},
		{"steady", []series{hist(5, 40*ms), hist(5, 40*ms), hist(5, 40*ms)}, 20 * time.Second, 50 * ms},
		// 1000 → 100 over one whole minute: 1000 − 900 (1 − 1/e) = 431.09 ms.
		{"a whole minute faster", []series{hist(5, time.Second), hist(5, 100*ms), none}, 0, 431091 * time.Microsecond},
		// Half a minute into the faster one: 1000 − 900 (1 − e^−½) = 645.88 ms.
		{"half a minute faster", []series{hist(5, time.Second), hist(5, 100*ms)}, 30 * time.Second, 645878 * time.Microsecond},
		// The first second of a new minute barely moves it.
		{"a new minute barely counts", []series{hist(5, time.Second), hist(5, 100*ms)}, 0, time.Second},
		// A quiet minute between holds the average.
		{"a gap holds", []series{hist(5, time.Second), none, hist(5, 100*ms), none}, 0, 431091 * time.Microsecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := latencyEMA(c.minutes, c.elapsed)
			if diff := got - c.want; diff < -time.Microsecond || diff > time.Microsecond {
				t.Errorf("latencyEMA: got %v, want %v", got, c.want)
			}
		})
	}
}

// TestLatencyIsTheMovingAverage checks that the latency the strategy orders
// by is the moving average: a provider that was slow four minutes ago and
// fast since ranks before one steadily at 300 ms, though its p95 over the
// window is far worse.
func TestLatencyIsTheMovingAverage(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000/60*60, 0) // the start of a minute
	tr := New(memkv.New(), quiet())
	tr.now = func() time.Time { return now }
	for minute := range 4 {
		for range 100 {
			d := 40 * time.Millisecond
			if minute == 0 {
				d = 2 * time.Second
			}
			tr.Observe("recovered", "m", d, false)
			tr.Observe("steady", "m", 300*time.Millisecond, false)
		}
		tr.Flush(ctx)
		now = now.Add(time.Minute)
	}
	tr.Refresh(ctx)
	rec, steady := tr.Figures("recovered", "m"), tr.Figures("steady", "m")
	if rec.P95 <= steady.P95 {
		t.Fatalf("window p95: recovered %v, steady %v; the test wants the recovered one worse over the window", rec.P95, steady.P95)
	}
	if r, s := tr.LatencyP95("recovered", "m"), tr.LatencyP95("steady", "m"); r >= s {
		t.Errorf("moving average: recovered %v, steady %v; want the recovered provider faster", r, s)
	}
	if steady.P95EMA != 500*time.Millisecond || steady.P95EMAMS != 500 {
		t.Errorf("steady provider's moving average: got %v (%d ms), want its p95 500ms", steady.P95EMA, steady.P95EMAMS)
	}
}

func TestProbe(t *testing.T) {
	type call struct {
		provider string
		failed   bool
		ago      time.Duration
		n        int
	}
	cases := []struct {
		name  string
		calls []call
		ready bool
	}{
		{"no traffic yet", nil, true},
		{"a few failures", []call{{"openai", true, 0, MinRequests - 1}}, true},
		{"the only provider failing", []call{{"openai", true, 0, 20}}, false},
		{"half failing is failing", []call{{"openai", true, 0, 10}, {"openai", false, 0, 10}}, false},
		{"one provider answers", []call{{"openai", true, 0, 20}, {"groq", false, 0, 1}}, true},
		{"every provider failing", []call{{"openai", true, 0, 20}, {"groq", true, 0, 6}, {"groq", false, 0, 4}}, false},
		{"mostly answering", []call{{"openai", true, 0, 4}, {"openai", false, 0, 16}}, true},
		{"failures a minute old", []call{{"openai", true, ProbeWindow + 10*time.Second, 50}}, true},
		{"failures within the minute", []call{{"openai", true, 40 * time.Second, 50}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := time.Unix(1_800_000_005, 0)
			tr := New(memkv.New(), quiet())
			for _, cl := range c.calls {
				tr.now = func() time.Time { return now.Add(-cl.ago) }
				for range cl.n {
					tr.Observe(cl.provider, "m", time.Millisecond, cl.failed)
				}
			}
			tr.now = func() time.Time { return now }
			err := tr.Probe(context.Background())
			if (err == nil) != c.ready {
				t.Errorf("Probe: got %v, want ready %v", err, c.ready)
			}
		})
	}
}
