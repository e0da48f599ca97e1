package route

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/provider"
)

// fakeHealth, fakePrices and fakeBudgets are keyed by "provider/model" (or
// provider for budgets).
type fakeHealth struct {
	inFlight  map[string]int64
	latency   map[string]time.Duration
	unhealthy map[string]bool
}

func (h fakeHealth) InFlight(p, m string) int64                  { return h.inFlight[p+"/"+m] }
func (h fakeHealth) LatencyP95(p, m string) time.Duration        { return h.latency[p+"/"+m] }
func (h fakeHealth) Healthy(p, m string) bool                    { return !h.unhealthy[p+"/"+m] }
func (pr fakePrices) PerToken(p, m string) (float64, bool)       { v, ok := pr[p+"/"+m]; return v, ok }
func (b fakeBudgets) OverDailyBudget(p string, _ time.Time) bool { return b[p] }

type fakePrices map[string]float64
type fakeBudgets map[string]bool

var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func testRegistry() *provider.Registry {
	return provider.NewRegistry("openai",
		&provider.Provider{Name: "openai", Families: []string{"gpt-"}},
		&provider.Provider{Name: "anthropic", Families: []string{"claude-"}},
		&provider.Provider{Name: "groq"},
		&provider.Provider{Name: "mistral"},
	)
}

// chain3 is a chain of three targets a, b, c on three providers.
func chain3(name string) Chain {
	return Chain{Name: name, Targets: []Target{
		{Provider: "openai", Model: "gpt-4o", Weight: 1},
		{Provider: "anthropic", Model: "claude-sonnet-4", Weight: 1},
		{Provider: "groq", Model: "llama", Weight: 1},
	}, RetryOn: []int{429, 503}, MaxRetries: 2, BackoffMS: 100}
}

// targets renders a plan as "provider/model" strings.
func targets(p Plan) []string {
	out := make([]string, len(p.Decisions))
	for i, d := range p.Decisions {
		out[i] = d.Provider.Name + "/" + d.Model
	}
	return out
}

func planner(cfg *Config, s Sources) *Resolver {
	s.Config = func() *Config { return cfg }
	return NewResolver(testRegistry()).WithSources(s)
}

