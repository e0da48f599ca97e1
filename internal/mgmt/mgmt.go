// Package mgmt is the HTTP surface of the management component (api-server):
// virtual keys, provider keys, routing, the cache, the VAS audit log and the
// audit chain, all behind the ADMIN_API_KEY, plus /health and /ready. It
// decodes and validates bodies and writes answers; the behaviour lives in
// auth, keyvault, route, cache, audit and auditchain. Every admin action
// that changes something is appended to the audit chain once it succeeded.
//
// Only wire imports mgmt. It never imports provider packages.
package mgmt

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/svc-gateway/svc/internal/analytics"
	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/app"
	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/auditchain"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/cache"
	"github.com/svc-gateway/svc/internal/health"
	"github.com/svc-gateway/svc/internal/jsonbody"
	"github.com/svc-gateway/svc/internal/keyvault"
	"github.com/svc-gateway/svc/internal/limit"
	"github.com/svc-gateway/svc/internal/route"
)

// Deps are what the management API needs.
type Deps struct {
	AdminKey string
	// Auth, when set, decides who is an admin instead of AdminKey alone
	// (the admin key and admin-role sign-in tokens).
	Auth auth.Authenticator
	// Extra are routes served beside the guarded API, unauthenticated by
	// it (sign-in's, which authenticate themselves); may be nil.
	Extra func(mux *http.ServeMux)
	Keys  *auth.Keys
	Vault *keyvault.Vault
	Logs  audit.Store
	// LogReader serves /api/vas/logs and /api/vas/metrics over the hot
	// tier and Logs (nil: Logs alone).
	LogReader *audit.Reader
	// Limits gives the exact spend of capped keys for the budget endpoint
	// (may be nil: spend then comes from the audit records).
	Limits *limit.Limiter
	// Health serves GET /api/providers/perf (may be nil).
	Health *health.Tracker
	// Routing serves /api/routing/* (may be nil); Resolver and Failures
	// feed its status (see RoutingDeps).
	Routing  *route.Live
	Resolver *route.Resolver
	Failures FailureLog
	// Analytics serves GET /api/analytics (may be nil: no route).
	Analytics *analytics.Rollups
	// Cache serves /api/metacache/* (may be nil).
	Cache *cache.Admin
	// Alerts serves /api/alerts (nil or disabled: 503 alerts_disabled).
	Alerts Alerter
	// Chain records every admin action and serves /api/audit/* (may be
	// nil: nothing is recorded).
	Chain Chain
	// EnvKeys lists providers whose key comes from <PROVIDER>_API_KEY, by name,
	// with the key's masked prefix.
	EnvKeys map[string]string
	Probes  map[string]app.Probe
	Log     *slog.Logger
	Now     func() time.Time

	// Heartbeats, Providers and Backlog feed GET /api/health/comprehensive
	// (each may be nil). Heartbeats: this process and the fleet's
	// components; Providers: the configured providers by name, true for
	// those that can serve (a key stored or in the environment, or none
	// needed); Backlog: the audit entries waiting in the hot tier for the
	// bridge. The stores pinged are Probes' "kv" and "sql".
	Heartbeats Heartbeats
	Providers  func(ctx context.Context) map[string]bool
	Backlog    func(ctx context.Context) (int64, error)
}

// API serves the management routes.
type API struct {
	d Deps
	auditchain.Recorder
}

// New returns the management API.
func New(d Deps) *API {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &API{d: d, Recorder: auditchain.Recorder{Chain: d.Chain, Log: d.Log}}
}

// maxBody bounds management request bodies.
const maxBody = 1 << 20

// handler is a management route: it answers, or returns the error that
// serve renders.
type handler func(w http.ResponseWriter, r *http.Request) error

// router registers handlers behind the one error writer.
type router struct {
	mux *http.ServeMux
	log *slog.Logger
}

func (rt router) handle(pattern string, h handler) { rt.mux.Handle(pattern, serve(h, rt.log)) }

// serve runs h and renders its error, if any: the one place management
// errors are written. A server-side failure (5xx) is logged with its cause
// and the route; the caller sees only the error's client-safe message.
func serve(h handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		if err == nil {
			return
		}
		e := apierr.From(err)
		if e.Status() >= 500 && log != nil {
			log.Error("management request failed", "method", r.Method, "path", r.URL.Path,
				"status", e.Status(), "code", e.Code, "err", err)
		}
		apierr.Write(w, e)
	})
}

