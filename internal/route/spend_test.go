package route_test

import (
	"testing"
	"time"

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