func TestPlanRules(t *testing.T) {
	fast := chain3("fast")
	cases := []struct {
		name    string
		cfg     Config
		src     Sources
		model   string
		want    []string
		chain   string
		errKind apierr.Kind
		errCode string
	}{
		{name: "no config: family", model: "claude-x", want: []string{"anthropic/claude-x"}},
		{name: "no config: prefix", model: "groq/llama", want: []string{"groq/llama"}},
		{name: "no config: default", model: "other", want: []string{"openai/other"}},
		{name: "configured default provider", cfg: Config{DefaultProvider: "mistral"}, model: "other", want: []string{"mistral/other"}},
		{name: "unknown configured default falls back to registry's", cfg: Config{DefaultProvider: "nope"}, model: "other", want: []string{"openai/other"}},
		{name: "alias", cfg: Config{ModelMap: map[string]string{"smart": "anthropic/claude-opus"}}, model: "smart", want: []string{"anthropic/claude-opus"}},
		{name: "chain by name", cfg: Config{Chains: []Chain{fast}}, model: "fast",
			want: []string{"openai/gpt-4o", "anthropic/claude-sonnet-4", "groq/llama"}, chain: "fast"},
		{name: "chain by first target", cfg: Config{Chains: []Chain{fast}}, model: "gpt-4o",
			want: []string{"openai/gpt-4o", "anthropic/claude-sonnet-4", "groq/llama"}, chain: "fast"},
		{name: "chain by first target through prefix", cfg: Config{Chains: []Chain{fast}}, model: "openai/gpt-4o",
			want: []string{"openai/gpt-4o", "anthropic/claude-sonnet-4", "groq/llama"}, chain: "fast"},
		{name: "chain by first target through alias", cfg: Config{Chains: []Chain{fast}, ModelMap: map[string]string{"best": "openai/gpt-4o"}}, model: "best",
			want: []string{"openai/gpt-4o", "anthropic/claude-sonnet-4", "groq/llama"}, chain: "fast"},
		{name: "not a first target: no chain", cfg: Config{Chains: []Chain{fast}}, model: "claude-sonnet-4",
			want: []string{"anthropic/claude-sonnet-4"}},
		// A forced provider is exclusive: nothing behind it.
		{name: "forced takes a chain's request alone", cfg: Config{Chains: []Chain{fast}, Forced: &Forced{Provider: "groq", Until: now.Add(time.Minute)}}, model: "fast",
			want: []string{"groq/llama"}},
		{name: "forced, chain without the forced provider: its first model", cfg: Config{Chains: []Chain{fast}, Forced: &Forced{Provider: "mistral", Until: now.Add(time.Minute)}}, model: "fast",
			want: []string{"mistral/gpt-4o"}},
		{name: "forced, bare model", cfg: Config{Forced: &Forced{Provider: "mistral", Until: now.Add(time.Minute)}}, model: "gpt-4o",
			want: []string{"mistral/gpt-4o"}},
		{name: "forced, prefixed model keeps the model", cfg: Config{Forced: &Forced{Provider: "mistral", Until: now.Add(time.Minute)}}, model: "groq/llama",
			want: []string{"mistral/llama"}},
		{name: "forced, alias: the alias's model", cfg: Config{Forced: &Forced{Provider: "mistral", Until: now.Add(time.Minute)}, ModelMap: map[string]string{"smart": "anthropic/claude-opus"}}, model: "smart",
			want: []string{"mistral/claude-opus"}},
		{name: "forced, unhealthy: still alone", cfg: Config{Chains: []Chain{fast}, Forced: &Forced{Provider: "groq", Until: now.Add(time.Minute)}},
			src: Sources{Health: fakeHealth{unhealthy: map[string]bool{"groq/llama": true}}}, model: "fast", want: []string{"groq/llama"}},
		{name: "forced expired", cfg: Config{Forced: &Forced{Provider: "mistral", Until: now}}, model: "gpt-4o", want: []string{"openai/gpt-4o"}},
		{name: "forced unknown provider: no provider", cfg: Config{Forced: &Forced{Provider: "nope", Until: now.Add(time.Minute)}}, model: "gpt-4o",
			errKind: apierr.Unavailable, errCode: "no_provider"},
		{name: "forced over budget: no fallback", cfg: Config{Chains: []Chain{fast}, Forced: &Forced{Provider: "groq", Until: now.Add(time.Minute)}},
			src: Sources{Budgets: fakeBudgets{"groq": true}}, model: "fast", errKind: apierr.Unavailable, errCode: "provider_over_budget"},
		{name: "over budget excluded from chain", cfg: Config{Chains: []Chain{fast}}, src: Sources{Budgets: fakeBudgets{"openai": true}}, model: "fast",
			want: []string{"anthropic/claude-sonnet-4", "groq/llama"}, chain: "fast"},
		{name: "over budget first target: chain takes over", cfg: Config{Chains: []Chain{fast}}, src: Sources{Budgets: fakeBudgets{"openai": true}}, model: "gpt-4o",
			want: []string{"anthropic/claude-sonnet-4", "groq/llama"}, chain: "fast"},
		{name: "over budget, no chain", src: Sources{Budgets: fakeBudgets{"openai": true}}, model: "gpt-4o",
			errKind: apierr.Unavailable, errCode: "provider_over_budget"},
		{name: "whole chain over budget", cfg: Config{Chains: []Chain{fast}}, src: Sources{Budgets: fakeBudgets{"openai": true, "anthropic": true, "groq": true}}, model: "fast",
			errKind: apierr.Unavailable, errCode: "provider_over_budget"},
		{name: "unhealthy moved last", cfg: Config{Chains: []Chain{fast}}, src: Sources{Health: fakeHealth{unhealthy: map[string]bool{"openai/gpt-4o": true}}}, model: "fast",
			want: []string{"anthropic/claude-sonnet-4", "groq/llama", "openai/gpt-4o"}, chain: "fast"},
		{name: "unknown provider in chain skipped", cfg: Config{Chains: []Chain{{Name: "x", Targets: []Target{{Provider: "gone", Model: "m"}, {Provider: "groq", Model: "llama"}}}}}, model: "x",
			want: []string{"groq/llama"}, chain: "x"},
		{name: "no provider at all", cfg: Config{Chains: []Chain{{Name: "x", Targets: []Target{{Provider: "gone", Model: "m"}}}}}, model: "x",
			errKind: apierr.Unavailable, errCode: "no_provider"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := planner(&c.cfg, c.src).Plan(c.model, now)
			if c.errCode != "" {
				if e := apierr.From(err); err == nil || e.Kind != c.errKind || e.Code != c.errCode {
					t.Fatalf("Plan(%q): got %v, want %s error %s", c.model, err, c.errKind.Type(), c.errCode)
				}
				return
			}
			if err != nil {
				t.Fatalf("Plan(%q): %v", c.model, err)
			}
			if diff := cmp.Diff(c.want, targets(p)); diff != "" {
				t.Errorf("Plan(%q) targets (-want +got):\n%s", c.model, diff)
			}
			if p.Chain != c.chain {
				t.Errorf("Plan(%q).Chain: got %q, want %q", c.model, p.Chain, c.chain)
			}
			if d := p.Decisions[0]; d.Strategy == "forced" && (p.MaxRetries != 0 || len(p.Decisions) != 1 || d.Reason != "forced:"+d.Provider.Name) {
				t.Errorf("Plan(%q) forced: got %d decisions, max_retries %d, reason %q; want one, 0, forced:<provider>", c.model, len(p.Decisions), p.MaxRetries, d.Reason)
			}
		})
	}
}

