package route

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
)

// Health gives the figures the least_connections and latency strategies
// order by, per provider and model: LatencyP95 is the p95 latency as a
// rolling moving average (health.Tracker); zero means "not measured".
type Health interface {
	InFlight(provider, model string) int64
	LatencyP95(provider, model string) time.Duration
	Healthy(provider, model string) bool
}

// Prices gives the per-token price the cost strategy orders by.
type Prices interface {
	PerToken(provider, model string) (float64, bool)
}

// Budgets says whether a provider has spent its daily budget (UTC day of now).
type Budgets interface {
	OverDailyBudget(provider string, now time.Time) bool
}

// Sources are what Plan reads besides the registry. Every field may be nil:
// no Config is the empty configuration, no Health counts every target healthy
// and unmeasured, no Prices knows no price, no Budgets excludes nobody.
type Sources struct {
	Config  func() *Config // typically (*Live).Current
	Health  Health
	Prices  Prices
	Budgets Budgets
}

// WithSources returns a resolver over the same registry that plans with s.
func (r *Resolver) WithSources(s Sources) *Resolver { return &Resolver{reg: r.reg, src: s} }

// maxBackoff caps one backoff delay.
const maxBackoff = time.Minute

// Plan is the ordered list of decisions to try for one request, and when to
// move on: attempt i (0 first) goes to Decisions[min(i, len-1)], and a retry
// happens on a Retryable status (or a connection failure before the first
// byte) while i < MaxRetries.
type Plan struct {
	Decisions  []Decision
	Chain      string // the fallback chain used, if any
	RetryOn    []int
	MaxRetries int
	BackoffMS  int
}

// Decision is the decision for attempt (0 first).
func (p *Plan) Decision(attempt int) Decision {
	return p.Decisions[max(0, min(attempt, len(p.Decisions)-1))]
}

// Retryable reports whether a provider's status sends the request on to the
// next attempt: every status ≥ 500 (the provider failed, whatever RetryOn
// lists: Anthropic's 529 "overloaded" too), and 408 or 429 when RetryOn
// lists them. No other status moves on: the other 4xx are the caller's
// request, which the next provider would refuse too.
func (p *Plan) Retryable(status int) bool {
	switch {
	case status >= 500:
		return true
	case status == http.StatusRequestTimeout, status == http.StatusTooManyRequests:
		return slices.Contains(p.RetryOn, status)
	}
	return false
}

// Exhausted is the error of a plan that gave up after attempts attempts,
// the last of which failed with a Retryable status (status; 0 when the
// provider did not answer) or a connection failure, last being the
// client-safe error of that attempt. After one attempt (a plan of one
// target, or a chain with max_retries 0) it is last itself: the caller sees
// the provider's own failure. After two or more, it is a 503
// "fallback_exhausted" (the spec's "fallback chain exhausted") naming the
// chain, the last target and its status, with last's message; it keeps
// last's Retry-After when last was a rate limit, and last as its cause.
func (p *Plan) Exhausted(attempts, status int, last error) error {
	if attempts < 2 || last == nil {
		return last
	}
	e := apierr.From(last)
	target := "target"
	if len(p.Decisions) > 0 {
		d := p.Decision(attempts - 1)
		target = d.Provider.Name + "/" + d.Model
	}
	what := "fallback chain " + strconv.Quote(p.Chain)
	if p.Chain == "" {
		what = "the routing plan"
	}
	how := "without an answer"
	if status != 0 {
		how = "with HTTP " + strconv.Itoa(status)
	}
	out := apierr.Wrap(apierr.Unavailable, CodeExhausted,
		fmt.Sprintf("%s exhausted after %d attempts; the last, %s, failed %s: %s", what, attempts, target, how, e.Message), last)
	if e.Kind == apierr.RateLimited {
		out.RetryAfter = e.RetryAfter
	}
	return out
}

// CodeExhausted is the error code of an exhausted plan.
const CodeExhausted = "fallback_exhausted"

// Backoff is the wait before retry attempt (1 for the first retry):
// exponential from BackoffMS with full jitter, at most a minute.
func (p *Plan) Backoff(attempt int) time.Duration {
	if p.BackoffMS <= 0 || attempt <= 0 {
		return 0
	}
	d := time.Duration(p.BackoffMS) * time.Millisecond
	for i := 1; i < attempt && d < maxBackoff; i++ {
		d *= 2
	}
	d = min(d, maxBackoff)
	return rand.N(d + 1)
}

var emptyConfig = &Config{}

func (r *Resolver) config() *Config {
	if r.src.Config == nil {
		return emptyConfig
	}
	if c := r.src.Config(); c != nil {
		return c
	}
	return emptyConfig
}

