package e2e

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/providertest"
)

func TestFallbackChainAndForcedProvider(t *testing.T) {
	primary := providertest.NewOpenAI(t, providertest.WithReply("from primary"))
	backup := providertest.NewOpenAI(t, providertest.WithReply("from backup"))
	g := start(t, primary, config.Map{"BACKUP_API_BASE": backup.URL(), "BACKUP_API_KEY": "sk-backup"})
	key, _ := g.newKey(nil)
	c := g.client(key)
	chain := map[string]any{"name": "main", "targets": []map[string]any{
		{"provider": "openai", "model": "gpt-4o-mini"}, {"provider": "backup", "model": "gpt-4o-mini"}}, "backoff_ms": 1}
	if code := g.admin("POST", "/api/routing/fallback-chains", chain, nil); code != 201 {
		t.Fatalf("create chain: %d", code)
	}
	ask := func(model string) (string, error) {
		res, err := c.Chat.Completions.New(context.Background(), chatParams(model, "hi"))
		if err != nil {
			return "", err
		}
		return res.Choices[0].Message.Content, nil
	}
	// Healthy primary: the chain's first target answers.
	if got, err := ask("main"); err != nil || got != "from primary" {
		t.Fatalf("healthy chain: %q %v", got, err)
	}
	// The primary fails with 503: the next target answers, for the chain's name
	// and for a model that resolves to the chain's first target.
	primary.Set(providertest.WithStatus(503))
	for _, model := range []string{"main", "gpt-4o-mini"} {
		if got, err := ask(model); err != nil || got != "from backup" {
			t.Errorf("%s with the primary down: %q %v, want the backup", model, got, err)
		}
	}
	entries := g.logEntries("", 3)
	if entries[0]["routing_strategy"] != "fallback" || entries[0]["routing_reason"] != "fallback:main:backup" {
		t.Errorf("entry = %v %v, want the fallback recorded", entries[0]["routing_strategy"], entries[0]["routing_reason"])
	}
	// A caller's mistake is not retried elsewhere.
	primary.Set(providertest.WithStatus(400))
	n := chatCount(backup)
	if _, err := ask("main"); statusOf(err) != 400 {
		t.Errorf("400 from the primary: %v, want it returned", err)
	}
	if chatCount(backup) != n {
		t.Error("a 400 was retried on the backup")
	}
	var status map[string]any
	g.admin("GET", "/api/routing/status", nil, &status)
	if lf, _ := status["last_failure"].(map[string]any); lf == nil || lf["provider"] != "openai" {
		t.Errorf("status last_failure = %v", status["last_failure"])
	}

	// Chains and aliases are listed as models.
	g.admin("POST", "/api/routing/model-mapping", map[string]any{"alias": "fast", "provider": "backup", "model": "gpt-4o-mini"}, nil)
	page, err := c.Models.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, m := range page.Data {
		ids[m.ID] = true
	}
	if !ids["main"] || !ids["fast"] {
		t.Errorf("models lack the chain or the alias: %v", ids)
	}
	if got, err := ask("fast"); err != nil || got != "from backup" {
		t.Errorf("alias: %q %v, want the backup", got, err)
	}

	// Forcing the backup sends everything there.
	primary.Set(providertest.WithStatus(0))
	if code := g.admin("POST", "/api/routing/force-provider", map[string]any{"provider": "backup", "duration_seconds": 60}, nil); code != 200 {
		t.Fatalf("force: %d", code)
	}
	if got, err := ask("gpt-4o-mini"); err != nil || got != "from backup" {
		t.Errorf("forced: %q %v, want the backup", got, err)
	}
	g.admin("POST", "/api/routing/force-provider", map[string]any{"provider": "backup", "duration_seconds": 0}, nil)
	if got, err := ask("gpt-4o-mini"); err != nil || got != "from primary" {
		t.Errorf("after clearing: %q %v, want the primary", got, err)
	}
}

// A provider at its daily budget is skipped and the chain takes over.
func TestProviderDailyBudget(t *testing.T) {
	primary := providertest.NewOpenAI(t, providertest.WithReply("from primary"))
	backup := providertest.NewOpenAI(t, providertest.WithReply("from backup"))
	g := start(t, primary, config.Map{"BACKUP_API_BASE": backup.URL(), "BACKUP_API_KEY": "sk-backup"})
	key, _ := g.newKey(nil)
	c := g.client(key)
	chain := map[string]any{"name": "main", "targets": []map[string]any{
		{"provider": "openai", "model": "gpt-4o-mini"}, {"provider": "backup", "model": "gpt-4o-mini"}}}
	if code := g.admin("POST", "/api/routing/fallback-chains", chain, nil); code != 201 {
		t.Fatalf("chain: %d", code)
	}
	// A budget below one request's cost: the first request spends it.
	if code := g.admin("POST", "/api/routing/budgets", map[string]any{"provider": "openai", "daily_budget_usd": 0.000001}, nil); code != 200 && code != 201 {
		t.Fatalf("budget: %d", code)
	}
	ask := func() string {
		res, err := c.Chat.Completions.New(context.Background(), chatParams("main", "hi"))
		if err != nil {
			t.Fatal(err)
		}
		return res.Choices[0].Message.Content
	}
	if got := ask(); got != "from primary" {
		t.Fatalf("first request: %q, want the primary (under budget)", got)
	}
	// The spend reaches every process's view within a second or two.
	if !eventuallyFor(3*time.Second, func() bool { return ask() == "from backup" }) {
		t.Error("the provider over its daily budget is still used")
	}
}

func eventuallyFor(d time.Duration, f func() bool) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if f() {
			return true
		}
	}
	return false
}

// A connection failure before the first byte moves on to the next target.
func TestFallbackOnUnreachableProvider(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	backup := providertest.NewOpenAI(t, providertest.WithReply("from backup"))
	g := start(t, nil, config.Map{"OPENAI_API_BASE": dead, "BACKUP_API_BASE": backup.URL(), "BACKUP_API_KEY": "sk-backup"})
	key, _ := g.newKey(nil)
	chain := map[string]any{"name": "main", "targets": []map[string]any{
		{"provider": "openai", "model": "gpt-4o-mini"}, {"provider": "backup", "model": "gpt-4o-mini"}}}
	if code := g.admin("POST", "/api/routing/fallback-chains", chain, nil); code != 201 {
		t.Fatalf("chain: %d", code)
	}
	c := g.client(key)
	s := c.Chat.Completions.NewStreaming(context.Background(), chatParams("main", "hi"))
	acc := openai.ChatCompletionAccumulator{}
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil || acc.Choices[0].Message.Content != "from backup" {
		t.Fatalf("stream with the primary unreachable: %+v %v, want the backup", acc.Choices, err)
	}
}
