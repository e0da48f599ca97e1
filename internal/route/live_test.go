package route_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/route"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

func openDB(t *testing.T) *route.SQLConfigStore {
	t.Helper()
	return route.NewSQLConfigStore(storetest.OpenSQL(t, "sqlite://"+filepath.Join(t.TempDir(), "svc.db")))
}

func newKV(t *testing.T) *memkv.KV {
	t.Helper()
	kv := memkv.New()
	t.Cleanup(func() { kv.Close() })
	return kv
}

// run starts l.Run until the test ends.
func run(t *testing.T, l *route.Live) {
	t.Helper()
	storetest.Background(t, l.Run)
}

func setDefault(p string) func(*route.Config) error {
	return func(c *route.Config) error { c.DefaultProvider = p; return nil }
}

func TestLiveUpdatePropagates(t *testing.T) {
	db, kv := openDB(t), newKV(t)
	a := route.NewLive(db, kv, nil)
	b := route.NewLive(db, kv, nil)
	if got := a.Current(); got == nil || got.DefaultProvider != "" || a.Version() != 0 {
		t.Fatalf("before any load: got %+v version %d, want empty config, version 0", got, a.Version())
	}
	run(t, b)

	c, err := a.Update(t.Context(), setDefault("groq"))
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if c.DefaultProvider != "groq" || a.Current().DefaultProvider != "groq" || a.Version() != 1 {
		t.Errorf("after Update: returned %q, current %q, version %d; want groq, groq, 1", c.DefaultProvider, a.Current().DefaultProvider, a.Version())
	}
	storetest.Until(t, 5*time.Second, "b to follow the change", func() bool { return b.Current().DefaultProvider == "groq" && b.Version() == 1 })
}

func TestLivePollsWithoutNotice(t *testing.T) {
	db := openDB(t)
	writer := route.NewLive(db, nil, nil) // announces nothing
	follower := route.NewLive(db, newKV(t), nil)
	if _, err := writer.Update(t.Context(), setDefault("groq")); err != nil {
		t.Fatalf("Update: %v", err)
	}
	run(t, follower)
	storetest.Until(t, 5*time.Second, "the follower's first load", func() bool { return follower.Version() == 1 })
	if _, err := writer.Update(t.Context(), setDefault("mistral")); err != nil {
		t.Fatalf("Update: %v", err)
	}
	start := time.Now()
	storetest.Until(t, 5*time.Second, "the poll to pick up the change", func() bool { return follower.Current().DefaultProvider == "mistral" })
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("follower converged after %v, want within about a second", d)
	}
}

func TestLiveConcurrentUpdates(t *testing.T) {
	db, kv := openDB(t), newKV(t)
	lives := []*route.Live{route.NewLive(db, kv, nil), route.NewLive(db, kv, nil)}
	const n = 8
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, err := lives[i%2].Update(context.Background(), func(c *route.Config) error {
				c.Budgets = append(c.Budgets, route.ProviderBudget{Provider: fmt.Sprintf("p%d", i), DailyBudgetUSD: 1})
				return nil
			})
			if err != nil {
				t.Errorf("Update %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	c, v, err := db.LoadRouting(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Budgets) != n || v != n {
		t.Errorf("after %d concurrent updates: %d budgets, version %d; want %d, %d", n, len(c.Budgets), v, n, n)
	}
}

func TestLiveUpdateRefusals(t *testing.T) {
	db := openDB(t)
	l := route.NewLive(db, newKV(t), nil)
	mine := errors.New("mine")
	if _, err := l.Update(t.Context(), func(*route.Config) error { return mine }); !errors.Is(err, mine) {
		t.Errorf("fn error: got %v, want it returned as is", err)
	}
	_, err := l.Update(t.Context(), func(c *route.Config) error { c.Strategy.Name = "fastest"; return nil })
	if e := apierr.From(err); err == nil || e.Kind != apierr.InvalidRequest || e.Param != "strategy" {
		t.Errorf("invalid result: got %v, want a bad strategy", err)
	}
	if _, v, _ := db.LoadRouting(t.Context()); v != 0 {
		t.Errorf("refused updates saved version %d, want nothing saved", v)
	}
}

func TestLiveCurrentAllocatesNothing(t *testing.T) {
	l := route.NewLive(openDB(t), nil, nil)
	if _, err := l.Update(t.Context(), setDefault("groq")); err != nil {
		t.Fatal(err)
	}
	var sink *route.Config
	if n := testing.AllocsPerRun(1000, func() { sink = l.Current() }); n != 0 {
		t.Errorf("Current: %v allocations per call, want 0", n)
	}
	_ = sink
}

// TestLiveAcrossReplicas runs two Lives as two replicas would: each with its
// own PostgreSQL pool, sharing Redis for notices.
func TestLiveAcrossReplicas(t *testing.T) {
	url := storetest.PostgresURL(t)
	kv := storetest.RedisKV(t)
	open := func() *route.SQLConfigStore { return route.NewSQLConfigStore(storetest.OpenSQL(t, url)) }
	a := route.NewLive(open(), kv, nil)
	b := route.NewLive(open(), kv, nil)
	run(t, b)
	if _, err := a.Update(t.Context(), func(c *route.Config) error {
		c.Chains = append(c.Chains, route.Chain{Name: "fast", Targets: []route.Target{{Provider: "groq", Model: "llama"}}})
		return nil
	}); err != nil {
		t.Fatalf("Update: %v", err)
	}
	storetest.Until(t, 5*time.Second, "the other replica to see the chain", func() bool { _, ok := b.Current().Chain("fast"); return ok })
}
