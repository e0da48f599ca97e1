package route

import (
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/provider"
)

type latencies map[string]time.Duration

func (f latencies) InFlight(string, string) int64 { return 0 }
func (f latencies) LatencyP95(p, _ string) time.Duration {
	return f[p]
}
func (f latencies) Healthy(p, _ string) bool { return f[p] < time.Hour }

func TestIntelligentRouter(t *testing.T) {
	openai := &provider.Provider{Name: "openai", Families: []string{"gpt-"}}
	groq := &provider.Provider{Name: "groq", Enabled: true}
	mistral := &provider.Provider{Name: "mistral", Enabled: true}
	off := &provider.Provider{Name: "together"}
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
		cfg     Config
		health  Health
		model   string
		want    []string
		retries int
	}{
		{"no inference: default then the enabled providers", Config{}, nil, "llama-3.3-70b", []string{"openai", "groq", "mistral"}, 2},
		{"latency orders them", Config{Strategy: Strategy{Name: StrategyLatency}}, latencies{"openai": 900 * time.Millisecond, "groq": 100 * time.Millisecond, "mistral": 300 * time.Millisecond}, "llama-3.3-70b", []string{"groq", "mistral", "openai"}, 2},
		{"unhealthy last", Config{}, latencies{"openai": 2 * time.Hour}, "llama-3.3-70b", []string{"groq", "mistral", "openai"}, 2},
		{"a family is not guessed", Config{}, nil, "gpt-4o", []string{"openai"}, 0},
		{"a prefix is not guessed", Config{}, nil, "groq/llama", []string{"groq"}, 0},
		{"an alias is not guessed", Config{ModelMap: map[string]string{"fast": "groq/llama"}}, nil, "fast", []string{"groq"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			r := NewResolver(reg).WithSources(Sources{Config: func() *Config { return &cfg }, Health: c.health})
			p, err := r.Plan(c.model, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			got := names(p)
			if len(got) != len(c.want) || p.MaxRetries != c.retries {
				t.Fatalf("plan %v (retries %d), want %v (retries %d)", got, p.MaxRetries, c.want, c.retries)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("plan %v, want %v", got, c.want)
				}
			}
			for _, d := range p.Decisions {
				if d.Model != p.Decisions[0].Model {
					t.Errorf("decision %s/%s: the model must be sent as asked", d.Provider.Name, d.Model)
				}
			}
		})
	}
	// Without enabled providers the default alone serves.
	r := NewResolver(provider.NewRegistry("openai", openai, off))
	if p, err := r.Plan("llama", time.Now()); err != nil || len(p.Decisions) != 1 {
		t.Errorf("no enabled provider: %v %v, want the default alone", names(p), err)
	}
}
