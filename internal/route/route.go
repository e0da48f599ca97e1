// Package route decides which provider and model serve a request: a
// `<provider>/<model>` prefix always wins; otherwise the model-name family of
// a primary provider; otherwise the default provider. Plan adds the routing
// configuration (Config, kept live in every replica by Live): forced
// provider, model aliases, fallback chains ordered by a strategy, the
// intelligent router among enabled providers, provider daily budgets (Spend)
// and health; Plan.Retryable and Plan.Exhausted say when an attempt moves
// on and what a plan that ran out answers. Failures keeps the fleet's last
// failed attempt for the routing status. The configuration lives in a
// ConfigStore; SQLConfigStore is it on SQL (config_sql.go).
//
// proxy, mgmt and wire import route. It imports provider, apierr, store and
// store/sqlstore.
package route

import (
	"strings"
	"sync"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/provider"
)

// Decision is where a request goes and why.
type Decision struct {
	Provider *provider.Provider
	Model    string // model name sent upstream
	Strategy string // routing_strategy of the audit entry
	Reason   string // routing_reason of the audit entry
	Chain    string // the fallback chain it belongs to, if any
}

// Resolver resolves models to providers and plans the targets to try.
type Resolver struct {
	reg *provider.Registry
	src Sources
	rr  sync.Map // chain name → *atomic.Uint64, the round_robin counters
}

// NewResolver returns a resolver over reg.
func NewResolver(reg *provider.Registry) *Resolver { return &Resolver{reg: reg} }

// Resolve picks the provider for model.
func (r *Resolver) Resolve(model string) (Decision, error) { return r.resolve(model, r.reg.Default()) }

func (r *Resolver) resolve(model, deflt string) (Decision, error) {
	if name, rest, ok := strings.Cut(model, "/"); ok && rest != "" {
		if p, ok := r.reg.Lookup(strings.ToLower(name)); ok {
			return decision(p, rest), nil
		}
	}
	if p, ok := r.reg.ByFamily(model); ok {
		return decision(p, model), nil
	}
	if p, ok := r.reg.Lookup(deflt); ok {
		return decision(p, model), nil
	}
	return Decision{}, apierr.Newf(apierr.Unavailable, "no_provider",
		"no provider is configured for model %q: use a <provider>/<model> name or configure the default provider", model)
}

// PublicName is the name under which provider p's model is listed: the bare
// model when it resolves to p by itself, else <provider>/<model>.
func (r *Resolver) PublicName(p *provider.Provider, model string) string {
	if d, err := r.Resolve(model); err == nil && d.Provider == p && d.Model == model {
		return model
	}
	return p.Name + "/" + model
}

func decision(p *provider.Provider, model string) Decision {
	return Decision{Provider: p, Model: model, Strategy: "direct", Reason: "provider:" + p.Name}
}
