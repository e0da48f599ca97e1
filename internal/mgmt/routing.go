package mgmt

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/auditchain"
	"github.com/svc-gateway/svc/internal/route"
)

// maxForceSeconds bounds a forced provider's duration (30 days).
const maxForceSeconds = 30 * 24 * 60 * 60

// RoutingAPI serves /api/routing/*: fallback chains, strategy, default
// provider, model mapping, forced provider, provider daily budgets and the
// routing status. Every change goes through route.Live, so it is stored and
// reaches every replica within a second.
type RoutingAPI struct {
	auditchain.Recorder
	live     *route.Live
	resolver *route.Resolver
	failures FailureLog
	now      func() time.Time
	log      *slog.Logger
}

// FailureLog gives the fleet's last failed provider attempt
// (route.Failures): nil when none is known.
type FailureLog interface {
	Last(ctx context.Context) (*route.Failure, error)
}

// RoutingDeps are what the routing API reads.
type RoutingDeps struct {
	// Live holds the routing configuration (required).
	Live *route.Live
	// Resolver, planning with Live's configuration, says where a model
	// naming no provider goes: the status's active_provider and
	// fallback_chain. Nil: the forced provider, else the configured default,
	// and no chain.
	Resolver *route.Resolver
	// Failures feeds the status's last_failure (nil: always null).
	Failures FailureLog
	// Now defaults to time.Now.
	Now func() time.Time
	// Log receives the server-side failures of the routes (may be nil).
	Log *slog.Logger
	// Chain records every change (may be nil).
	Chain Chain
}

// NewRoutingAPI returns the routing handlers.
func NewRoutingAPI(d RoutingDeps) *RoutingAPI {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &RoutingAPI{Recorder: auditchain.Recorder{Chain: d.Chain, Log: d.Log}, live: d.Live, resolver: d.Resolver, failures: d.Failures, now: d.Now, log: d.Log}
}

// Register adds the routing routes to mux (which the caller puts behind the
// admin key).
func (a *RoutingAPI) Register(mux *http.ServeMux) {
	rt := router{mux: mux, log: a.log}
	rt.handle("GET /api/routing/fallback-chains", a.listChains)
	rt.handle("POST /api/routing/fallback-chains", a.putChain)
	rt.handle("DELETE /api/routing/fallback-chains/{name}", a.deleteChain)
	rt.handle("PUT /api/routing/strategy", a.putStrategy)
	rt.handle("PUT /api/routing/default-provider", a.putDefaultProvider)
	rt.handle("POST /api/routing/model-mapping", a.putMapping)
	rt.handle("POST /api/routing/force-provider", a.forceProvider)
	rt.handle("GET /api/routing/status", a.status)
	rt.handle("POST /api/routing/budgets", a.putBudget)
	rt.handle("GET /api/routing/budgets", a.listBudgets)
}

// update applies fn through Live.
func (a *RoutingAPI) update(r *http.Request, fn func(*route.Config) error) (route.Config, error) {
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	return a.live.Update(ctx, fn)
}

// chainBody is a fallback chain as sent; omitted retry_on and max_retries
// take their defaults.
type chainBody struct {
	Name       string         `json:"name"`
	Targets    []route.Target `json:"targets"`
	RetryOn    []int          `json:"retry_on"`
	MaxRetries *int           `json:"max_retries"`
	BackoffMS  int            `json:"backoff_ms"`
}

func (a *RoutingAPI) listChains(w http.ResponseWriter, _ *http.Request) error {
	chains := a.live.Current().Chains
	if chains == nil {
		chains = []route.Chain{}
	}
	return writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": chains})
}

func (a *RoutingAPI) putChain(w http.ResponseWriter, r *http.Request) error {
	var body chainBody
	if err := readJSON(r, &body); err != nil {
		return err
	}
	for i := range body.Targets {
		body.Targets[i].Provider = strings.ToLower(strings.TrimSpace(body.Targets[i].Provider))
	}
	ch := route.Chain{Name: body.Name, Targets: body.Targets, RetryOn: body.RetryOn, BackoffMS: body.BackoffMS}
	ch.ApplyDefaults()
	if body.MaxRetries != nil {
		ch.MaxRetries = *body.MaxRetries
	} else {
		ch.MaxRetries = ch.DefaultMaxRetries()
	}
	if err := ch.Validate(); err != nil {
		return err
	}
	created := false
	if _, err := a.update(r, func(c *route.Config) error {
		i := slices.IndexFunc(c.Chains, func(x route.Chain) bool { return x.Name == ch.Name })
		if i < 0 {
			created = true
			c.Chains = append(c.Chains, ch)
		} else {
			created = false
			c.Chains[i] = ch
		}
		return nil
	}); err != nil {
		return err
	}
	a.Record(r, evRoutingChainSet, ch.Name, map[string]any{"created": created, "targets": ch.Targets,
		"retry_on": ch.RetryOn, "max_retries": ch.MaxRetries, "backoff_ms": ch.BackoffMS})
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return writeJSON(w, status, ch)
}

