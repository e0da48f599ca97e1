package health

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

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
