package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/app"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/jsonbody"
	"github.com/svc-gateway/svc/internal/policy"
	"github.com/svc-gateway/svc/internal/store"
)

// maxBody bounds a request body: a policy's content (policy.MaxContent)
// may be JSON-escaped up to six bytes a byte, and the lists beside it.
const maxBody = 1 << 20

// Store is the policy library's records as this API uses them;
// policy.SQLStore implements it.
type Store interface {
	CreatePolicy(ctx context.Context, p policy.Policy) (policy.Policy, error)
	GetPolicy(ctx context.Context, id string) (policy.Policy, error)
	ListPolicies(ctx context.Context, includeInactive bool) ([]policy.Policy, error)
	UpdatePolicy(ctx context.Context, id string, patch policy.PolicyPatch) (policy.Policy, error)
	DeletePolicy(ctx context.Context, id string) error
	CreatePreset(ctx context.Context, pr policy.Preset) (policy.Preset, []policy.Policy, error)
	GetPreset(ctx context.Context, id string) (policy.Preset, []policy.Policy, error)
	ListPresets(ctx context.Context) ([]policy.Preset, error)
	UpdatePreset(ctx context.Context, id string, patch policy.PresetPatch) (policy.Preset, []policy.Policy, error)
	DeletePreset(ctx context.Context, id string) error
	SetAssignment(ctx context.Context, a policy.Assignment) (policy.Assignment, error)
	ListAssignments(ctx context.Context, f policy.AssignmentFilter) ([]policy.Assignment, error)
	DeleteAssignment(ctx context.Context, kind, subject string) error
	Stats(ctx context.Context) (policy.Stats, error)
}

// Deps are what the policy library API needs.
type Deps struct {
	// Auth authenticates callers; only the admin principal is served.
	Auth  auth.Authenticator
	Store Store
	// Compile turns a policy's content into the checks it runs, shown
	// with each policy (nil: answers carry no checks).
	Compile func(content string) policy.Checks
	// Probes are /ready's checks (the database, typically).
	Probes map[string]app.Probe
	Log    *slog.Logger
}

// API serves the policy library routes.
type API struct {
	d   Deps
	mux *http.ServeMux
}

// New returns the policy library API with its routes registered.
func New(d Deps) *API {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	a := &API{d: d, mux: http.NewServeMux()}
	a.routes()
	return a
}

type handler func(w http.ResponseWriter, r *http.Request) error

func (a *API) routes() {
	app.Health(a.mux, a.d.Probes)
	routes := []struct {
		pattern string
		h       handler
	}{
		{"GET /api/policies", a.listPolicies},
		{"POST /api/policies", a.createPolicy},
		{"GET /api/policies/{id}", a.getPolicy},
		{"PUT /api/policies/{id}", a.updatePolicy},
		{"DELETE /api/policies/{id}", a.deletePolicy},
		{"GET /api/presets", a.listPresets},
		{"POST /api/presets", a.createPreset},
		{"GET /api/presets/{id}", a.getPreset},
		{"PUT /api/presets/{id}", a.updatePreset},
		{"DELETE /api/presets/{id}", a.deletePreset},
		{"GET /api/policy/assignments", a.listAssignments},
		{"POST /api/policy/assignments", a.createAssignment},
		{"DELETE /api/policy/assignments", a.deleteAssignment},
		{"GET /api/policy/stats", a.stats},
		{"GET /api/stats", a.stats}, // the spec names no path; /api/policy/stats is reachable through the ingress
		{"/", func(w http.ResponseWriter, r *http.Request) error {
			return apierr.Newf(apierr.NotFound, "route_not_found", "no route for %s %s", r.Method, r.URL.Path)
		}},
	}
	for _, rt := range routes {
		a.mux.Handle(rt.pattern, a.serve(rt.h))
	}
}

// Handler returns the routes.
func (a *API) Handler() http.Handler { return a.mux }

// Mount adds h at pattern (http.ServeMux syntax) behind the same admin
// check as the library's routes, for the routes other packages serve on
// this component (document-to-policy generation and its jobs). A pattern
// that conflicts with one already registered is an error.
func (a *API) Mount(pattern string, h http.Handler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("policy httpapi: mount %q: %v", pattern, r)
		}
	}()
	a.mux.Handle(pattern, a.serve(func(w http.ResponseWriter, r *http.Request) error {
		h.ServeHTTP(w, r)
		return nil
	}))
	return nil
}

// serve admits the admin principal only (401 for anyone else), runs h and
// renders its error: the one place errors are written.
func (a *API) serve(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := a.admin(r)
		if err == nil {
			err = h(w, r.WithContext(identity.With(r.Context(), auth.Admin)))
		}
		if err == nil {
			return
		}
		e := apierr.From(err)
		if e.Status() >= 500 {
			a.d.Log.Error("policy request failed", "method", r.Method, "path", r.URL.Path, "status", e.Status(), "code", e.Code, "err", err)
		}
		apierr.Write(w, e)
	})
}

func (a *API) admin(r *http.Request) error {
	if a.d.Auth != nil {
		p, err := a.d.Auth.Authenticate(r.Context(), auth.FromRequest(r, false))
		if err == nil && p.IsAdmin() {
			return nil
		}
	}
	return apierr.New(apierr.Unauthenticated, "invalid_admin_key",
		"the policy library needs Authorization: Bearer <ADMIN_API_KEY>")
}

// readJSON decodes the bounded body into v, strictly: a member v does not
// declare is a 400 naming it (the read-only fields of an answer are
// declared, so an answer may be sent back as it came).
func readJSON(r *http.Request, v any) error { return jsonbody.Read(r, maxBody, v, true) }

func writeJSON(w http.ResponseWriter, status int, v any) error { return jsonbody.Write(w, status, v) }

// list writes the list envelope the management API uses.
func list[T any](w http.ResponseWriter, data []T) error {
	return writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data, "total": len(data)})
}

// deleted answers a deletion.
func deleted(w http.ResponseWriter, object, id string) error {
	return writeJSON(w, http.StatusOK, map[string]any{"id": id, "object": object, "deleted": true})
}

func ctxTimeout(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), 10*time.Second)
}

// storeErr maps the store's errors to the API's: a field error is a 400
// naming the field, an unknown id a 404 on what (policy, preset,
// assignment), a taken name or an assigned preset a 409.
func storeErr(err error, what, id string) error {
	var fe *policy.FieldError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fe):
		e := apierr.BadParam(fe.Field, "%s %s", fe.Field, fe.Reason)
		switch {
		case errors.Is(fe, policy.ErrUnknownPolicy):
			e.Code = "unknown_policy_id"
		case errors.Is(fe, policy.ErrUnknownPreset):
			e.Code = "unknown_preset"
		}
		e.Err = err
		return e
	case errors.Is(err, store.ErrNotFound):
		return apierr.Wrap(apierr.NotFound, what+"_not_found", fmt.Sprintf("no %s %q", what, clip(id)), err)
	case errors.Is(err, policy.ErrPresetAssigned):
		return apierr.Wrap(apierr.Conflict, "preset_assigned",
			"the preset is assigned to keys, teams or roles: remove those assignments (DELETE /api/policy/assignments) first", err)
	case errors.Is(err, store.ErrConflict):
		return apierr.Wrap(apierr.Conflict, what+"_name_taken", fmt.Sprintf("another %s has this name", what), err)
	}
	return err
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
