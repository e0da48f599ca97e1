package access_test

import (
	"context"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/mcpgw/access"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// TestGrantsSubscriptionLost: when the subscription ends the cached sets
// are dropped (the hooks told) and the cache is unused until a new one is
// made, which Run retries every second while Subscribe fails; when ctx
// ends Run stops following without telling the hooks.
func TestGrantsSubscriptionLost(t *testing.T) {
	st := sqliteStore(t)
	src := &countingSource{Source: st}
	bus := &storetest.EndableBus{KV: memkv.New()}
	t.Cleanup(func() { bus.KV.Close() })
	g := access.NewGrants(src, bus, time.Hour, nil)
	var c changes
	g.OnChange(c.hook)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	eventually(t, time.Second, "subscribed", func() bool { return access.Following(g) })
	reads := func() int32 {
		before := src.n.Load()
		granted(t, g, vkey, "github", "t")
		granted(t, g, vkey, "github", "t")
		return src.n.Load() - before
	}
	if n := reads(); n != 1 {
		t.Fatalf("%d reads for 2 questions while following, want 1 (cached)", n)
	}
	flushes := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		n := 0
		for _, s := range c.all {
			if s == "|" {
				n++
			}
		}
		return n
	}
	base := flushes()

	bus.Fail.Store(true)
	bus.EndAll()
	eventually(t, time.Second, "the end noticed", func() bool { return !access.Following(g) })
	if got := flushes(); got != base+1 {
		t.Errorf("hooks told of %d flushes at the end, want 1", got-base)
	}
	if n := reads(); n != 2 {
		t.Errorf("%d reads for 2 questions while Subscribe fails, want 2 (uncached)", n)
	}
	time.Sleep(1200 * time.Millisecond) // a retry, failed
	if access.Following(g) || flushes() != base+1 {
		t.Errorf("after a failed retry: following %v, %d flushes told; want false, 1", access.Following(g), flushes()-base)
	}

	bus.Fail.Store(false)
	eventually(t, 2*time.Second, "subscribed again", func() bool { return access.Following(g) })
	if got := flushes(); got != base+2 {
		t.Errorf("hooks told of %d flushes after resubscribing, want 2", got-base)
	}
	if n := reads(); n != 1 {
		t.Errorf("%d reads for 2 questions after resubscribing, want 1 (cached)", n)
	}

	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if access.Following(g) || flushes() != base+2 {
		t.Errorf("after Run: following %v, %d flushes told; want false, 2", access.Following(g), flushes()-base)
	}
}
