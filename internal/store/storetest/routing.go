package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/route"
	"github.com/svc-gateway/svc/internal/store"
)

// ExerciseRoutingStore checks that s behaves as route.ConfigStore documents.
// The store holds one configuration, so the suite overwrites it; it checks
// the empty state only when s has never been saved to. Subtests run in
// order and share s.
func ExerciseRoutingStore(t *testing.T, s route.ConfigStore) {
	t.Helper()
	ctx := t.Context()
	_, start, err := s.LoadRouting(ctx)
	if err != nil {
		t.Fatalf("LoadRouting: %v", err)
	}
	f := &routingFixture{s: s, start: start, v1: start + 1, full: fullRouting()}

	t.Run("Empty", f.empty)
	t.Run("SaveLoad", f.saveLoad)
	t.Run("Conflict", f.conflict)
	t.Run("ConcurrentUpdates", f.concurrentUpdates)
}

// routingFixture is what ExerciseRoutingStore's subtests share: the store,
// its version when the suite began, the version SaveLoad saves (v1) and
// the configuration it saves (full).
type routingFixture struct {
	s         route.ConfigStore
	start, v1 int64
	full      route.Config
}

// fullRouting is a configuration with every field set, non-ASCII text and
// a time with microseconds.
func fullRouting() route.Config {
	return route.Config{
		Chains: []route.Chain{{
			Name: "fast",
			Targets: []route.Target{
				{Provider: "openai", Model: "gpt-4o-mini", Weight: 3},
				{Provider: "groq", Model: "llama-3.3-70b-versatile", Weight: 1.5},
			},
			RetryOn: []int{429, 500, 503}, MaxRetries: 1, BackoffMS: 250,
		}},
		Strategy:        route.Strategy{Name: route.StrategyLatency, Weights: route.Weights{SuccessRate: 0.4, Latency: 0.3, Cost: 0.2, Quality: 0.1}},
		DefaultProvider: "anthropic",
		ModelMap:        map[string]string{"smart": "anthropic/claude-sonnet-4", "é-alias": "openai/gpt-4o"},
		Forced:          &route.Forced{Provider: "groq", Until: time.Date(2025, 3, 14, 15, 9, 26, 535897000, time.UTC)},
		Budgets:         []route.ProviderBudget{{Provider: "openai", DailyBudgetUSD: 12.5}},
	}
}

// empty checks that a store never saved to loads version 0 and the zero
// configuration; it is skipped when the store already held a version.
func (f *routingFixture) empty(t *testing.T) {
	if f.start != 0 {
		t.Skipf("store already holds version %d", f.start)
	}
	c, v, err := f.s.LoadRouting(t.Context())
	if err != nil {
		t.Fatalf("LoadRouting: %v", err)
	}
	if v != 0 {
		t.Errorf("version: got %d, want 0", v)
	}
	if diff := cmp.Diff(route.Config{}, c); diff != "" {
		t.Errorf("empty config (-want +got):\n%s", diff)
	}
}

// saveLoad checks that saving full over the current version returns the
// next one, v1, and that full loads back whole at v1.
func (f *routingFixture) saveLoad(t *testing.T) {
	ctx := t.Context()
	v, err := f.s.SaveRouting(ctx, f.full, f.start)
	if err != nil {
		t.Fatalf("SaveRouting(version %d): %v", f.start, err)
	}
	if v != f.v1 {
		t.Errorf("SaveRouting: got version %d, want %d", v, f.v1)
	}
	got, gv, err := f.s.LoadRouting(ctx)
	if err != nil {
		t.Fatalf("LoadRouting: %v", err)
	}
	if gv != f.v1 {
		t.Errorf("LoadRouting: got version %d, want %d", gv, f.v1)
	}
	if diff := cmp.Diff(f.full, got); diff != "" {
		t.Errorf("LoadRouting (-want +got):\n%s", diff)
	}
}

// conflict checks that saves over a stale or a future version are refused
// with store.ErrConflict and change nothing.
func (f *routingFixture) conflict(t *testing.T) {
	ctx := t.Context()
	for _, stale := range []int64{f.start, f.v1 + 5} {
		if _, err := f.s.SaveRouting(ctx, route.Config{DefaultProvider: "stale"}, stale); !errors.Is(err, store.ErrConflict) {
			t.Errorf("SaveRouting(version %d, stored %d): got error %v, want store.ErrConflict", stale, f.v1, err)
		}
	}
	got, gv, err := f.s.LoadRouting(ctx)
	if err != nil {
		t.Fatalf("LoadRouting: %v", err)
	}
	if gv != f.v1 || got.DefaultProvider != f.full.DefaultProvider {
		t.Errorf("after refused saves: got version %d, default %q; want %d, %q", gv, got.DefaultProvider, f.v1, f.full.DefaultProvider)
	}
}

// concurrentUpdates checks that writers doing load-modify-save with
// retries on conflict (addBudget): none is lost and each save adds exactly
// one version.
func (f *routingFixture) concurrentUpdates(t *testing.T) {
	const writers = 8
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Go(func() { errs <- addBudget(t.Context(), f.s, i) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("writer: %v", err)
		}
	}
	got, gv, err := f.s.LoadRouting(t.Context())
	if err != nil {
		t.Fatalf("LoadRouting: %v", err)
	}
	if want := f.v1 + writers; gv != want {
		t.Errorf("version after %d updates: got %d, want %d", writers, gv, want)
	}
	if want := len(f.full.Budgets) + writers; len(got.Budgets) != want {
		t.Errorf("budgets after %d updates: got %d, want %d: %+v", writers, len(got.Budgets), want, got.Budgets)
	}
}

// addBudget adds a budget for provider "p<i>" to s's configuration by
// load-modify-save, again from the load while the save conflicts.
func addBudget(ctx context.Context, s route.ConfigStore, i int) error {
	for {
		c, v, err := s.LoadRouting(ctx)
		if err != nil {
			return err
		}
		c.Budgets = append(c.Budgets, route.ProviderBudget{Provider: fmt.Sprintf("p%d", i), DailyBudgetUSD: float64(i)})
		_, err = s.SaveRouting(ctx, c, v)
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
}
