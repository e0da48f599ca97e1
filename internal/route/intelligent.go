package route

import (
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/provider"
)

// intelligentChain is the chain the intelligent router plans with when a
// model names no provider, no family and no alias: the providers whose
// <PROVIDER>_ENABLED is true ("among providers whose enable flag is true"),
// the default provider d first when it is one of them, then the others by
// name; ordered by the configured strategy and health like any chain, each
// tried in turn on failure, the model sent to each as asked. A default
// provider that is not enabled takes no part. When any strategy weight is
// set, the weighted score (scoreOrder) orders them instead of the strategy:
// the weights choose among providers for a model that names none, while
// named chains keep their strategy and target weights.
//
// Nil when no provider is enabled: the intelligent router is off and the
// default provider alone serves, as it serves every model that resolves to
// nothing.
func (r *Resolver) intelligentChain(cfg *Config, model string, deflt *provider.Provider) *Chain {
	if _, aliased := cfg.ModelMap[model]; aliased || r.inferred(model) {
		return nil
	}
	ps := r.intelligentProviders(deflt)
	if len(ps) == 0 {
		return nil
	}
	targets := make([]Target, len(ps))
	for i, p := range ps {
		targets[i] = Target{Provider: p.Name, Model: model}
	}
	return &Chain{Name: intelligentName, Targets: targets, MaxRetries: min(MaxRetries, len(targets)-1)}
}

// intelligentProviders are the providers the intelligent router plans
// among: the enabled ones, deflt (the default provider, nil when none is
// configured) first when it is enabled, then the others by name.
func (r *Resolver) intelligentProviders(deflt *provider.Provider) []*provider.Provider {
	var ps []*provider.Provider
	if deflt != nil && deflt.Enabled {
		ps = append(ps, deflt)
	}
	for _, name := range r.reg.Names() {
		if p, _ := r.reg.Lookup(name); p.Enabled && p != deflt {
			ps = append(ps, p)
		}
	}
	return ps
}

// Active is where a request whose model names no provider, family or alias
// goes, as GET /api/routing/status shows it.
type Active struct {
	// Provider is the provider tried first ("" when none is configured).
	Provider string
	// Forced is true while Provider is forced (it then serves alone).
	Forced bool
	// Chain is "intelligent" when the intelligent router plans among the
	// enabled providers; "" when one provider serves alone.
	Chain string
	// Providers are the providers tried, in their configured order (a
	// chain's strategy and health reorder them per request).
	Providers []string
}

// Active returns where a request whose model names no provider goes at now:
// the forced provider alone while one is forced; else the intelligent
// router's chain of enabled providers; else the default provider alone.
func (r *Resolver) Active(now time.Time) Active {
	cfg := r.config()
	if name, ok := cfg.ActiveForced(now); ok {
		return Active{Provider: name, Forced: true, Providers: []string{name}}
	}
	deflt, _ := r.reg.Lookup(r.defaultName(cfg))
	if ps := r.intelligentProviders(deflt); len(ps) > 0 {
		a := Active{Provider: ps[0].Name, Chain: intelligentName}
		for _, p := range ps {
			a.Providers = append(a.Providers, p.Name)
		}
		return a
	}
	if deflt == nil {
		return Active{Providers: []string{}}
	}
	return Active{Provider: deflt.Name, Providers: []string{deflt.Name}}
}

// intelligentName names the intelligent router's chain.
const intelligentName = "intelligent"

// inferred reports whether model names its provider: a <provider>/ prefix
// or a model family.
func (r *Resolver) inferred(model string) bool {
	if name, rest, ok := strings.Cut(model, "/"); ok && rest != "" {
		if _, ok := r.reg.Lookup(strings.ToLower(name)); ok {
			return true
		}
	}
	_, ok := r.reg.ByFamily(model)
	return ok
}
