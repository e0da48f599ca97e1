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

// Register adds the admin routes to mux, each wrapped by guard:
//
//	GET    /api/teams          every team
//	POST   /api/teams          create or replace {team_id, rpm_limit, …}
//	GET    /api/teams/{id}     one team
//	PUT    /api/teams/{id}     replace it (the path's id wins)
//	DELETE /api/teams/{id}
func (d *Directory) Register(mux *http.ServeMux, guard func(http.Handler) http.Handler) {
	h := func(pattern string, f http.HandlerFunc) { mux.Handle(pattern, guard(f)) }
	h("GET /api/teams", d.list)
	h("POST /api/teams", d.put)
	h("GET /api/teams/{id}", d.get)
	h("PUT /api/teams/{id}", d.put)
	h("DELETE /api/teams/{id}", d.remove)
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

func (d *Directory) put(w http.ResponseWriter, r *http.Request) {
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
	_ = jsonbody.Write(w, http.StatusOK, out)
}

func (d *Directory) remove(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := d.Delete(r.Context(), id); err != nil {
		apierr.Write(w, storeError(err))
		return
	}
	_ = jsonbody.Write(w, http.StatusOK, map[string]any{"team_id": id, "deleted": true})
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