// Handler returns the routes: public health endpoints, everything else behind
// the admin key. An admin's path or query that is not valid UTF-8 or carries
// a NUL byte is refused with 400 before any route runs: no store is asked
// for it.
func (a *API) Handler() http.Handler {
	rt := router{mux: http.NewServeMux(), log: a.d.Log}
	rt.handle("POST /api/enterprise/vkeys", a.createKey)
	rt.handle("POST /api/auth/virtual-keys", a.createKey)
	rt.handle("GET /api/enterprise/vkeys", a.listKeys)
	rt.handle("GET /api/enterprise/vkeys/{id}", a.getKey)
	rt.handle("PUT /api/enterprise/vkeys/{id}", a.updateKey)
	rt.handle("DELETE /api/enterprise/vkeys/{key}", a.revokeKey)
	rt.handle("POST /api/enterprise/vkeys/{key}/revoke", a.revokeKey)
	rt.handle("GET /api/enterprise/vkeys/{id}/budget", a.keyBudget)
	rt.handle("POST /api/enterprise/keys", a.putProviderKey)
	rt.handle("GET /api/enterprise/keys", a.listProviderKeys)
	rt.handle("DELETE /api/enterprise/keys/{provider}", a.deleteProviderKey)
	rt.handle("GET /api/vas/logs", a.logs)
	rt.handle("GET /api/vas/metrics", a.logMetrics)
	rt.handle("GET /api/providers/perf", a.providerPerf)
	rt.handle("POST /api/alerts", a.raiseAlert)
	rt.handle("GET /api/alerts", a.listAlerts)
	rt.handle("GET /api/health/comprehensive", a.comprehensiveHealth)
	if a.d.Analytics != nil {
		rt.handle("GET /api/analytics", a.analytics)
	}
	if a.d.Cache != nil {
		rt.handle("GET /api/metacache/stats", a.metacacheStats)
		rt.handle("POST /api/metacache/flush", a.metacacheFlush)
	}
	if a.d.Routing != nil {
		NewRoutingAPI(RoutingDeps{Live: a.d.Routing, Resolver: a.d.Resolver, Failures: a.d.Failures, Now: a.d.Now, Log: a.d.Log, Chain: a.d.Chain}).Register(rt.mux)
	}
	if a.d.Chain != nil {
		rt.handle("GET /api/audit/logs", a.auditLogs)
		rt.handle("GET /api/audit/verify", a.auditVerify)
	}
	rt.handle("/", func(w http.ResponseWriter, r *http.Request) error {
		return apierr.Newf(apierr.NotFound, "route_not_found", "no route for %s %s", r.Method, r.URL.Path)
	})

	mux := http.NewServeMux()
	app.Health(mux, a.d.Probes)
	var authn auth.Authenticator = auth.Chain{auth.AdminKey(a.d.AdminKey)}
	if a.d.Auth != nil {
		authn = a.d.Auth
	}
	if a.d.Extra != nil {
		a.d.Extra(mux)
	}
	mux.Handle("/", auth.Guard(authn, rt.mux))
	// Every route, the other packages' (Extra) included, refuses a bad URL.
	return serve(validURL(mux), a.d.Log)
}

// validURL refuses a path or query holding a NUL byte or invalid UTF-8:
// no record name holds either, and PostgreSQL refuses both in text.
func validURL(h http.Handler) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		if bad(r.URL.Path) {
			return apierr.New(apierr.InvalidRequest, "invalid_path", "the path must be UTF-8 text without NUL bytes")
		}
		for name, vals := range r.URL.Query() {
			for _, v := range append(vals, name) {
				if bad(v) {
					clean := strings.ToValidUTF8(strings.ReplaceAll(name, "\x00", ""), "?")
					return apierr.BadParam(clean, "query parameter %q must be UTF-8 text without NUL bytes", clean)
				}
			}
		}
		h.ServeHTTP(w, r)
		return nil
	}
}

func bad(s string) bool { return strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) }

// readJSON decodes the bounded body into v, rejecting unknown fields.
func readJSON(r *http.Request, v any) error { return jsonbody.Read(r, maxBody, v, true) }

// writeJSON answers v with status; an encoding failure is returned (and
// nothing written).
func writeJSON(w http.ResponseWriter, status int, v any) error { return jsonbody.Write(w, status, v) }

func ctxTimeout(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), 10*time.Second)
}
