package e2e

import (
	"context"
	"testing"

	"github.com/svc-gateway/svc/internal/providertest"
)

// TestModelsListsOnlyAllowedModels: GET /v1/models shows a key only the
// models it may use.
func TestModelsListsOnlyAllowedModels(t *testing.T) {
	fake := providertest.NewOpenAI(t)
	g := start(t, fake, nil)
	open, _ := g.newKey(nil)
	narrow, _ := g.newKey(map[string]any{"model_restrictions": []string{"gpt-4o-mini", "text-embedding-*"}})
	ctx := context.Background()
	ids := func(key string) map[string]bool {
		t.Helper()
		c := g.client(key)
		page, err := c.Models.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, m := range page.Data {
			out[m.ID] = true
		}
		return out
	}
	all, some := ids(open), ids(narrow)
	if !all["gpt-4o"] || !all["gpt-4o-mini"] {
		t.Fatalf("unrestricted key's list lacks gpt-4o or gpt-4o-mini: %v", all)
	}
	if !some["gpt-4o-mini"] || !some["text-embedding-3-small"] {
		t.Errorf("restricted key's list %v: want gpt-4o-mini and text-embedding-3-small", some)
	}
	for id := range some {
		if id != "gpt-4o-mini" && (len(id) < 15 || id[:15] != "text-embedding-") {
			t.Errorf("restricted key sees %q, which it may not use", id)
		}
	}
}
