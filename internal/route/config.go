package route

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
)

// Strategy names.
const (
	StrategyRoundRobin       = "round_robin"
	StrategyWeighted         = "weighted"
	StrategyLeastConnections = "least_connections"
	StrategyRandom           = "random"
	StrategyPriority         = "priority"
	StrategyLatency          = "latency"
	StrategyCost             = "cost"
)

// Strategies lists the known strategy names.
var Strategies = []string{StrategyRoundRobin, StrategyWeighted, StrategyLeastConnections,
	StrategyRandom, StrategyPriority, StrategyLatency, StrategyCost}

// DefaultRetryOn are the statuses a chain retries on when it names none.
//
// Of a chain's retry_on only 408 and 429 choose anything: every 5xx moves on
// whatever the list says (Plan.Retryable), and no other 4xx may be listed
// (Chain.Validate). The 5xx codes are accepted, and kept in the default, so
// that a chain reads as the spec shows it.
var DefaultRetryOn = []int{429, 500, 502, 503, 504}

// retryableCode reports whether code may be listed in retry_on.
func retryableCode(code int) bool {
	return code == 408 || code == 429 || (code >= 500 && code <= 599)
}

// Limits of a routing configuration.
const (
	MaxTargets    = 16
	MaxRetries    = 10
	MaxBackoffMS  = 60000
	maxChainName  = 64
	maxConfigSize = 1 << 20
)

var chainNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// Config is the routing configuration: a record in SQL, live in every replica
// through Live.
type Config struct {
	Chains          []Chain           `json:"chains"`
	Strategy        Strategy          `json:"strategy"`
	DefaultProvider string            `json:"default_provider"`
	ModelMap        map[string]string `json:"model_map"` // alias → provider/model
	Forced          *Forced           `json:"forced"`
	Budgets         []ProviderBudget  `json:"budgets"`
}

// Chain is a fallback chain: the targets to try, in the order the strategy
// gives, and when to go on to the next one.
type Chain struct {
	Name       string   `json:"name"`
	Targets    []Target `json:"targets"`
	RetryOn    []int    `json:"retry_on"`
	MaxRetries int      `json:"max_retries"`
	BackoffMS  int      `json:"backoff_ms"`
}

// Target is one provider and model of a chain.
type Target struct {
	Provider string  `json:"provider"`
	Model    string  `json:"model"`
	Weight   float64 `json:"weight"`
}

// Strategy orders a chain's targets.
type Strategy struct {
	Name    string  `json:"name"` // one of Strategies; empty means priority
	Weights Weights `json:"weights"`
}

// Weights are the dashboard's strategy weights.
type Weights struct {
	SuccessRate float64 `json:"success_rate"`
	Latency     float64 `json:"latency"`
	Cost        float64 `json:"cost"`
	Quality     float64 `json:"quality"`
}

// Forced sends every request to Provider until Until.
type Forced struct {
	Provider string    `json:"provider"`
	Until    time.Time `json:"until"`
}

// ProviderBudget caps a provider's spend per UTC day.
type ProviderBudget struct {
	Provider       string  `json:"provider"`
	DailyBudgetUSD float64 `json:"daily_budget_usd"`
}

// ConfigStore keeps the routing configuration with a version for optimistic
// concurrency. SQLConfigStore implements it.
type ConfigStore interface {
	// LoadRouting returns the stored configuration and its version; an empty
	// Config and version 0 when none was ever saved.
	LoadRouting(ctx context.Context) (Config, int64, error)
	// SaveRouting stores c when the stored version is still expectVersion
	// and returns the new version; store.ErrConflict when it moved.
	SaveRouting(ctx context.Context, c Config, expectVersion int64) (int64, error)
}

// ActiveForced returns the forced provider when it is in force at now.
func (c *Config) ActiveForced(now time.Time) (string, bool) {
	if c.Forced == nil || c.Forced.Provider == "" || !now.Before(c.Forced.Until) {
		return "", false
	}
	return c.Forced.Provider, true
}

// Chain returns the chain named name.
func (c *Config) Chain(name string) (*Chain, bool) {
	for i := range c.Chains {
		if c.Chains[i].Name == name {
			return &c.Chains[i], true
		}
	}
	return nil, false
}

// Budget returns provider's daily budget, if it has one.
func (c *Config) Budget(provider string) (float64, bool) {
	for _, b := range c.Budgets {
		if b.Provider == provider {
			return b.DailyBudgetUSD, true
		}
	}
	return 0, false
}

// Clone returns a deep copy of c.
func (c *Config) Clone() Config {
	out := *c
	out.Chains = make([]Chain, len(c.Chains))
	for i, ch := range c.Chains {
		ch.Targets = slices.Clone(ch.Targets)
		ch.RetryOn = slices.Clone(ch.RetryOn)
		out.Chains[i] = ch
	}
	if c.ModelMap != nil {
		out.ModelMap = make(map[string]string, len(c.ModelMap))
		for k, v := range c.ModelMap {
			out.ModelMap[k] = v
		}
	}
	if c.Forced != nil {
		f := *c.Forced
		out.Forced = &f
	}
	out.Budgets = slices.Clone(c.Budgets)
	return out
}

// ApplyDefaults fills a chain's omitted retry statuses with DefaultRetryOn.
// MaxRetries has no zero default here (0 is a valid value): callers decoding
// input use DefaultMaxRetries when the field is absent.
func (ch *Chain) ApplyDefaults() {
	if len(ch.RetryOn) == 0 {
		ch.RetryOn = slices.Clone(DefaultRetryOn)
	}
}

