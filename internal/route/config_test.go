package route

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/apierr"
)

func TestValidate(t *testing.T) {
	good := func() Config {
		return Config{
			Chains:          []Chain{chain3("fast")},
			Strategy:        Strategy{Name: StrategyCost, Weights: Weights{SuccessRate: 1}},
			DefaultProvider: "openai",
			ModelMap:        map[string]string{"smart": "anthropic/claude-sonnet-4"},
			Forced:          &Forced{Provider: "groq", Until: now},
			Budgets:         []ProviderBudget{{Provider: "openai", DailyBudgetUSD: 10}},
		}
	}
	many := make([]Target, MaxTargets+1)
	for i := range many {
		many[i] = Target{Provider: "openai", Model: "m"}
	}
	cases := []struct {
		name   string
		modify func(*Config)
		param  string // "" means valid
	}{
		{"valid", func(*Config) {}, ""},
		{"empty", func(c *Config) { *c = Config{} }, ""},
		{"chain name upper case", func(c *Config) { c.Chains[0].Name = "Fast" }, "name"},
		{"chain name empty", func(c *Config) { c.Chains[0].Name = "" }, "name"},
		{"chain name too long", func(c *Config) { c.Chains[0].Name = strings.Repeat("a", 65) }, "name"},
		{"chain name 64", func(c *Config) { c.Chains[0].Name = strings.Repeat("a", 64) }, ""},
		{"chain name punctuation", func(c *Config) { c.Chains[0].Name = "a.b_c-9" }, ""},
		{"duplicate chain", func(c *Config) { c.Chains = append(c.Chains, c.Chains[0]) }, "name"},
		{"no targets", func(c *Config) { c.Chains[0].Targets = nil }, "targets"},
		{"too many targets", func(c *Config) { c.Chains[0].Targets = many }, "targets"},
		{"target without provider", func(c *Config) { c.Chains[0].Targets[1].Provider = "" }, "targets[1].provider"},
		{"target without model", func(c *Config) { c.Chains[0].Targets[2].Model = " " }, "targets[2].model"},
		{"negative weight", func(c *Config) { c.Chains[0].Targets[0].Weight = -1 }, "targets[0].weight"},
		{"NaN weight", func(c *Config) { c.Chains[0].Targets[0].Weight = math.NaN() }, "targets[0].weight"},
		{"retry_on 399", func(c *Config) { c.Chains[0].RetryOn = []int{399} }, "retry_on"},
		{"retry_on 600", func(c *Config) { c.Chains[0].RetryOn = []int{429, 600} }, "retry_on"},
		{"retry_on 400", func(c *Config) { c.Chains[0].RetryOn = []int{429, 400} }, "retry_on"},
		{"retry_on 404", func(c *Config) { c.Chains[0].RetryOn = []int{404} }, "retry_on"},
		{"retry_on 499", func(c *Config) { c.Chains[0].RetryOn = []int{499} }, "retry_on"},
		{"retry_on 408 and 429", func(c *Config) { c.Chains[0].RetryOn = []int{408, 429} }, ""},
		{"retry_on any 5xx", func(c *Config) { c.Chains[0].RetryOn = []int{500, 501, 529, 599} }, ""},
		{"max_retries 11", func(c *Config) { c.Chains[0].MaxRetries = 11 }, "max_retries"},
		{"max_retries -1", func(c *Config) { c.Chains[0].MaxRetries = -1 }, "max_retries"},
		{"backoff 60001", func(c *Config) { c.Chains[0].BackoffMS = 60001 }, "backoff_ms"},
		{"backoff negative", func(c *Config) { c.Chains[0].BackoffMS = -5 }, "backoff_ms"},
		{"unknown strategy", func(c *Config) { c.Strategy.Name = "fastest" }, "strategy"},
		{"negative strategy weight", func(c *Config) { c.Strategy.Weights.Latency = -0.1 }, "weights.latency"},
		{"alias without slash", func(c *Config) { c.ModelMap["x"] = "gpt-4o" }, "target"},
		{"alias empty", func(c *Config) { c.ModelMap[""] = "openai/gpt-4o" }, "alias"},
		{"forced without provider", func(c *Config) { c.Forced.Provider = "" }, "provider"},
		{"default provider with slash", func(c *Config) { c.DefaultProvider = "a/b" }, "default_provider"},
		{"negative budget", func(c *Config) { c.Budgets[0].DailyBudgetUSD = -1 }, "daily_budget_usd"},
		{"duplicate budget", func(c *Config) { c.Budgets = append(c.Budgets, c.Budgets[0]) }, "provider"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := good()
			c.modify(&cfg)
			err := cfg.Validate()
			if c.param == "" {
				if err != nil {
					t.Fatalf("Validate: got %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate: got nil, want a bad %q", c.param)
			}
			if e := apierr.From(err); e.Kind != apierr.InvalidRequest || e.Param != c.param {
				t.Fatalf("Validate: got %v (param %q), want a bad %q", err, e.Param, c.param)
			}
		})
	}
}

