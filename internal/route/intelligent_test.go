package route

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/provider"
)

type latencies map[string]time.Duration

func (f latencies) InFlight(string, string) int64 { return 0 }
func (f latencies) LatencyP95(p, _ string) time.Duration {
	return f[p]
}
func (f latencies) Healthy(p, _ string) bool { return f[p] < time.Hour }

// TestIntelligentRouter checks that a model naming no provider is planned
// among the providers whose <PROVIDER>_ENABLED is true (the default provider
// first when it is one of them), and by the default provider alone when none
// is enabled.
func TestIntelligentRouter(t *testing.T) {
	openai := &provider.Provider{Name: "openai", Families: []string{"gpt-"}}
	openaiOn := &provider.Provider{Name: "openai", Families: []string{"gpt-"}, Enabled: true}
	groq := &provider.Provider{Name: "groq", Enabled: true}
	mistral := &provider.Provider{Name: "mistral", Enabled: true}
	off := &provider.Provider{Name: "together"}
	offGroq := &provider.Provider{Name: "groq"}
	reg := provider.NewRegistry("openai", openai, groq, mistral, off)
	names := func(p Plan) []string {
		var out []string
		for _, d := range p.Decisions {
			out = append(out, d.Provider.Name)
		}
		return out
	}
	cases := []struct {
		name    string
		reg     *provider.Registry
		cfg     Config
		health  Health
		model   string
		want    []string
		chain   string
		retries int
	}{
		{"the enabled providers only, not a default that is not enabled", reg, Config{}, nil, "llama-3.3-70b", []string{"groq", "mistral"}, "intelligent", 1},
		{"an enabled default goes first", provider.NewRegistry("openai", openaiOn, groq, mistral, off), Config{}, nil, "llama-3.3-70b", []string{"openai", "groq", "mistral"}, "intelligent", 2},
		{"the configured default, enabled, goes first", reg, Config{DefaultProvider: "mistral"}, nil, "llama-3.3-70b", []string{"mistral", "groq"}, "intelligent", 1},
		{"one enabled provider takes it alone", provider.NewRegistry("openai", openai, groq, off), Config{}, nil, "llama-3.3-70b", []string{"groq"}, "intelligent", 0},
		{"none enabled: the default alone", provider.NewRegistry("openai", openai, offGroq, off), Config{}, nil, "llama-3.3-70b", []string{"openai"}, "", 0},
		{"latency orders them", reg, Config{Strategy: Strategy{Name: StrategyLatency}}, latencies{"openai": 50 * time.Millisecond, "groq": 300 * time.Millisecond, "mistral": 100 * time.Millisecond}, "llama-3.3-70b", []string{"mistral", "groq"}, "intelligent", 1},
		{"unhealthy last", reg, Config{}, latencies{"groq": 2 * time.Hour}, "llama-3.3-70b", []string{"mistral", "groq"}, "intelligent", 1},
		{"a family is not guessed", reg, Config{}, nil, "gpt-4o", []string{"openai"}, "", 0},
		{"a prefix is not guessed", reg, Config{}, nil, "together/llama", []string{"together"}, "", 0},
		{"an alias is not guessed", reg, Config{ModelMap: map[string]string{"fast": "together/llama"}}, nil, "fast", []string{"together"}, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			r := NewResolver(c.reg).WithSources(Sources{Config: func() *Config { return &cfg }, Health: c.health})
			p, err := r.Plan(c.model, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, names(p)); diff != "" || p.MaxRetries != c.retries || p.Chain != c.chain {
				t.Fatalf("plan %v (chain %q, retries %d), want %v (chain %q, retries %d)", names(p), p.Chain, p.MaxRetries, c.want, c.chain, c.retries)
			}
			for _, d := range p.Decisions {
				if d.Model != p.Decisions[0].Model {
					t.Errorf("decision %s/%s: the model must be sent as asked", d.Provider.Name, d.Model)
				}
			}
		})
	}
}

// TestIntelligentWithoutDefault checks that a model naming no provider is
// served by the enabled providers when no default provider is configured.
func TestIntelligentWithoutDefault(t *testing.T) {
	reg := provider.NewRegistry("nope", &provider.Provider{Name: "groq", Enabled: true}, &provider.Provider{Name: "together"})
	p, err := NewResolver(reg).Plan("llama", time.Now())
	if err != nil || len(p.Decisions) != 1 || p.Decisions[0].Provider.Name != "groq" || p.Chain != "intelligent" {
		t.Errorf("no default provider: got %+v, %v; want groq by the intelligent router", p, err)
	}
	reg = provider.NewRegistry("nope", &provider.Provider{Name: "together"})
	if _, err := NewResolver(reg).Plan("llama", time.Now()); err == nil {
		t.Errorf("no default and none enabled: got a plan, want no_provider")
	}
}

// TestActive checks where the routing status says a request naming no
// provider goes.
func TestActive(t *testing.T) {
	openai := &provider.Provider{Name: "openai"}
	openaiOn := &provider.Provider{Name: "openai", Enabled: true}
	groq := &provider.Provider{Name: "groq", Enabled: true}
	mistral := &provider.Provider{Name: "mistral", Enabled: true}
	offGroq := &provider.Provider{Name: "groq"}
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		reg  *provider.Registry
		cfg  Config
		want Active
	}{
		{"none enabled: the default alone", provider.NewRegistry("openai", openai, offGroq), Config{},
			Active{Provider: "openai", Providers: []string{"openai"}}},
		{"the configured default", provider.NewRegistry("openai", openai, offGroq), Config{DefaultProvider: "groq"},
			Active{Provider: "groq", Providers: []string{"groq"}}},
		{"enabled providers, default not among them", provider.NewRegistry("openai", openai, groq, mistral), Config{},
			Active{Provider: "groq", Chain: "intelligent", Providers: []string{"groq", "mistral"}}},
		{"enabled default first", provider.NewRegistry("openai", openaiOn, groq, mistral), Config{},
			Active{Provider: "openai", Chain: "intelligent", Providers: []string{"openai", "groq", "mistral"}}},
		{"forced alone", provider.NewRegistry("openai", openaiOn, groq), Config{Forced: &Forced{Provider: "groq", Until: now.Add(time.Minute)}},
			Active{Provider: "groq", Forced: true, Providers: []string{"groq"}}},
		{"forced expired", provider.NewRegistry("openai", openai, offGroq), Config{Forced: &Forced{Provider: "groq", Until: now}},
			Active{Provider: "openai", Providers: []string{"openai"}}},
		{"nothing configured", provider.NewRegistry("nope", offGroq), Config{}, Active{Providers: []string{}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			got := NewResolver(c.reg).WithSources(Sources{Config: func() *Config { return &cfg }}).Active(now)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Active (-want +got):\n%s", diff)
			}
		})
	}
}
