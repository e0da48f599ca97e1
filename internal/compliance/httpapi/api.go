// Package httpapi is the HTTP surface of the compliance component
// (COMPLIANCE_PORT 7777): the spec's /v1/compliance/* routes and
// /api/compliance/intelligent/health over the compliance engine, its scan
// records and the risk model, plus /health, /ready and /metrics.
//
// Every route needs a bearer credential: scans, redaction and the engine's
// health take the admin key or any virtual key; feedback, the learning
// reports, the model's statistics and organisations' baselines take the
// admin key only. Handlers return errors; one writer renders them.
//
// Only wire imports it.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"
	"unicode"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/app"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/compliance"
	"github.com/svc-gateway/svc/internal/compliance/detect"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/jsonbody"
	"github.com/svc-gateway/svc/internal/metrics"
)

// Limits of the API.
const (
	// MaxContent bounds the content of one scan (413 past it).
	MaxContent = 1 << 20
	// maxBody bounds a request body: content may be JSON-escaped.
	maxBody = 8 << 20
	// maxID bounds user_id, org_id and scan_id.
	maxID = 256
)

// Deps are what the compliance API needs.
type Deps struct {
	// Auth authenticates callers: the admin key and virtual keys.
	Auth    auth.Authenticator
	Engine  *compliance.Engine
	Records *compliance.Records
	// Learner serves the intelligent scan, feedback and the learning
	// reports (nil: they answer 503).
	Learner *compliance.Learner
	// Features encodes a scan's features for its record (nil: none
	// kept; feedback then cannot teach the model from it).
	Features func(text string, findings []detect.Finding) []byte
	Metrics  *Metrics
	// Process is the process's /metrics (nil: no /metrics route).
	Process *metrics.Metrics
	Probes  map[string]app.Probe
	Log     *slog.Logger
	Now     func() time.Time
}

// API serves the compliance routes.
type API struct{ d Deps }

// New returns the compliance API.
func New(d Deps) *API {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Metrics == nil {
		d.Metrics = NewMetrics(nil)
	}
	return &API{d: d}
}

type handler func(w http.ResponseWriter, r *http.Request) error

// Handler returns the routes.
func (a *API) Handler() http.Handler {
	mux := http.NewServeMux()
	app.Health(mux, a.d.Probes)
	if a.d.Process != nil {
		mux.Handle("GET /metrics", a.d.Process.Handler())
	}
	anyCaller := func(h handler) http.Handler { return a.serve(h, false) }
	adminOnly := func(h handler) http.Handler { return a.serve(h, true) }
	mux.Handle("POST /v1/compliance/scan", anyCaller(a.scan))
	mux.Handle("POST /v1/compliance/redact", anyCaller(a.redact))
	mux.Handle("POST /v1/compliance/intelligent-scan", anyCaller(a.intelligentScan))
	mux.Handle("GET /api/compliance/intelligent/health", anyCaller(a.intelligentHealth))
	mux.Handle("POST /v1/compliance/feedback", adminOnly(a.feedback))
	mux.Handle("GET /v1/compliance/learning/status/{user_id}", adminOnly(a.learningStatus))
	mux.Handle("GET /v1/compliance/learning/summary", adminOnly(a.learningSummary))
	mux.Handle("GET /v1/compliance/ml/stats", adminOnly(a.mlStats))
	mux.Handle("GET /v1/compliance/org/baseline/{org_id}", adminOnly(a.baseline))
	mux.Handle("/", anyCaller(func(w http.ResponseWriter, r *http.Request) error {
		return apierr.Newf(apierr.NotFound, "route_not_found", "no route for %s %s", r.Method, r.URL.Path)
	}))
	return mux
}

// serve authenticates the caller (the admin principal only, with admin),
// runs h and renders its error: the one place errors are written.
func (a *API) serve(h handler, admin bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := a.authenticate(r, admin)
		if err == nil {
			err = h(w, r.WithContext(identity.With(r.Context(), p)))
		}
		if err == nil {
			return
		}
		e := apierr.From(err)
		if e.Status() >= 500 {
			a.d.Log.Error("compliance request failed", "method", r.Method, "path", r.URL.Path, "status", e.Status(), "code", e.Code, "err", err)
		}
		apierr.Write(w, e)
	})
}

func (a *API) authenticate(r *http.Request, admin bool) (*identity.Principal, error) {
	if a.d.Auth == nil {
		return nil, apierr.New(apierr.Unauthenticated, "invalid_api_key", "no credential is accepted here")
	}
	p, err := a.d.Auth.Authenticate(r.Context(), auth.FromRequest(r, false))
	if err != nil || p == nil {
		if e := apierr.From(err); err != nil && e.Kind != apierr.Unauthenticated && e.Kind != apierr.Internal {
			return nil, e
		}
		return nil, apierr.New(apierr.Unauthenticated, "invalid_api_key", "the compliance API needs Authorization: Bearer <ADMIN_API_KEY or a virtual key>")
	}
	if admin && !p.IsAdmin() {
		return nil, apierr.New(apierr.Forbidden, "admin_required", "this route needs the admin key")
	}
	return p, nil
}

// readJSON decodes the bounded body into v (unknown members are
// ignored: clients send the spec's optional fields and their own).
func readJSON(r *http.Request, v any) error { return jsonbody.Read(r, maxBody, v, false) }

func writeJSON(w http.ResponseWriter, status int, v any) error { return jsonbody.Write(w, status, v) }

// content checks a body's content: present, at most MaxContent bytes.
// (Invalid UTF-8 was refused by the decoder.)
func content(c *string) (string, error) {
	if c == nil {
		return "", apierr.BadParam("content", "content is required (a string)")
	}
	if len(*c) > MaxContent {
		return "", apierr.Newf(apierr.TooLarge, "content_too_large", "content exceeds %d bytes", MaxContent)
	}
	return *c, nil
}

// ident checks an identifier field: at most maxID bytes of printable text.
func ident(name, v string) error {
	if len(v) > maxID {
		return apierr.BadParam(name, "%s must be at most %d bytes", name, maxID)
	}
	for _, r := range v {
		if !unicode.IsPrint(r) {
			return apierr.BadParam(name, "%s must be printable text", name)
		}
	}
	return nil
}

// orgOf is the organisation a scan counts for: the body's, else the
// caller's team scope (a virtual key's team or the key itself), else
// "default" for the admin key.
func orgOf(ctx context.Context, org string) string {
	if org != "" {
		return org
	}
	if p := identity.From(ctx); p != nil && !p.IsAdmin() {
		return p.Tenant()
	}
	return "default"
}

func ctxTimeout(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), 10*time.Second)
}

func callerOf(ctx context.Context) string {
	if p := identity.From(ctx); p != nil {
		return p.Caller()
	}
	return ""
}