func TestPlanRetrySettings(t *testing.T) {
	fast := chain3("fast")
	bare := Chain{Name: "bare", Targets: fast.Targets[:2]}
	r := planner(&Config{Chains: []Chain{fast, bare}}, Sources{})
	p, err := r.Plan("fast", now)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{429, 503}, p.RetryOn); diff != "" || p.MaxRetries != 2 || p.BackoffMS != 100 {
		t.Errorf("chain settings: got retry_on %v, max_retries %d, backoff %d; want [429 503], 2, 100", p.RetryOn, p.MaxRetries, p.BackoffMS)
	}
	if got := p.Decision(7).Provider.Name; got != "groq" {
		t.Errorf("Target(7): got %s, want the last target groq", got)
	}
	p, err = r.Plan("bare", now)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(DefaultRetryOn, p.RetryOn); diff != "" {
		t.Errorf("default retry_on (-want +got):\n%s", diff)
	}
	p, err = r.Plan("gpt-4o-mini", now)
	if err != nil {
		t.Fatal(err)
	}
	if p.MaxRetries != 0 || len(p.Decisions) != 1 || p.Decisions[0].Strategy != "direct" {
		t.Errorf("single target: got %+v, want one direct decision, no retries", p)
	}
}

// TestRetryable checks which provider statuses move a plan on: every 5xx
// whatever retry_on lists (Anthropic's 529 too), 408 and 429 only when
// retry_on lists them, no other 4xx.
func TestRetryable(t *testing.T) {
	cases := []struct {
		retryOn []int
		yes, no []int
	}{
		{retryOn: []int{429, 503}, yes: []int{429, 500, 501, 502, 503, 504, 505, 529, 599}, no: []int{200, 400, 401, 404, 408, 409, 422}},
		{retryOn: DefaultRetryOn, yes: []int{429, 500, 501, 505, 529}, no: []int{408, 400, 413}},
		{retryOn: []int{408}, yes: []int{408, 500, 529}, no: []int{429, 400}},
		{retryOn: []int{500}, yes: []int{500, 503, 529}, no: []int{408, 429}},
	}
	for _, c := range cases {
		p := Plan{RetryOn: c.retryOn}
		for _, s := range c.yes {
			if !p.Retryable(s) {
				t.Errorf("retry_on %v: Retryable(%d) = false, want true", c.retryOn, s)
			}
		}
		for _, s := range c.no {
			if p.Retryable(s) {
				t.Errorf("retry_on %v: Retryable(%d) = true, want false", c.retryOn, s)
			}
		}
	}
}