func (a *RoutingAPI) deleteChain(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	if _, err := a.update(r, func(c *route.Config) error {
		i := slices.IndexFunc(c.Chains, func(x route.Chain) bool { return x.Name == name })
		if i < 0 {
			return apierr.Newf(apierr.NotFound, "chain_not_found", "no fallback chain named %q", name)
		}
		c.Chains = slices.Delete(c.Chains, i, i+1)
		return nil
	}); err != nil {
		return err
	}
	a.Record(r, evRoutingChainDelete, name, nil)
	return writeJSON(w, http.StatusOK, map[string]any{"name": name, "deleted": true})
}

type strategyBody struct {
	Strategy string        `json:"strategy"`
	Weights  route.Weights `json:"weights"`
}

func (a *RoutingAPI) putStrategy(w http.ResponseWriter, r *http.Request) error {
	var body strategyBody
	if err := readJSON(r, &body); err != nil {
		return err
	}
	if body.Strategy == "" {
		return apierr.BadParam("strategy", "strategy is required: one of %s", strings.Join(route.Strategies, ", "))
	}
	s := route.Strategy{Name: body.Strategy, Weights: body.Weights}
	if err := s.Validate(); err != nil {
		return err
	}
	if _, err := a.update(r, func(c *route.Config) error { c.Strategy = s; return nil }); err != nil {
		return err
	}
	a.Record(r, evRoutingStrategy, s.Name, map[string]any{"weights": s.Weights})
	return writeJSON(w, http.StatusOK, strategyBody{Strategy: s.Name, Weights: s.Weights})
}

type providerBody struct {
	Provider string `json:"provider"`
}

// putDefaultProvider sets the default provider; an empty provider restores
// the configured (environment) default.
func (a *RoutingAPI) putDefaultProvider(w http.ResponseWriter, r *http.Request) error {
	var body providerBody
	if err := readJSON(r, &body); err != nil {
		return err
	}
	p := strings.ToLower(strings.TrimSpace(body.Provider))
	if _, err := a.update(r, func(c *route.Config) error { c.DefaultProvider = p; return nil }); err != nil {
		return err
	}
	a.Record(r, evRoutingDefault, p, nil)
	return writeJSON(w, http.StatusOK, providerBody{Provider: p})
}

