package route_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/svc-gateway/svc/internal/route"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

func TestSpendDailyBudget(t *testing.T) {
	kv := newKV(t)
	cfg := &route.Config{Budgets: []route.ProviderBudget{{Provider: "openai", DailyBudgetUSD: 1}}}
	current := func() *route.Config { return cfg }
	a := route.NewSpend(kv, current, nil) // this replica
	b := route.NewSpend(kv, current, nil) // another replica on the same store
	day := time.Date(2026, 5, 1, 23, 59, 0, 0, time.UTC)
	ctx := t.Context()

	if a.OverDailyBudget("openai", day) {
		t.Fatal("over budget before any spend")
	}
	if total, err := a.Add(ctx, "openai", 0.6, day); err != nil || total != 0.6 {
		t.Fatalf("Add: got %v, %v; want 0.6", total, err)
	}
	if a.OverDailyBudget("openai", day) {
		t.Error("over budget at 0.6 of 1")
	}
	if _, err := b.Add(ctx, "openai", 0.4, day); err != nil {
		t.Fatal(err)
	}
	if !b.OverDailyBudget("openai", day) {
		t.Error("b: not over budget at 1.0 of 1")
	}
	if a.OverDailyBudget("openai", day) {
		t.Error("a: over budget before refreshing (expected to lag until Refresh)")
	}
	if err := a.Refresh(ctx, day); err != nil {
		t.Fatal(err)
	}
	if !a.OverDailyBudget("openai", day) {
		t.Error("a: not over budget after refreshing")
	}
	if got, err := a.Spent(ctx, "openai", day); err != nil || got != 1 {
		t.Errorf("Spent: got %v, %v; want 1", got, err)
	}
	if a.OverDailyBudget("anthropic", day) {
		t.Error("a provider without a budget is never over it")
	}
	// UTC midnight: eligibility returns.
	next := day.Add(time.Minute)
	if a.OverDailyBudget("openai", next) {
		t.Error("still over budget after UTC midnight")
	}
	if err := a.Refresh(ctx, next); err != nil {
		t.Fatal(err)
	}
	if a.OverDailyBudget("openai", next) {
		t.Error("over budget on the new day after refreshing")
	}
	// A late refresh about the previous day does not bring it back.
	if err := a.Refresh(ctx, day); err != nil {
		t.Fatal(err)
	}
	if a.OverDailyBudget("openai", next) {
		t.Error("over budget on the new day after a late refresh of the old one")
	}
	if _, err := a.Add(ctx, "openai", -1, next); err == nil {
		t.Error("Add(-1): got nil error, want a refusal")
	}
	// Removing the budget lifts the exclusion at once.
	if _, err := a.Add(ctx, "openai", 2, next); err != nil {
		t.Fatal(err)
	}
	cfg = &route.Config{}
	if a.OverDailyBudget("openai", next) {
		t.Error("over budget after the budget was removed")
	}
}

func TestSpendRedis(t *testing.T) {
	kv := storetest.RedisKV(t)
	cfg := &route.Config{Budgets: []route.ProviderBudget{{Provider: "groq", DailyBudgetUSD: 0.5}}}
	s := route.NewSpend(kv, func() *route.Config { return cfg }, nil)
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	for range 5 {
		if _, err := s.Add(t.Context(), "groq", 0.1, now); err != nil {
			t.Fatal(err)
		}
	}
	other := route.NewSpend(kv, func() *route.Config { return cfg }, nil)
	if err := other.Refresh(t.Context(), now); err != nil {
		t.Fatal(err)
	}
	if !other.OverDailyBudget("groq", now) {
		t.Error("not over budget at 0.5 of 0.5 across replicas")
	}
}

// TestSpendBudgetEvent checks that the Add crossing a provider's daily budget
// raises one BudgetThreshold event per provider and UTC day across replicas,
// on both stores.
func TestSpendBudgetEvent(t *testing.T) {
	stores := map[string]func(t *testing.T) route.SpendStore{
		"memory": func(t *testing.T) route.SpendStore { return newKV(t) },
		"redis":  func(t *testing.T) route.SpendStore { return storetest.RedisKV(t) },
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			kv := open(t)
			cfg := &route.Config{Budgets: []route.ProviderBudget{{Provider: "openai", DailyBudgetUSD: 1}}}
			var (
				mu     sync.Mutex
				events []route.BudgetEvent
			)
			hook := func(ev route.BudgetEvent) {
				mu.Lock()
				defer mu.Unlock()
				events = append(events, ev)
			}
			var replicas []*route.Spend
			for range 3 {
				replicas = append(replicas, route.NewSpend(kv, func() *route.Config { return cfg }, nil).OnBudget(hook))
			}
			day := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
			// Below the budget: no event.
			if _, err := replicas[0].Add(t.Context(), "openai", 0.5, day); err != nil {
				t.Fatal(err)
			}
			if _, err := replicas[0].Add(t.Context(), "anthropic", 5, day); err != nil { // no budget
				t.Fatal(err)
			}
			if len(events) != 0 {
				t.Fatalf("events below the budget: %+v, want none", events)
			}
			// 60 concurrent Adds of 0.1 through three replicas cross it once.
			add := func(when time.Time) {
				var wg sync.WaitGroup
				for i := range 60 {
					wg.Go(func() {
						if _, err := replicas[i%3].Add(t.Context(), "openai", 0.1, when); err != nil {
							t.Error(err)
						}
					})
				}
				wg.Wait()
			}
			add(day)
			// 0.5 → 6.5 passed 80 % and 100 % of the budget: one event each.
			want := []route.BudgetEvent{{Provider: "openai", Day: "2026-05-01", BudgetUSD: 1, Level: 80},
				{Provider: "openai", Day: "2026-05-01", BudgetUSD: 1, Level: 100}}
			// Concurrent Adds may raise the two levels in either order.
			opt := cmp.Options{cmpopts.IgnoreFields(route.BudgetEvent{}, "SpentUSD"),
				cmpopts.SortSlices(func(a, b route.BudgetEvent) bool { return a.Day+fmt.Sprint(a.Level) < b.Day+fmt.Sprint(b.Level) })}
			if diff := cmp.Diff(want, events, opt); diff != "" {
				t.Fatalf("events after crossing (-want +got):\n%s", diff)
			}
			for _, ev := range events {
				if lo := float64(ev.Level) / 100; ev.SpentUSD < lo || ev.SpentUSD > lo+0.05 {
					t.Errorf("%d %% event SpentUSD = %v, want the total of the crossing Add (%v to %v)", ev.Level, ev.SpentUSD, lo, lo+0.05)
				}
			}
			// The next UTC day crosses afresh.
			add(day.Add(24 * time.Hour))
			want = append(want, route.BudgetEvent{Provider: "openai", Day: "2026-05-02", BudgetUSD: 1, Level: 80},
				route.BudgetEvent{Provider: "openai", Day: "2026-05-02", BudgetUSD: 1, Level: 100})
			if diff := cmp.Diff(want, events, opt); diff != "" {
				t.Errorf("events after the next day's crossing (-want +got):\n%s", diff)
			}
		})
	}
}
