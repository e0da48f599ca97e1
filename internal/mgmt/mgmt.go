// Package mgmt is the HTTP surface of the management component (api-server):
// virtual keys, provider keys and the VAS audit log, all behind the
// ADMIN_API_KEY, plus /health and /ready. It decodes and validates bodies and
// writes answers; the behaviour lives in auth, keyvault and audit.
//
// Only wire imports mgmt. It never imports provider packages.
package mgmt

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/app"
	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/cache"
	"github.com/svc-gateway/svc/internal/health"
	"github.com/svc-gateway/svc/internal/keyvault"
	"github.com/svc-gateway/svc/internal/limit"
	"github.com/svc-gateway/svc/internal/route"
)

// Deps are what the management API needs.
type Deps struct {
	AdminKey string
	Keys     *auth.Keys
	Vault    *keyvault.Vault
	Logs     audit.Store
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
	// Cache serves /api/metacache/* (may be nil).
	Cache *cache.Admin
	// EnvKeys lists providers whose key comes from <PROVIDER>_API_KEY, by name,
	// with the key's masked prefix.
	EnvKeys map[string]string
	Probes  map[string]app.Probe
	Log     *slog.Logger
	Now     func() time.Time
}

// API serves the management routes.
type API struct{ d Deps }

// New returns the management API.
func New(d Deps) *API {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &API{d: d}
}

// maxBody bounds management request bodies.
const maxBody = 1 << 20

// Handler returns the routes: public health endpoints, everything else behind
// the admin key.
func (a *API) Handler() http.Handler {
	admin := http.NewServeMux()
	admin.HandleFunc("POST /api/enterprise/vkeys", a.createKey)
	admin.HandleFunc("POST /api/auth/virtual-keys", a.createKey)
	admin.HandleFunc("GET /api/enterprise/vkeys", a.listKeys)
	admin.HandleFunc("GET /api/enterprise/vkeys/{id}", a.getKey)
	admin.HandleFunc("DELETE /api/enterprise/vkeys/{key}", a.revokeKey)
	admin.HandleFunc("POST /api/enterprise/vkeys/{key}/revoke", a.revokeKey)
	admin.HandleFunc("GET /api/enterprise/vkeys/{id}/budget", a.keyBudget)
	admin.HandleFunc("POST /api/enterprise/keys", a.putProviderKey)
	admin.HandleFunc("GET /api/enterprise/keys", a.listProviderKeys)
	admin.HandleFunc("DELETE /api/enterprise/keys/{provider}", a.deleteProviderKey)
	admin.HandleFunc("GET /api/vas/logs", a.logs)
	admin.HandleFunc("GET /api/vas/metrics", a.logMetrics)
	admin.HandleFunc("GET /api/providers/perf", a.providerPerf)
	if a.d.Cache != nil {
		admin.HandleFunc("GET /api/metacache/stats", a.metacacheStats)
		admin.HandleFunc("POST /api/metacache/flush", a.metacacheFlush)
	}
	if a.d.Routing != nil {
		NewRoutingAPI(RoutingDeps{Live: a.d.Routing, Resolver: a.d.Resolver, Failures: a.d.Failures, Now: a.d.Now}).Register(admin)
	}
	admin.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		apierr.Write(w, apierr.Newf(apierr.NotFound, "route_not_found", "no route for %s %s", r.Method, r.URL.Path))
	})

	mux := http.NewServeMux()
	app.Health(mux, a.d.Probes)
	mux.Handle("/", auth.Guard(auth.Chain{auth.AdminKey(a.d.AdminKey)}, admin))
	return mux
}

// readJSON decodes the bounded body into v, rejecting unknown fields.
func readJSON(r *http.Request, v any) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return apierr.Wrap(apierr.InvalidRequest, "body_read_failed", "could not read the request body", err)
	}
	if len(b) > maxBody {
		return apierr.Newf(apierr.TooLarge, "request_too_large", "request body exceeds %d bytes", maxBody)
	}
	return decodeBody(b, v)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		apierr.Write(w, apierr.Wrap(apierr.Internal, "encode_failed", "could not encode the answer", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func ctxTimeout(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), 10*time.Second)
}
