package wire

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/analytics"
	"github.com/svc-gateway/svc/internal/app"
	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/auditchain"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/cache"
	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/limit"
	"github.com/svc-gateway/svc/internal/mgmt"
	"github.com/svc-gateway/svc/internal/pricing"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/proxy"
	"github.com/svc-gateway/svc/internal/responses"
	"github.com/svc-gateway/svc/internal/route"
	"github.com/svc-gateway/svc/internal/teams"
)

// constructor builds one component over the shared System.
type constructor func(s *System) (*app.Service, error)

// components are the components this build provides, by SERVICE_TYPE name.
// A new component is one entry here and its own package.
var components = map[string]constructor{
	config.Proxy:      newProxy,
	config.Management: newManagement,
	config.Bridge:     newBridge,
	config.Compliance: newCompliance,
	config.Policy:     newPolicy,
}

// Components names the components this build provides, in start order.
func Components() []string {
	var out []string
	for _, spec := range config.Components {
		if _, ok := components[spec.Name]; ok {
			out = append(out, spec.Name)
		}
	}
	return out
}

// part is f's result, or the zero value when an earlier part failed or f
// fails (its error is kept in *err): a constructor takes its parts in a row
// and checks the error once.
func part[T any](err *error, f func() (T, error)) T {
	var zero T
	if *err != nil {
		return zero
	}
	v, e := f()
	if e != nil {
		*err = e
		return zero
	}
	return v
}

// serve binds the component's port now (so a taken port fails the start)
// and wraps h with what every component has: panic recovery and the body
// read timeout.
func (s *System) serve(name string, h interface{ Handler() http.Handler }) (*app.Server, error) {
	handler := app.BodyReadTimeout(app.Recover(h.Handler(), s.Log), s.Config.BodyReadTimeout)
	srv, err := app.Listen(name, s.Config.Addr(name), handler, s.Config.ShutdownTimeout, s.Log)
	if err != nil {
		return nil, err
	}
	s.onClose(func() { srv.Close() })
	return srv, nil
}

func newProxy(s *System) (*app.Service, error) {
	var err error
	keys := part(&err, s.Keys)
	vault := part(&err, s.Vault)
	live := part(&err, s.Routing)
	tracker := part(&err, s.Health)
	spend := part(&err, s.Spend)
	prices := part(&err, s.Prices)
	limiter := part(&err, s.Limiter)
	logger := part(&err, s.Audit)
	kv := part(&err, s.KV)
	probes := part(&err, s.Probes)
	failures := part(&err, s.Failures)
	known := part(&err, s.Known)
	db := part(&err, s.SQL)
	beats := part(&err, s.Heartbeat)
	enf := part(&err, s.Enforcer)
	si := part(&err, s.SignIn)
	dir := part(&err, s.Teams)
	if err != nil {
		return nil, err
	}
	kept := responses.NewSQLStore(db)
	// The proxy is ready only while its providers answer (from the health
	// figures it keeps anyway; no extra calls).
	probes["providers"] = tracker.Probe
	cfg, reg := s.Config, s.Registry()
	resolver := route.NewResolver(reg).WithSources(route.Sources{
		Config: live.Current, Health: tracker, Prices: perToken{prices}, Budgets: spend,
	})
	// The cache's provider embedder calls through the proxy, made below.
	var embedVia func(ctx context.Context, texts []string) ([][]float32, error)
	sc, err := semanticCache(cfg.Cache, kv, s.Metrics(), s.Log, func(ctx context.Context, texts []string) ([][]float32, error) {
		return embedVia(ctx, texts)
	})
	if err != nil {
		return nil, err
	}
	px := proxy.New(proxy.Deps{
		Auth: append(auth.Chain{keys}, si.authenticators()...), Access: models{keys, dir}, LimitSource: keyLimits{keys, dir, s.Config.SSO.UserLimits}, Vault: vault, Registry: reg, Resolver: resolver, Spend: spend, Routing: live.Current,
		Limits: limiter, Cache: sc, Client: s.Upstream(), Prices: prices, Audit: logger, Metrics: s.Metrics(),
		Log: s.Log, Health: tracker, MaxBodyBytes: cfg.MaxBodyBytes, Probes: probes, Failures: failures, Known: known,
		Responses: kept, ResponsesRetention: cfg.ResponsesRetention,
		Tracer: s.Tracer(), TraceContent: cfg.TraceContent,
		Enforcer: enf, Compliance: proxy.ComplianceOptions{Timeout: cfg.ComplianceTimeout,
			FailOpen: cfg.ComplianceFailOpen, PolicyFailOpen: cfg.PolicyFailOpen},
	})
	// Provider spend still being added finishes before the stores close.
	s.onClose(px.Settled)
	eng := part(&err, s.Engine)
	if err != nil {
		return nil, err
	}
	tools, err := newToolGateway(s, keys, mcpLimits{limiter: limiter, source: keyLimits{keys, dir, s.Config.SSO.UserLimits}},
		mcpScanner{enf: enf, eng: eng, family: defaultToolFamily(), timeout: cfg.ComplianceTimeout},
		mcpRecorder{log: logger})
	if err != nil {
		return nil, err
	}
	srv, err := s.serve(config.Proxy, withTools{proxy: px, tools: tools, strip: si.proxies.Strip})
	if err != nil {
		return nil, err
	}
	// Past the drain time, streams still running end with an error event
	// and are recorded as cut, before their connections close.
	srv.OnDrainTimeout(px.Abort)
	svc := &app.Service{Server: srv, Background: []app.Component{
		app.Func{N: "model-refresh", F: px.Run},
		app.Func{N: "responses-purge", F: func(ctx context.Context) error { return responses.PurgeEvery(ctx, kept, time.Hour, s.Log) }},
		beats.Component(config.Proxy, nil),
	}}
	if sc != nil {
		embedVia = px.Embedder(cfg.Cache.EmbeddingModel)
		svc.Background = append(svc.Background, app.Func{N: "semantic-cache", F: sc.Run})
	}
	return svc, nil
}

