package teams

import (
	"errors"
	"net/http"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/jsonbody"
	"github.com/svc-gateway/svc/internal/store"
)

// maxBody bounds a team's JSON.
const maxBody = 256 << 10

// Events of the admin actions the routes record.
const (
	EventPut    = "team.put"
	EventDelete = "team.delete"
)

// Audit records an admin action that succeeded (the tamper-evident audit
// chain); nil records nothing.
type Audit func(r *http.Request, event, subject string, details map[string]any)

// Register adds the admin routes to mux, each wrapped by guard, recording
// changes with audit:
//
//	GET    /api/teams          every team
//	POST   /api/teams          create or replace {team_id, rpm_limit, …}
//	GET    /api/teams/{id}     one team
//	PUT    /api/teams/{id}     replace it (the path's id wins)
//	DELETE /api/teams/{id}
func (d *Directory) Register(mux *http.ServeMux, guard func(http.Handler) http.Handler, audit Audit) {
	if audit == nil {
		audit = func(*http.Request, string, string, map[string]any) {}
	}
	h := func(pattern string, f http.HandlerFunc) { mux.Handle(pattern, guard(f)) }
	put, remove := d.put(audit), d.remove(audit)
	h("GET /api/teams", d.list)
	h("POST /api/teams", put)
	h("GET /api/teams/{id}", d.get)
	h("PUT /api/teams/{id}", put)
	h("DELETE /api/teams/{id}", remove)
}

func (d *Directory) list(w http.ResponseWriter, r *http.Request) {
	all, err := d.List(r.Context())
	if err != nil {
		apierr.Write(w, storeError(err))
		return
	}
	if all == nil {
		all = []Team{}
	}
	_ = jsonbody.Write(w, http.StatusOK, map[string]any{"object": "list", "data": all})
}

func (d *Directory) get(w http.ResponseWriter, r *http.Request) {
	t, err := d.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		apierr.Write(w, storeError(err))
		return
	}
	_ = jsonbody.Write(w, http.StatusOK, t)
}

func (d *Directory) put(audit Audit) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var t Team
		if err := jsonbody.Read(r, maxBody, &t, true); err != nil {
			apierr.Write(w, err)
			return
		}
		if id := r.PathValue("id"); id != "" {
			t.ID = id
		}
		out, err := d.Put(r.Context(), t)
		if err != nil {
			apierr.Write(w, storeError(err))
			return
		}
		audit(r, EventPut, out.ID, map[string]any{"rpm_limit": out.RPMLimit, "tpm_limit": out.TPMLimit,
			"max_budget_usd": out.MaxBudgetUSD, "budget_period": out.BudgetPeriod, "model_allowlist": out.ModelAllowlist, "policy_set": out.PolicySet})
		_ = jsonbody.Write(w, http.StatusOK, out)
	}
}

func (d *Directory) remove(audit Audit) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if err := d.Delete(r.Context(), id); err != nil {
			apierr.Write(w, storeError(err))
			return
		}
		audit(r, EventDelete, id, nil)
		_ = jsonbody.Write(w, http.StatusOK, map[string]any{"team_id": id, "deleted": true})
	}
}

// storeError maps the package's errors once.
func storeError(err error) error {
	var fe *FieldError
	switch {
	case errors.As(err, &fe):
		return apierr.BadParam(fe.Field, "%s", fe.Error())
	case errors.Is(err, store.ErrNotFound):
		return apierr.New(apierr.NotFound, "team_not_found", "no such team")
	}
	return apierr.Wrap(apierr.Unavailable, "store_unavailable", "the teams could not be read or stored", err)
}
