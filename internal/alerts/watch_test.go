package alerts_test

import (
	"sync"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/alerts"
)

// collector is a Sender that keeps what it is sent.
type collector struct {
	mu  sync.Mutex
	got []alerts.Alert
}

func (c *collector) Send(a alerts.Alert) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, a)
	return true
}

func (c *collector) types() []alerts.Type {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []alerts.Type
	for _, a := range c.got {
		out = append(out, a.Type)
	}
	return out
}

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// feed observes ok successes then failures of provider at t, one
// millisecond apart.
func feed(w *alerts.Watch, provider string, t time.Time, ok, failures int) time.Time {
	for i := range ok + failures {
		t = t.Add(time.Millisecond)
		w.Observe(alerts.Observation{Provider: provider, Time: t, OK: i < ok, Latency: time.Second, RequestID: "r"})
	}
	return t
}

func TestWatchProviderFailure(t *testing.T) {
	for _, tc := range []struct {
		name         string
		ok, failures int
		wantAlert    bool
		wantFailed   string
		wantRequests string
	}{
		{"19 failures are too few requests", 0, 19, false, "", ""},
		{"20 requests at 25% errors", 15, 5, true, "5", "20"},
		{"20 failures", 0, 20, true, "20", "20"},
		{"20 requests at 20% errors", 16, 4, false, "", ""},
		{"100 requests at 24% errors", 76, 24, false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &collector{}
			w := alerts.NewWatch(c, alerts.WatchOptions{})
			feed(w, "openai", t0, tc.ok, tc.failures)
			if !tc.wantAlert {
				if len(c.got) != 0 {
					t.Fatalf("got %v, want no alert", c.types())
				}
				return
			}
			if len(c.got) != 1 || c.got[0].Type != alerts.ProviderFailure {
				t.Fatalf("got %v, want one ProviderFailure", c.types())
			}
			a := c.got[0]
			if a.Subject != "provider_failure:openai" || a.Severity != alerts.Critical ||
				a.Fields["failed"] != tc.wantFailed || a.Fields["requests"] != tc.wantRequests {
				t.Errorf("alert %+v: want subject provider_failure:openai, critical, %s of %s failed", a, tc.wantFailed, tc.wantRequests)
			}
		})
	}
}

func TestWatchWindow(t *testing.T) {
	c := &collector{}
	w := alerts.NewWatch(c, alerts.WatchOptions{Window: time.Minute})
	// 10 failures, then 10 more after the first ones left the window.
	end := feed(w, "openai", t0, 0, 10)
	feed(w, "openai", end.Add(2*time.Minute), 0, 10)
	if len(c.got) != 0 {
		t.Fatalf("failures spread over two windows raised %v, want nothing", c.types())
	}
	// A late observation from before the window is not counted.
	w.Observe(alerts.Observation{Provider: "openai", Time: t0, OK: false})
	if len(c.got) != 0 {
		t.Fatalf("a stale observation raised %v", c.types())
	}
	// Ten more failures now make 20 in the window: one alert, and no
	// second one while the provider keeps failing within the window.
	end = feed(w, "openai", end.Add(2*time.Minute+time.Second), 0, 40)
	if got := c.types(); len(got) != 1 {
		t.Fatalf("got %v, want one ProviderFailure", got)
	}
	// After a window, a failing provider alerts again.
	feed(w, "openai", end.Add(time.Minute+time.Second), 0, 20)
	if got := c.types(); len(got) != 2 {
		t.Fatalf("got %v, want a second ProviderFailure a window later", got)
	}
	// Providers are counted apart.
	feed(w, "anthropic", end, 10, 10)
	feed(w, "gemini", end, 10, 9)
	if got := c.types(); len(got) != 3 {
		t.Fatalf("got %v, want anthropic's alert only", got)
	}
}

func TestWatchSlowRequest(t *testing.T) {
	c := &collector{}
	w := alerts.NewWatch(c, alerts.WatchOptions{Slow: 30 * time.Second})
	w.Observe(alerts.Observation{Provider: "openai", Time: t0, OK: true, Latency: 30 * time.Second, RequestID: "r1"})
	if len(c.got) != 0 {
		t.Fatalf("a request at the threshold raised %v", c.types())
	}
	w.Observe(alerts.Observation{Provider: "openai", Time: t0.Add(time.Second), OK: true, Latency: 30*time.Second + time.Millisecond, RequestID: "r2"})
	w.Observe(alerts.Observation{Provider: "openai", Time: t0.Add(2 * time.Second), OK: true, Latency: time.Minute, RequestID: "r3"})
	if len(c.got) != 1 {
		t.Fatalf("got %v, want one SlowRequest (the second is within the window)", c.types())
	}
	a := c.got[0]
	if a.Type != alerts.SlowRequest || a.Subject != "slow_request:openai" || a.Fields["request_id"] != "r2" || a.Fields["latency_ms"] != "30001" {
		t.Errorf("alert %+v: want SlowRequest for r2 at 30001 ms", a)
	}
	w.Observe(alerts.Observation{Provider: "openai", Time: t0.Add(6 * time.Minute), OK: true, Latency: time.Minute, RequestID: "r4"})
	if len(c.got) != 2 {
		t.Fatalf("got %v, want a second SlowRequest a window later", c.types())
	}
}

func TestWatchBoundsProviders(t *testing.T) {
	c := &collector{}
	w := alerts.NewWatch(c, alerts.WatchOptions{MaxProviders: 2, Window: time.Minute})
	end := feed(w, "a", t0, 1, 0)
	feed(w, "b", t0, 1, 0)
	feed(w, "c", end, 0, 20) // no room: a and b are within their window
	if len(c.got) != 0 {
		t.Fatalf("a third provider was followed beyond MaxProviders: %v", c.types())
	}
	feed(w, "c", end.Add(2*time.Minute), 0, 20) // a and b went silent: c takes a place
	if got := c.types(); len(got) != 1 {
		t.Fatalf("got %v, want c followed once a and b were silent for a window", got)
	}
}

// TestObserveAllocatesNothing: the common case (no alert) allocates nothing.
func TestObserveAllocatesNothing(t *testing.T) {
	w := alerts.NewWatch(&collector{}, alerts.WatchOptions{})
	at := t0
	w.Observe(alerts.Observation{Provider: "openai", Time: at, OK: true})
	allocs := testing.AllocsPerRun(1000, func() {
		at = at.Add(time.Millisecond)
		w.Observe(alerts.Observation{Provider: "openai", Time: at, OK: at.UnixMilli()%10 != 0, Latency: time.Second, RequestID: "req"})
	})
	if allocs != 0 {
		t.Errorf("Observe allocates %.1f times per call, want 0", allocs)
	}
}

func TestNilWatch(t *testing.T) {
	var w *alerts.Watch
	w.Observe(alerts.Observation{Provider: "x", OK: false}) // must not panic
	var n *alerts.Notifier
	alerts.NewWatch(n, alerts.WatchOptions{}).Observe(alerts.Observation{Provider: "x", Latency: time.Hour})
}