// DefaultMaxRetries is the retries of a chain that names none: every target
// after the first once.
func (ch *Chain) DefaultMaxRetries() int { return max(0, min(MaxRetries, len(ch.Targets)-1)) }

// Validate checks c; the error is an apierr.BadParam naming the field.
func (c *Config) Validate() error {
	seen := map[string]bool{}
	for i := range c.Chains {
		ch := &c.Chains[i]
		if err := ch.Validate(); err != nil {
			// Name the chain: a chain stored before a rule tightened
			// refuses every later change until it is fixed.
			e := *apierr.From(err)
			e.Message = fmt.Sprintf("fallback chain %q: %s", ch.Name, e.Message)
			return &e
		}
		if seen[ch.Name] {
			return apierr.BadParam("name", "fallback chain %q is defined twice", ch.Name)
		}
		seen[ch.Name] = true
	}
	if err := c.Strategy.Validate(); err != nil {
		return err
	}
	if c.DefaultProvider != "" {
		if err := validProvider("default_provider", c.DefaultProvider); err != nil {
			return err
		}
	}
	for alias, target := range c.ModelMap {
		if err := ValidateMapping(alias, target); err != nil {
			return err
		}
	}
	if c.Forced != nil {
		if err := validProvider("provider", c.Forced.Provider); err != nil {
			return err
		}
	}
	seen = map[string]bool{}
	for _, b := range c.Budgets {
		if err := validProvider("provider", b.Provider); err != nil {
			return err
		}
		if seen[b.Provider] {
			return apierr.BadParam("provider", "provider %q has two daily budgets", b.Provider)
		}
		seen[b.Provider] = true
		if !(b.DailyBudgetUSD >= 0) {
			return apierr.BadParam("daily_budget_usd", "daily_budget_usd must be a number ≥ 0, got %v", b.DailyBudgetUSD)
		}
	}
	if b, err := json.Marshal(c); err != nil || len(b) > maxConfigSize {
		return apierr.Newf(apierr.TooLarge, "routing_config_too_large", "the routing configuration exceeds %d bytes", maxConfigSize)
	}
	return nil
}

// Validate checks one chain.
func (ch *Chain) Validate() error {
	if !chainNameRE.MatchString(ch.Name) {
		return apierr.BadParam("name", "chain name %q must match [a-z0-9][a-z0-9._-]{0,63}", ch.Name)
	}
	if len(ch.Targets) < 1 || len(ch.Targets) > MaxTargets {
		return apierr.BadParam("targets", "a chain has 1 to %d targets, got %d", MaxTargets, len(ch.Targets))
	}
	for i, t := range ch.Targets {
		if err := validProvider(fmt.Sprintf("targets[%d].provider", i), t.Provider); err != nil {
			return err
		}
		if strings.TrimSpace(t.Model) == "" || len(t.Model) > 256 {
			return apierr.BadParam(fmt.Sprintf("targets[%d].model", i), "target model must be 1 to 256 characters")
		}
		if !(t.Weight >= 0) {
			return apierr.BadParam(fmt.Sprintf("targets[%d].weight", i), "weight must be a number ≥ 0, got %v", t.Weight)
		}
	}
	for _, code := range ch.RetryOn {
		if !retryableCode(code) {
			return apierr.BadParam("retry_on",
				"retry_on holds 408, 429 and status codes 500 to 599, got %d: other 4xx answers are the caller's request and are never retried", code)
		}
	}
	if ch.MaxRetries < 0 || ch.MaxRetries > MaxRetries {
		return apierr.BadParam("max_retries", "max_retries must be 0 to %d, got %d", MaxRetries, ch.MaxRetries)
	}
	if ch.BackoffMS < 0 || ch.BackoffMS > MaxBackoffMS {
		return apierr.BadParam("backoff_ms", "backoff_ms must be 0 to %d, got %d", MaxBackoffMS, ch.BackoffMS)
	}
	return nil
}

// Validate checks the strategy name and weights.
func (s *Strategy) Validate() error {
	if s.Name != "" && !slices.Contains(Strategies, s.Name) {
		return apierr.BadParam("strategy", "unknown strategy %q: use one of %s", s.Name, strings.Join(Strategies, ", "))
	}
	for name, w := range map[string]float64{"success_rate": s.Weights.SuccessRate, "latency": s.Weights.Latency,
		"cost": s.Weights.Cost, "quality": s.Weights.Quality} {
		if !(w >= 0) {
			return apierr.BadParam("weights."+name, "weight %s must be a number ≥ 0, got %v", name, w)
		}
	}
	return nil
}

// ValidateMapping checks a model-map entry: alias → provider/model.
func ValidateMapping(alias, target string) error {
	if strings.TrimSpace(alias) == "" || len(alias) > 256 {
		return apierr.BadParam("alias", "alias must be 1 to 256 characters")
	}
	p, m, ok := strings.Cut(target, "/")
	if !ok || m == "" || len(target) > 300 {
		return apierr.BadParam("target", "mapping target %q must be provider/model", target)
	}
	return validProvider("provider", p)
}

func validProvider(param, name string) error {
	if name == "" || len(name) > maxChainName || strings.ContainsAny(name, "/ \t\n") {
		return apierr.BadParam(param, "provider name %q must be 1 to %d characters without spaces or /", name, maxChainName)
	}
	return nil
}
