package route

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/provider"
)

// figures is a Health with success rates: per provider, p95 latency, success
// rate (negative: unmeasured) and health.
type figures map[string]struct {
	p95     time.Duration
	success float64
	down    bool
}

func (f figures) InFlight(string, string) int64           { return 0 }
func (f figures) LatencyP95(p, _ string) time.Duration    { return f[p].p95 }
func (f figures) Healthy(p, _ string) bool                { return !f[p].down }
func (f figures) SuccessRate(p, _ string) (float64, bool) { return f[p].success, f[p].success >= 0 }
func (f figures) with(p string, down bool) figures {
	g := figures{}
	for k, v := range f {
		g[k] = v
	}
	v := g[p]
	v.down = down
	g[p] = v
	return g
}

// perTokenPrices prices every model of a provider alike.
type perTokenPrices map[string]float64

func (p perTokenPrices) PerToken(provider, _ string) (float64, bool) {
	v, ok := p[provider]
	return v, ok
}

// TestStrategyWeights checks that the strategy weights order the intelligent
// router's providers: each weight alone picks the provider best on its
// factor, mixed weights trade them off, and no weights keep the strategy.
func TestStrategyWeights(t *testing.T) {
	openai := &provider.Provider{Name: "openai", Families: []string{"gpt-"}, Enabled: true}
	groq := &provider.Provider{Name: "groq", Enabled: true}
	mistral := &provider.Provider{Name: "mistral", Enabled: true}
	reg := provider.NewRegistry("openai", openai, groq, mistral)
	// openai: slow, reliable, dear; groq: fast, flaky, mid-priced;
	// mistral: middling latency, fairly reliable, cheapest.
	health := figures{
		"openai":  {p95: 900 * time.Millisecond, success: 0.99},
		"groq":    {p95: 100 * time.Millisecond, success: 0.80},
		"mistral": {p95: 400 * time.Millisecond, success: 0.95},
	}
	prices := perTokenPrices{"openai": 10, "groq": 1, "mistral": 0.5}
	cases := []struct {
		name     string
		strategy Strategy
		health   Health
		prices   Prices
		want     []string
		label    string
	}{
		{"no weights: the strategy", Strategy{}, health, prices, []string{"openai", "groq", "mistral"}, StrategyPriority},
		{"cost alone: cheapest first", Strategy{Weights: Weights{Cost: 1}}, health, prices, []string{"mistral", "groq", "openai"}, StrategyScore},
		{"latency alone: fastest first", Strategy{Weights: Weights{Latency: 1}}, health, prices, []string{"groq", "mistral", "openai"}, StrategyScore},
		{"success rate alone: most reliable first", Strategy{Weights: Weights{SuccessRate: 1}}, health, prices, []string{"openai", "mistral", "groq"}, StrategyScore},
		{"quality alone: the dearest tier first", Strategy{Weights: Weights{Quality: 1}}, health, prices, []string{"openai", "groq", "mistral"}, StrategyScore},
		// groq: latency 1 + success 0 = 1; mistral: 0.625 + 0.79 ≈ 1.41;
		// openai: 0 + 1 = 1 (a tie with groq: the latency strategy's order).
		{"latency and success rate", Strategy{Name: StrategyLatency, Weights: Weights{Latency: 1, SuccessRate: 1}}, health, prices, []string{"mistral", "groq", "openai"}, StrategyScore},
		{"the weights override the strategy's order", Strategy{Name: StrategyCost, Weights: Weights{Latency: 1}}, health, prices, []string{"groq", "mistral", "openai"}, StrategyScore},
		{"unhealthy stays last", Strategy{Weights: Weights{Latency: 1}}, health.with("groq", true), prices, []string{"mistral", "openai", "groq"}, StrategyScore},
		// Unknown figures score the middle: without prices, cost ranks
		// nobody and the default order stays.
		{"cost without prices", Strategy{Weights: Weights{Cost: 1}}, health, nil, []string{"openai", "groq", "mistral"}, StrategyScore},
		{"unmeasured latency is middling", Strategy{Weights: Weights{Latency: 1}}, figures{"openai": {p95: 900 * time.Millisecond, success: -1}, "groq": {p95: 100 * time.Millisecond, success: -1}, "mistral": {success: -1}}, prices, []string{"groq", "mistral", "openai"}, StrategyScore},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{Strategy: c.strategy}
			r := NewResolver(reg).WithSources(Sources{Config: func() *Config { return &cfg }, Health: c.health, Prices: c.prices})
			p, err := r.Plan("llama-3.3-70b", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range p.Decisions {
				got = append(got, d.Provider.Name)
				if d.Strategy != c.label {
					t.Errorf("decision %s: Strategy %q, want %q", d.Provider.Name, d.Strategy, c.label)
				}
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("plan order (-want +got):\n%s", diff)
			}
		})
	}
	// A named chain keeps its strategy whatever the weights.
	cfg := Config{Strategy: Strategy{Weights: Weights{Cost: 1}}, Chains: []Chain{{Name: "main", Targets: []Target{
		{Provider: "openai", Model: "m"}, {Provider: "mistral", Model: "m"}}}}}
	r := NewResolver(reg).WithSources(Sources{Config: func() *Config { return &cfg }, Health: health, Prices: prices})
	p, err := r.Plan("main", time.Now())
	if err != nil || p.Decisions[0].Provider.Name != "openai" || p.Decisions[0].Strategy != StrategyPriority {
		t.Errorf("named chain with weights: got %+v, %v, want openai first by priority", p.Decisions, err)
	}
}
