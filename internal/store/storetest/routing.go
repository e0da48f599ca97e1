package storetest

import (
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

	t.Run("Empty", func(t *testing.T) {
		if start != 0 {
			t.Skipf("store already holds version %d", start)
		}
		c, v, err := s.LoadRouting(t.Context())
		if err != nil {
			t.Fatalf("LoadRouting: %v", err)
		}
		if v != 0 {
			t.Errorf("version: got %d, want 0", v)
		}
		if diff := cmp.Diff(route.Config{}, c); diff != "" {
			t.Errorf("empty config (-want +got):\n%s", diff)
		}
	})

	full := route.Config{
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
	v1 := start + 1

	t.Run("SaveLoad", func(t *testing.T) {
		ctx := t.Context()
		v, err := s.SaveRouting(ctx, full, start)
		if err != nil {
			t.Fatalf("SaveRouting(version %d): %v", start, err)
		}
		if v != v1 {
			t.Errorf("SaveRouting: got version %d, want %d", v, v1)
		}
		got, gv, err := s.LoadRouting(ctx)
		if err != nil {
			t.Fatalf("LoadRouting: %v", err)
		}
		if gv != v1 {
			t.Errorf("LoadRouting: got version %d, want %d", gv, v1)
		}
		if diff := cmp.Diff(full, got); diff != "" {
			t.Errorf("LoadRouting (-want +got):\n%s", diff)
		}
	})

	t.Run("Conflict", func(t *testing.T) {
		ctx := t.Context()
		for _, stale := range []int64{start, v1 + 5} {
			if _, err := s.SaveRouting(ctx, route.Config{DefaultProvider: "stale"}, stale); !errors.Is(err, store.ErrConflict) {
				t.Errorf("SaveRouting(version %d, stored %d): got error %v, want store.ErrConflict", stale, v1, err)
			}
		}
		got, gv, err := s.LoadRouting(ctx)
		if err != nil {
			t.Fatalf("LoadRouting: %v", err)
		}
		if gv != v1 || got.DefaultProvider != full.DefaultProvider {
			t.Errorf("after refused saves: got version %d, default %q; want %d, %q", gv, got.DefaultProvider, v1, full.DefaultProvider)
		}
	})

	t.Run("ConcurrentUpdates", func(t *testing.T) {
		// Writers doing load-modify-save with retries on conflict: none is
		// lost and each save adds exactly one version.
		const writers = 8
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for i := range writers {
			wg.Go(func() {
				for {
					c, v, err := s.LoadRouting(t.Context())
					if err != nil {
						errs <- err
						return
					}
					c.Budgets = append(c.Budgets, route.ProviderBudget{Provider: fmt.Sprintf("p%d", i), DailyBudgetUSD: float64(i)})
					_, err = s.SaveRouting(t.Context(), c, v)
					if errors.Is(err, store.ErrConflict) {
						continue
					}
					errs <- err
					return
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("writer: %v", err)
			}
		}
		got, gv, err := s.LoadRouting(t.Context())
		if err != nil {
			t.Fatalf("LoadRouting: %v", err)
		}
		if want := v1 + writers; gv != want {
			t.Errorf("version after %d updates: got %d, want %d", writers, gv, want)
		}
		if want := len(full.Budgets) + writers; len(got.Budgets) != want {
			t.Errorf("budgets after %d updates: got %d, want %d: %+v", writers, len(got.Budgets), want, got.Budgets)
		}
	})
}