// Plan returns the decisions to try for model at now. While a provider is
// forced, it alone (Forced); else a chain named by model, or the chain
// whose first target is what model resolves to (through a model-map alias,
// a <provider>/ prefix, a family or the default provider), its targets
// ordered by the strategy, providers over their daily budget dropped and
// unhealthy targets last; else the intelligent router's chain for a model
// that names no provider (intelligentChain); else the single resolved
// target.
func (r *Resolver) Plan(model string, now time.Time) (Plan, error) {
	cfg := r.config()
	if name, ok := cfg.ActiveForced(now); ok {
		return r.planForced(cfg, name, model, now)
	}
	return r.plan(cfg, model, now)
}

// planForced is the plan while provider name is forced: that provider
// alone, whatever its health, with no fallback and no retry ("all requests
// go to the named provider"). A forced provider this process does not know,
// or one over its daily budget, leaves no provider: 503.
func (r *Resolver) planForced(cfg *Config, name, model string, now time.Time) (Plan, error) {
	p, ok := r.reg.Lookup(name)
	if !ok {
		return Plan{}, apierr.Newf(apierr.Unavailable, "no_provider",
			"provider %q is forced but not configured here: configure it or clear the forced provider", name)
	}
	if r.src.Budgets != nil && r.src.Budgets.OverDailyBudget(p.Name, now) {
		return Plan{}, apierr.Newf(apierr.Unavailable, "provider_over_budget",
			"provider %q is forced and has reached its daily budget", p.Name)
	}
	d := Decision{Provider: p, Model: r.forcedModel(cfg, name, model), Strategy: "forced", Reason: "forced:" + name}
	return Plan{Decisions: []Decision{d}, RetryOn: slices.Clone(DefaultRetryOn)}, nil
}

func (r *Resolver) plan(cfg *Config, model string, now time.Time) (Plan, error) {
	if ch, ok := cfg.Chain(model); ok {
		return r.planChain(cfg, ch, now)
	}
	d, err := r.resolveConfigured(cfg, model)
	if err != nil {
		// No default provider: the enabled providers may still serve.
		if ch := r.intelligentChain(cfg, model, nil); ch != nil {
			return r.planChain(cfg, ch, now)
		}
		return Plan{}, err
	}
	for i := range cfg.Chains {
		ch := &cfg.Chains[i]
		if len(ch.Targets) > 0 && strings.EqualFold(ch.Targets[0].Provider, d.Provider.Name) && ch.Targets[0].Model == d.Model {
			return r.planChain(cfg, ch, now)
		}
	}
	if ch := r.intelligentChain(cfg, model, d.Provider); ch != nil {
		return r.planChain(cfg, ch, now)
	}
	if r.src.Budgets != nil && r.src.Budgets.OverDailyBudget(d.Provider.Name, now) {
		return Plan{}, apierr.Newf(apierr.Unavailable, "provider_over_budget",
			"provider %q has reached its daily budget and no fallback chain starts at %s/%s", d.Provider.Name, d.Provider.Name, d.Model)
	}
	return Plan{Decisions: []Decision{d}, RetryOn: slices.Clone(DefaultRetryOn)}, nil
}

// resolveConfigured is Resolve with the configuration's model map and
// default provider.
func (r *Resolver) resolveConfigured(cfg *Config, model string) (Decision, error) {
	if target, ok := cfg.ModelMap[model]; ok {
		if name, m, ok := strings.Cut(target, "/"); ok && m != "" {
			if p, ok := r.reg.Lookup(strings.ToLower(name)); ok {
				return decision(p, m), nil
			}
		}
	}
	return r.resolve(model, r.defaultName(cfg))
}

// defaultName is the default provider: the configuration's when this
// process knows it, else the registry's (SVC_DEFAULT_PROVIDER).
func (r *Resolver) defaultName(cfg *Config) string {
	if cfg.DefaultProvider != "" {
		if _, ok := r.reg.Lookup(cfg.DefaultProvider); ok {
			return cfg.DefaultProvider
		}
	}
	return r.reg.Default()
}

// forcedModel is the model sent to the forced provider for model.
func (r *Resolver) forcedModel(cfg *Config, forced, model string) string {
	if ch, ok := cfg.Chain(model); ok {
		for _, t := range ch.Targets {
			if t.Provider == forced {
				return t.Model
			}
		}
		return ch.Targets[0].Model
	}
	if target, ok := cfg.ModelMap[model]; ok {
		if _, m, ok := strings.Cut(target, "/"); ok && m != "" {
			return m
		}
	}
	if name, rest, ok := strings.Cut(model, "/"); ok && rest != "" {
		if _, ok := r.reg.Lookup(strings.ToLower(name)); ok {
			return rest
		}
	}
	return model
}

