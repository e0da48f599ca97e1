package route

import "strings"

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
func (r *Resolver) intelligentChain(cfg *Config, model string, d Decision) *Chain {
	if _, aliased := cfg.ModelMap[model]; aliased || r.inferred(model) {
		return nil
	}
	var targets []Target
	if d.Provider.Enabled {
		targets = append(targets, Target{Provider: d.Provider.Name, Model: model})
	}
	for _, name := range r.reg.Names() {
		if p, _ := r.reg.Lookup(name); p.Enabled && p != d.Provider {
			targets = append(targets, Target{Provider: p.Name, Model: model})
		}
	}
	if len(targets) == 0 {
		return nil
	}
	return &Chain{Name: intelligentName, Targets: targets, MaxRetries: min(MaxRetries, len(targets)-1)}
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