func TestPlanStrategies(t *testing.T) {
	fast := chain3("fast")
	all := []string{"openai/gpt-4o", "anthropic/claude-sonnet-4", "groq/llama"}
	health := fakeHealth{
		inFlight: map[string]int64{"openai/gpt-4o": 9, "anthropic/claude-sonnet-4": 1, "groq/llama": 4},
		latency:  map[string]time.Duration{"openai/gpt-4o": 300 * time.Millisecond, "groq/llama": 80 * time.Millisecond},
	}
	prices := fakePrices{"openai/gpt-4o": 5e-6, "anthropic/claude-sonnet-4": 3e-6}
	cases := []struct {
		strategy string
		src      Sources
		want     []string
	}{
		{"", Sources{}, all},
		{StrategyPriority, Sources{Health: health}, all},
		{StrategyLeastConnections, Sources{Health: health}, []string{"anthropic/claude-sonnet-4", "groq/llama", "openai/gpt-4o"}},
		{StrategyLeastConnections, Sources{}, all},
		// Unmeasured latency goes after the measured ones.
		{StrategyLatency, Sources{Health: health}, []string{"groq/llama", "openai/gpt-4o", "anthropic/claude-sonnet-4"}},
		// Unknown price goes last.
		{StrategyCost, Sources{Prices: prices}, []string{"anthropic/claude-sonnet-4", "openai/gpt-4o", "groq/llama"}},
		{StrategyCost, Sources{Prices: prices, Budgets: fakeBudgets{"anthropic": true}}, []string{"openai/gpt-4o", "groq/llama"}},
		{StrategyLatency, Sources{Health: fakeHealth{latency: health.latency, unhealthy: map[string]bool{"groq/llama": true}}},
			[]string{"openai/gpt-4o", "anthropic/claude-sonnet-4", "groq/llama"}},
	}
	for _, c := range cases {
		t.Run(c.strategy, func(t *testing.T) {
			cfg := &Config{Chains: []Chain{fast}, Strategy: Strategy{Name: c.strategy}}
			p, err := planner(cfg, c.src).Plan("fast", now)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, targets(p)); diff != "" {
				t.Errorf("%s order (-want +got):\n%s", c.strategy, diff)
			}
			want := c.strategy
			if want == "" {
				want = StrategyPriority
			}
			for _, d := range p.Decisions {
				if d.Strategy != want || d.Chain != "fast" || d.Reason != "provider:"+d.Provider.Name {
					t.Errorf("decision %+v: want strategy %q, chain fast, reason provider:<name>", d, want)
				}
			}
		})
	}
}

// TestRoundRobinSpreadsEvenly checks that round_robin rotates the first
// target per call, each target first equally often, and keeps every target.
func TestRoundRobinSpreadsEvenly(t *testing.T) {
	r := planner(&Config{Chains: []Chain{chain3("fast")}, Strategy: Strategy{Name: StrategyRoundRobin}}, Sources{})
	first := map[string]int{}
	for range 300 {
		p, err := r.Plan("fast", now)
		if err != nil {
			t.Fatal(err)
		}
		got := targets(p)
		first[got[0]]++
		sorted := slices.Clone(got)
		slices.Sort(sorted)
		if diff := cmp.Diff([]string{"anthropic/claude-sonnet-4", "groq/llama", "openai/gpt-4o"}, sorted); diff != "" {
			t.Fatalf("round_robin lost a target (-want +got):\n%s", diff)
		}
	}
	for target, n := range first {
		if n != 100 {
			t.Errorf("round_robin: %s first %d times of 300, want 100", target, n)
		}
	}
	if len(first) != 3 {
		t.Errorf("round_robin: %d distinct first targets, want 3", len(first))
	}
}

func TestWeightedFollowsWeights(t *testing.T) {
	ch := chain3("fast")
	ch.Targets[0].Weight, ch.Targets[1].Weight, ch.Targets[2].Weight = 6, 3, 1
	r := planner(&Config{Chains: []Chain{ch}, Strategy: Strategy{Name: StrategyWeighted}}, Sources{})
	const n = 20000
	first := map[string]int{}
	for range n {
		p, err := r.Plan("fast", now)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Decisions) != 3 {
			t.Fatalf("weighted: got %d targets, want 3", len(p.Decisions))
		}
		first[p.Decisions[0].Provider.Name]++
	}
	for name, want := range map[string]float64{"openai": 0.6, "anthropic": 0.3, "groq": 0.1} {
		if got := float64(first[name]) / n; math.Abs(got-want) > 0.02 {
			t.Errorf("weighted: %s first in %.3f of calls, want %.2f±0.02", name, got, want)
		}
	}
}

func TestRandomShufflesHealthyFirst(t *testing.T) {
	h := fakeHealth{unhealthy: map[string]bool{"groq/llama": true}}
	r := planner(&Config{Chains: []Chain{chain3("fast")}, Strategy: Strategy{Name: StrategyRandom}}, Sources{Health: h})
	first := map[string]int{}
	for range 2000 {
		p, err := r.Plan("fast", now)
		if err != nil {
			t.Fatal(err)
		}
		got := targets(p)
		if got[2] != "groq/llama" {
			t.Fatalf("random: unhealthy target not last: %v", got)
		}
		first[got[0]]++
	}
	for _, name := range []string{"openai/gpt-4o", "anthropic/claude-sonnet-4"} {
		if n := first[name]; n < 800 || n > 1200 {
			t.Errorf("random: %s first %d times of 2000, want about 1000", name, n)
		}
	}
}

