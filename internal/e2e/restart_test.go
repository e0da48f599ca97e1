package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/providertest"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// TestSpendCapAcrossRestart: the embedded default (in-process KV, SQLite)
// keeps the spend counters across a restart. A key spends up to its cap, the
// process restarts on the same data dir, and the key's next request is
// refused 402 with the same spend (it was admitted, with the spend back at
// zero, when the in-process KV lost its counters). The provider's daily
// spend, kept for its budget, is stored as well.
func TestSpendCapAcrossRestart(t *testing.T) {
	fake := providertest.NewOpenAI(t)
	dir := t.TempDir()
	settings := config.Map{"SVC_DATA_DIR": dir}
	g := start(t, fake, settings)
	if code := g.admin("POST", "/api/routing/budgets", map[string]any{"provider": "openai", "daily_budget_usd": 100}, nil); code != 200 && code != 201 {
		t.Fatalf("budget: %d", code)
	}
	key, id := g.newKey(map[string]any{"max_budget_usd": 0.0005, "budget_period": "daily"})
	c := g.client(key)
	admitted, refused := 0, 0
	for i := 0; i < 200 && refused < 2; i++ {
		_, err := c.Chat.Completions.New(context.Background(), limitedParams())
		switch {
		case err == nil:
			admitted, refused = admitted+1, 0
		case statusOf(err) != 402:
			t.Fatalf("request %d: %v, want success or 402", i+1, err)
		default:
			// A 402 may come while the last answer's reservation is still
			// being settled (off the response path): only a second one,
			// after the settlement, means the cap is spent.
			refused++
			time.Sleep(300 * time.Millisecond)
		}
	}
	if admitted == 0 || admitted == 200 {
		t.Fatalf("admitted %d requests, want some then 402", admitted)
	}
	before := keySpend(t, g, id)
	if err := g.stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	stored := durableCounters(t, filepath.Join(dir, "svc.db"))
	// The keys are limit's and route's: a key's spend in its period and a
	// provider's spend of the day.
	var keySpent, providerSpent int64
	for k, v := range stored {
		switch {
		case strings.HasPrefix(k, "limit:{") && strings.Contains(k, id+"}:spend:daily:") && !strings.Contains(k, ":alerted"):
			keySpent = v
		case strings.HasPrefix(k, "route:spend:openai:") && !strings.Contains(k, ":alerted"):
			providerSpent = v
		}
	}
	if float64(keySpent)/1e6 != before {
		t.Errorf("stored spend of the key: got %d micro-USD, want %v USD (stored: %v)", keySpent, before, stored)
	}
	if providerSpent <= 0 {
		t.Errorf("stored spend of the provider: got %d micro-USD, want > 0 (stored: %v)", providerSpent, stored)
	}

	g = start(t, fake, settings)
	c = g.client(key)
	if _, err := c.Chat.Completions.New(context.Background(), limitedParams()); statusOf(err) != 402 {
		t.Errorf("request after the restart: got %v, want 402 (the cap was spent before it)", err)
	}
	if after := keySpend(t, g, id); after != before {
		t.Errorf("spend after the restart: got %v, want %v as before it", after, before)
	}
}

// durableCounters reads the counters the in-process KV stored in the
// SQLite database at path, by key.
func durableCounters(t *testing.T, path string) map[string]int64 {
	t.Helper()
	db, err := sqlstore.Open(t.Context(), "sqlite://"+path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer db.Close()
	cs, err := sqlstore.NewCounters(db).LoadCounters(t.Context(), time.Now())
	if err != nil {
		t.Fatalf("LoadCounters: %v", err)
	}
	out := make(map[string]int64, len(cs))
	for _, c := range cs {
		out[c.Key] = c.Value
	}
	return out
}

// keySpend reads a key's spend in its budget period from the management API.
func keySpend(t *testing.T, g *gateway, id string) float64 {
	t.Helper()
	var budget struct {
		SpendUSD float64 `json:"spend_usd"`
	}
	if code := g.admin("GET", "/api/enterprise/vkeys/"+id+"/budget", nil, &budget); code != 200 {
		t.Fatalf("GET budget: %d", code)
	}
	return budget.SpendUSD
}