func newManagement(s *System) (*app.Service, error) {
	var err error
	admin := part(&err, s.AdminKey)
	keys := part(&err, s.Keys)
	vault := part(&err, s.Vault)
	db := part(&err, s.SQL)
	tracker := part(&err, s.Health)
	live := part(&err, s.Routing)
	limiter := part(&err, s.Limiter)
	kv := part(&err, s.KV)
	probes := part(&err, s.Probes)
	failures := part(&err, s.Failures)
	reader := part(&err, s.LogReader)
	notifier := part(&err, s.Alerts)
	chain := part(&err, s.Chain)
	beats := part(&err, s.Heartbeat)
	si := part(&err, s.SignIn)
	dir := part(&err, s.Teams)
	if err != nil {
		return nil, err
	}
	authn := append(auth.Chain{auth.AdminKey(admin)}, si.authenticators()...)
	guard := func(h http.Handler) http.Handler { return auth.Guard(authn, h) }
	signin := si.api(guard)
	// Sign-in's and teams' admin actions go on the audit chain like mgmt's.
	rec := auditchain.Recorder{Chain: chain, Log: s.Log}
	signin.Audit = rec.Record
	extra := func(mux *http.ServeMux) { signin.Register(mux); dir.Register(mux, guard, rec.Record) }
	api := mgmt.New(mgmt.Deps{AdminKey: admin, Auth: authn, Extra: extra, Keys: keys, Vault: vault, Logs: audit.NewSQLStore(db), LogReader: reader,
		Alerts: notifier, Chain: chain, Analytics: analytics.NewRollups(db), Health: tracker, Routing: live,
		Resolver: route.NewResolver(s.Registry()).WithSources(route.Sources{Config: live.Current}), Failures: failures,
		Limits: limiter, Cache: cache.NewAdmin(kv), EnvKeys: envKeys(s.Registry()), Probes: probes, Log: s.Log,
		Heartbeats: beats, Providers: providerStates(s.Registry(), vault), Backlog: s.backlog})
	srv, err := s.serve(config.Management, stripped{api, si.proxies.Strip})
	if err != nil {
		return nil, err
	}
	return &app.Service{Server: srv, Background: []app.Component{beats.Component(config.Management, nil)}}, nil
}

// keyLimits resolves a principal's limits (limit.Source): a virtual key's
// from its record, a signed-in user's from their team's or the per-user
// defaults.
type keyLimits struct {
	keys  *auth.Keys
	dir   *teams.Directory
	users config.UserLimits
}

func (k keyLimits) Limits(ctx context.Context, p *identity.Principal) (limit.Limits, error) {
	if p.Kind == identity.User && k.dir != nil {
		return userLimits(k.dir, k.users, p)
	}
	if p.Kind != identity.VirtualKey {
		return limit.Limits{}, nil
	}
	vk, err := k.keys.Record(ctx, p.ID)
	if err != nil {
		return limit.Limits{}, err
	}
	return limit.Limits{RPM: int64(vk.RPMLimit), TPM: int64(vk.TPMLimit), MaxBudgetUSD: vk.MaxBudgetUSD, BudgetPeriod: vk.BudgetPeriod}, nil
}

// knownModels is System.Known's test.
func knownModels(reg *provider.Registry, prices *pricing.Table, routing func() *route.Config) func(provider, model string) bool {
	return func(prov, model string) bool {
		if _, ok := prices.Lookup(prov, model); ok {
			return true
		}
		if p, ok := reg.Lookup(prov); ok && slices.Contains(p.Models, model) {
			return true
		}
		cfg := routing()
		for i := range cfg.Chains {
			for _, t := range cfg.Chains[i].Targets {
				if t.Provider == prov && t.Model == model {
					return true
				}
			}
		}
		for _, target := range cfg.ModelMap {
			if p, m, ok := strings.Cut(target, "/"); ok && p == prov && m == model {
				return true
			}
		}
		return false
	}
}