// mappingBody is alias with provider and model, or with target
// "provider/model".
type mappingBody struct {
	Alias    string `json:"alias"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Target   string `json:"target"`
}

type mappingView struct {
	Alias    string `json:"alias"`
	Target   string `json:"target"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

func (a *RoutingAPI) putMapping(w http.ResponseWriter, r *http.Request) error {
	var body mappingBody
	if err := readJSON(r, &body); err != nil {
		return err
	}
	target := body.Target
	switch {
	case target != "" && (body.Provider != "" || body.Model != ""):
		return apierr.BadParam("target", "send target or provider and model, not both")
	case target == "":
		if body.Provider == "" || body.Model == "" {
			return apierr.BadParam("provider", "send provider and model, or target as provider/model")
		}
		target = strings.ToLower(body.Provider) + "/" + body.Model
	}
	if err := route.ValidateMapping(body.Alias, target); err != nil {
		return err
	}
	if _, err := a.update(r, func(c *route.Config) error {
		if c.ModelMap == nil {
			c.ModelMap = map[string]string{}
		}
		c.ModelMap[body.Alias] = target
		return nil
	}); err != nil {
		return err
	}
	a.Record(r, evRoutingMapping, body.Alias, map[string]any{"target": target})
	p, m, _ := strings.Cut(target, "/")
	return writeJSON(w, http.StatusCreated, mappingView{Alias: body.Alias, Target: target, Provider: p, Model: m})
}

type forceBody struct {
	Provider        string `json:"provider"`
	DurationSeconds *int64 `json:"duration_seconds"`
}

type forcedView struct {
	Provider string    `json:"provider"`
	Until    time.Time `json:"until"`
}

// forceProvider forces the provider for duration_seconds; 0 clears it.
func (a *RoutingAPI) forceProvider(w http.ResponseWriter, r *http.Request) error {
	var body forceBody
	if err := readJSON(r, &body); err != nil {
		return err
	}
	if body.DurationSeconds == nil {
		return apierr.BadParam("duration_seconds", "duration_seconds is required (0 clears the forced provider)")
	}
	secs := *body.DurationSeconds
	if secs < 0 || secs > maxForceSeconds {
		return apierr.BadParam("duration_seconds", "duration_seconds must be 0 to %d, got %d", maxForceSeconds, secs)
	}
	if secs == 0 {
		if _, err := a.update(r, func(c *route.Config) error { c.Forced = nil; return nil }); err != nil {
			return err
		}
		a.Record(r, evRoutingForce, "", map[string]any{"duration_seconds": 0})
		return writeJSON(w, http.StatusOK, map[string]any{"forced": nil})
	}
	p := strings.ToLower(strings.TrimSpace(body.Provider))
	f := &route.Forced{Provider: p, Until: a.now().UTC().Add(time.Duration(secs) * time.Second)}
	if _, err := a.update(r, func(c *route.Config) error { c.Forced = f; return nil }); err != nil {
		return err
	}
	a.Record(r, evRoutingForce, f.Provider, map[string]any{"duration_seconds": secs, "until": f.Until})
	return writeJSON(w, http.StatusOK, map[string]any{"forced": forcedView{Provider: f.Provider, Until: f.Until}})
}

type budgetBody struct {
	Provider       string   `json:"provider"`
	DailyBudgetUSD *float64 `json:"daily_budget_usd"`
}

// putBudget sets a provider's daily budget; 0 removes it.
func (a *RoutingAPI) putBudget(w http.ResponseWriter, r *http.Request) error {
	var body budgetBody
	if err := readJSON(r, &body); err != nil {
		return err
	}
	if body.DailyBudgetUSD == nil {
		return apierr.BadParam("daily_budget_usd", "daily_budget_usd is required (0 removes the budget)")
	}
	b := route.ProviderBudget{Provider: strings.ToLower(strings.TrimSpace(body.Provider)), DailyBudgetUSD: *body.DailyBudgetUSD}
	if err := (&route.Config{Budgets: []route.ProviderBudget{b}}).Validate(); err != nil {
		return err
	}
	if _, err := a.update(r, func(c *route.Config) error {
		c.Budgets = slices.DeleteFunc(c.Budgets, func(x route.ProviderBudget) bool { return x.Provider == b.Provider })
		if b.DailyBudgetUSD > 0 {
			c.Budgets = append(c.Budgets, b)
		}
		return nil
	}); err != nil {
		return err
	}
	a.Record(r, evRoutingBudget, b.Provider, map[string]any{"daily_budget_usd": b.DailyBudgetUSD})
	return writeJSON(w, http.StatusOK, b)
}

func (a *RoutingAPI) listBudgets(w http.ResponseWriter, _ *http.Request) error {
	bs := slices.Clone(a.live.Current().Budgets)
	if bs == nil {
		bs = []route.ProviderBudget{}
	}
	slices.SortFunc(bs, func(x, y route.ProviderBudget) int { return strings.Compare(x.Provider, y.Provider) })
	return writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": bs})
}

type statusView struct {
	Strategy        strategyBody `json:"strategy"`
	DefaultProvider string       `json:"default_provider"`
	// ActiveProvider is where a model naming no provider goes first: the
	// forced provider, else the intelligent router's first, else the default.
	ActiveProvider string `json:"active_provider"`
	// FallbackChain is the chain such a model goes through: the intelligent
	// router's enabled providers; null when one provider serves alone.
	FallbackChain *activeChainView       `json:"fallback_chain"`
	Forced        *forcedView            `json:"forced"` // null when none is in force
	Chains        []route.Chain          `json:"chains"`
	ModelMap      map[string]string      `json:"model_map"`
	Budgets       []route.ProviderBudget `json:"budgets"`
	// LastFailure is the fleet's last failed provider attempt.
	LastFailure *route.Failure `json:"last_failure"`
	Version     int64          `json:"version"`
}

type activeChainView struct {
	Name      string   `json:"name"`
	Providers []string `json:"providers"`
}

func (a *RoutingAPI) status(w http.ResponseWriter, r *http.Request) error {
	c := a.live.Current()
	name := c.Strategy.Name
	if name == "" {
		name = route.StrategyPriority
	}
	now := a.now()
	v := statusView{
		Strategy:        strategyBody{Strategy: name, Weights: c.Strategy.Weights},
		DefaultProvider: c.DefaultProvider,
		ActiveProvider:  c.DefaultProvider,
		Chains:          c.Chains,
		ModelMap:        c.ModelMap,
		Budgets:         c.Budgets,
		Version:         a.live.Version(),
	}
	if p, ok := c.ActiveForced(now); ok {
		v.ActiveProvider = p
		v.Forced = &forcedView{Provider: p, Until: c.Forced.Until}
	}
	if a.resolver != nil {
		act := a.resolver.Active(now)
		v.ActiveProvider = act.Provider
		if act.Chain != "" {
			v.FallbackChain = &activeChainView{Name: act.Chain, Providers: act.Providers}
		}
	}
	if v.Chains == nil {
		v.Chains = []route.Chain{}
	}
	if v.ModelMap == nil {
		v.ModelMap = map[string]string{}
	}
	if v.Budgets == nil {
		v.Budgets = []route.ProviderBudget{}
	}
	if a.failures != nil {
		ctx, cancel := ctxTimeout(r)
		defer cancel()
		f, err := a.failures.Last(ctx)
		if err != nil {
			return apierr.Wrap(apierr.Unavailable, "store_unavailable", "could not read the last failure from the store", err)
		}
		v.LastFailure = f
	}
	return writeJSON(w, http.StatusOK, v)
}
