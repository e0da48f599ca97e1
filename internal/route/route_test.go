package route

import (
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/provider"
)

func TestResolve(t *testing.T) {
	openai := &provider.Provider{Name: "openai", Families: []string{"gpt-", "o1"}}
	deepseek := &provider.Provider{Name: "deepseek", Families: []string{"deepseek-"}}
	groq := &provider.Provider{Name: "groq"}
	reg := provider.NewRegistry("openai", openai, deepseek, groq)
	r := NewResolver(reg)
	cases := []struct {
		model, provider, upstream string
	}{
		{"gpt-4o", "openai", "gpt-4o"},
		{"openai/gpt-4o", "openai", "gpt-4o"},
		{"groq/llama-3.3-70b-versatile", "groq", "llama-3.3-70b-versatile"},
		{"GROQ/llama", "groq", "llama"},
		{"deepseek-chat", "deepseek", "deepseek-chat"},
		{"groq/deepseek-r1-distill", "groq", "deepseek-r1-distill"},  // prefix wins over family
		{"meta-llama/Llama-3-8b", "openai", "meta-llama/Llama-3-8b"}, // not a provider: default, name kept
		{"some-model", "openai", "some-model"},
	}
	for _, c := range cases {
		d, err := r.Resolve(c.model)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", c.model, err)
		}
		if d.Provider.Name != c.provider || d.Model != c.upstream || d.Reason != "provider:"+c.provider {
			t.Errorf("Resolve(%q) = %s/%s (%s), want %s/%s", c.model, d.Provider.Name, d.Model, d.Reason, c.provider, c.upstream)
		}
	}
	if got := r.PublicName(groq, "llama"); got != "groq/llama" {
		t.Errorf("PublicName(groq) = %q", got)
	}
	if got := r.PublicName(openai, "gpt-4o"); got != "gpt-4o" {
		t.Errorf("PublicName(openai) = %q", got)
	}
	none := NewResolver(provider.NewRegistry("missing"))
	if _, err := none.Resolve("x"); apierr.KindOf(err) != apierr.Unavailable {
		t.Errorf("no provider: got %v, want Unavailable", err)
	}
}