func (r *Resolver) planChain(cfg *Config, ch *Chain, now time.Time) (Plan, error) {
	strategy := cfg.Strategy.Name
	if strategy == "" {
		strategy = StrategyPriority
	}
	order := r.order(strategy, ch)
	if ch.Name == intelligentName && cfg.Strategy.Weights.set() {
		strategy, order = StrategyScore, r.scoreOrder(cfg.Strategy.Weights, ch, order)
	}
	var healthy, unhealthy []Decision
	overBudget := 0
	for _, i := range order {
		t := ch.Targets[i]
		p, ok := r.reg.Lookup(strings.ToLower(t.Provider))
		if !ok {
			continue
		}
		if r.src.Budgets != nil && r.src.Budgets.OverDailyBudget(p.Name, now) {
			overBudget++
			continue
		}
		d := Decision{Provider: p, Model: t.Model, Strategy: strategy, Reason: "provider:" + p.Name, Chain: ch.Name}
		if r.src.Health != nil && !r.src.Health.Healthy(p.Name, t.Model) {
			unhealthy = append(unhealthy, d)
			continue
		}
		healthy = append(healthy, d)
	}
	ds := append(healthy, unhealthy...)
	if len(ds) == 0 {
		if overBudget > 0 {
			return Plan{}, apierr.Newf(apierr.Unavailable, "provider_over_budget",
				"every provider of fallback chain %q has reached its daily budget", ch.Name)
		}
		return Plan{}, apierr.Newf(apierr.Unavailable, "no_provider",
			"no provider of fallback chain %q is configured", ch.Name)
	}
	retryOn := ch.RetryOn
	if len(retryOn) == 0 {
		retryOn = DefaultRetryOn
	}
	return Plan{Decisions: ds, Chain: ch.Name, RetryOn: slices.Clone(retryOn),
		MaxRetries: ch.MaxRetries, BackoffMS: ch.BackoffMS}, nil
}

// order returns the indices of ch's targets in the order strategy tries them.
func (r *Resolver) order(strategy string, ch *Chain) []int {
	n := len(ch.Targets)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	switch strategy {
	case StrategyRoundRobin:
		c, ok := r.rr.Load(ch.Name)
		if !ok {
			c, _ = r.rr.LoadOrStore(ch.Name, new(atomic.Uint64))
		}
		k := int((c.(*atomic.Uint64).Add(1) - 1) % uint64(n))
		return append(idx[k:], idx[:k]...)
	case StrategyWeighted:
		first := weightedPick(ch.Targets)
		return append([]int{first}, slices.Delete(idx, first, first+1)...)
	case StrategyRandom:
		rand.Shuffle(n, func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	case StrategyLeastConnections:
		if h := r.src.Health; h != nil {
			slices.SortStableFunc(idx, func(a, b int) int {
				ta, tb := ch.Targets[a], ch.Targets[b]
				return cmpInt(h.InFlight(strings.ToLower(ta.Provider), ta.Model), h.InFlight(strings.ToLower(tb.Provider), tb.Model))
			})
		}
	case StrategyLatency:
		if h := r.src.Health; h != nil {
			key := func(t Target) int64 {
				if l := h.LatencyP95(strings.ToLower(t.Provider), t.Model); l > 0 {
					return int64(l)
				}
				return 1<<63 - 1 // unmeasured: after the measured ones
			}
			slices.SortStableFunc(idx, func(a, b int) int { return cmpInt(key(ch.Targets[a]), key(ch.Targets[b])) })
		}
	case StrategyCost:
		if pr := r.src.Prices; pr != nil {
			type priced struct {
				p  float64
				ok bool
			}
			prices := make([]priced, n)
			for i, t := range ch.Targets {
				prices[i].p, prices[i].ok = pr.PerToken(strings.ToLower(t.Provider), t.Model)
			}
			slices.SortStableFunc(idx, func(a, b int) int {
				pa, pb := prices[a], prices[b]
				switch {
				case pa.ok != pb.ok:
					if pa.ok {
						return -1
					}
					return 1
				case pa.p < pb.p:
					return -1
				case pa.p > pb.p:
					return 1
				}
				return 0
			})
		}
	}
	return idx
}

// weightedPick picks an index with probability proportional to its weight;
// all weights zero picks uniformly.
func weightedPick(ts []Target) int {
	var total float64
	for _, t := range ts {
		total += t.Weight
	}
	if total <= 0 {
		return rand.IntN(len(ts))
	}
	x := rand.Float64() * total
	for i, t := range ts {
		if x < t.Weight {
			return i
		}
		x -= t.Weight
	}
	for i := len(ts) - 1; i >= 0; i-- {
		if ts[i].Weight > 0 {
			return i
		}
	}
	return 0
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