// TestValidateNamesTheChain checks that a configuration refused for one of
// its chains (say one stored before retry_on was narrowed) names that chain.
func TestValidateNamesTheChain(t *testing.T) {
	ch := chain3("old")
	ch.RetryOn = []int{404}
	err := (&Config{Chains: []Chain{ch}}).Validate()
	if e := apierr.From(err); err == nil || e.Param != "retry_on" || !strings.HasPrefix(e.Message, `fallback chain "old": `) {
		t.Errorf("Validate: got %v, want a bad retry_on naming chain \"old\"", err)
	}
}

func TestChainDefaults(t *testing.T) {
	ch := chain3("x")
	ch.RetryOn = nil
	ch.ApplyDefaults()
	if diff := cmp.Diff([]int{429, 500, 502, 503, 504}, ch.RetryOn); diff != "" {
		t.Errorf("default retry_on (-want +got):\n%s", diff)
	}
	if got := ch.DefaultMaxRetries(); got != 2 {
		t.Errorf("DefaultMaxRetries of 3 targets: got %d, want 2", got)
	}
}

func TestCloneIsDeep(t *testing.T) {
	c := Config{Chains: []Chain{chain3("x")}, ModelMap: map[string]string{"a": "b/c"},
		Forced: &Forced{Provider: "p", Until: time.Unix(1, 0)}, Budgets: []ProviderBudget{{Provider: "p", DailyBudgetUSD: 1}}}
	d := c.Clone()
	if diff := cmp.Diff(c, d); diff != "" {
		t.Fatalf("Clone (-orig +clone):\n%s", diff)
	}
	d.Chains[0].Targets[0].Model = "changed"
	d.Chains[0].RetryOn[0] = 599
	d.ModelMap["a"] = "changed"
	d.Forced.Provider = "changed"
	d.Budgets[0].DailyBudgetUSD = 2
	if c.Chains[0].Targets[0].Model == "changed" || c.Chains[0].RetryOn[0] == 599 || c.ModelMap["a"] == "changed" ||
		c.Forced.Provider == "changed" || c.Budgets[0].DailyBudgetUSD == 2 {
		t.Errorf("changing the clone changed the original: %+v", c)
	}
}

func TestActiveForced(t *testing.T) {
	c := Config{Forced: &Forced{Provider: "groq", Until: now}}
	if p, ok := c.ActiveForced(now.Add(-time.Nanosecond)); !ok || p != "groq" {
		t.Errorf("before until: got %q, %v; want groq, true", p, ok)
	}
	if _, ok := c.ActiveForced(now); ok {
		t.Errorf("at until: got forced, want not")
	}
	if _, ok := (&Config{}).ActiveForced(now); ok {
		t.Errorf("no forced: got forced, want not")
	}
}