func TestBackoff(t *testing.T) {
	p := Plan{BackoffMS: 100}
	if got := p.Backoff(0); got != 0 {
		t.Errorf("Backoff(0): got %v, want 0", got)
	}
	for attempt, ceiling := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 4: 800 * time.Millisecond, 30: time.Minute} {
		var maxSeen time.Duration
		for range 500 {
			d := p.Backoff(attempt)
			if d < 0 || d > ceiling {
				t.Fatalf("Backoff(%d): got %v, want within [0, %v]", attempt, d, ceiling)
			}
			maxSeen = max(maxSeen, d)
		}
		if maxSeen < ceiling/2 {
			t.Errorf("Backoff(%d): largest of 500 draws %v, want jitter up to %v", attempt, maxSeen, ceiling)
		}
	}
	if got := (&Plan{}).Backoff(3); got != 0 {
		t.Errorf("Backoff without backoff_ms: got %v, want 0", got)
	}
}

func TestPlanConfigSwap(t *testing.T) {
	// Plan reads the configuration on every call.
	cfg := &Config{}
	r := NewResolver(testRegistry()).WithSources(Sources{Config: func() *Config { return cfg }})
	if p, _ := r.Plan("other", now); !strings.HasPrefix(targets(p)[0], "openai/") {
		t.Fatalf("before: got %v", targets(p))
	}
	cfg = &Config{DefaultProvider: "groq"}
	if p, _ := r.Plan("other", now); targets(p)[0] != "groq/other" {
		t.Errorf("after swap: got %v, want groq/other", targets(p))
	}
}

// TestExhausted checks the error of a plan that gave up: 503 naming the
// chain and the last provider's failure after two attempts or more, the
// provider's own error after one.
func TestExhausted(t *testing.T) {
	fast := chain3("fast")
	p, err := planner(&Config{Chains: []Chain{fast}}, Sources{}).Plan("fast", now)
	if err != nil {
		t.Fatal(err)
	}
	overloaded := &apierr.Error{Kind: apierr.UpstreamError, Code: "upstream_overloaded", Message: "groq failed (HTTP 529): Overloaded"}
	limited := &apierr.Error{Kind: apierr.RateLimited, Code: "upstream_rate_limited", Message: "anthropic rate limit: slow down", RetryAfter: 2 * time.Second}
	refused := &apierr.Error{Kind: apierr.UpstreamError, Code: "upstream_error", Message: "groq: connection refused"}
	cases := []struct {
		name       string
		attempts   int
		status     int
		last       error
		want       *apierr.Error // nil: the last error unchanged
		retryAfter time.Duration
	}{
		{name: "one attempt keeps the provider's error", attempts: 1, status: 529, last: overloaded},
		{name: "529 after three attempts", attempts: 3, status: 529, last: overloaded, want: &apierr.Error{Kind: apierr.Unavailable, Code: "fallback_exhausted",
			Message: `fallback chain "fast" exhausted after 3 attempts; the last, groq/llama, failed with HTTP 529: groq failed (HTTP 529): Overloaded`}},
		{name: "429 keeps its Retry-After", attempts: 2, status: 429, last: limited, retryAfter: 2 * time.Second, want: &apierr.Error{Kind: apierr.Unavailable, Code: "fallback_exhausted",
			Message: `fallback chain "fast" exhausted after 2 attempts; the last, anthropic/claude-sonnet-4, failed with HTTP 429: anthropic rate limit: slow down`}},
		{name: "no answer", attempts: 3, status: 0, last: refused, want: &apierr.Error{Kind: apierr.Unavailable, Code: "fallback_exhausted",
			Message: `fallback chain "fast" exhausted after 3 attempts; the last, groq/llama, failed without an answer: groq: connection refused`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := p.Exhausted(c.attempts, c.status, c.last)
			if c.want == nil {
				if got != c.last {
					t.Fatalf("Exhausted: got %v, want the last error unchanged", got)
				}
				return
			}
			e := apierr.From(got)
			if e.Kind != c.want.Kind || e.Code != c.want.Code || e.Message != c.want.Message || e.RetryAfter != c.retryAfter {
				t.Errorf("Exhausted:\n got %s %s %q retry after %v\nwant %s %s %q retry after %v",
					e.Kind, e.Code, e.Message, e.RetryAfter, c.want.Kind, c.want.Code, c.want.Message, c.retryAfter)
			}
			if e.Status() != 503 {
				t.Errorf("Exhausted: status %d, want 503", e.Status())
			}
			if !errors.Is(got, c.last) {
				t.Errorf("Exhausted: the last failure is not its cause")
			}
		})
	}
}
