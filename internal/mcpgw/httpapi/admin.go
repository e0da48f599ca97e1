package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/jsonbody"
	"github.com/svc-gateway/svc/internal/mcpgw"
	"github.com/svc-gateway/svc/internal/mcpgw/toolcache"
	"github.com/svc-gateway/svc/internal/store"
)

// Registrations are the registry's admin operations.
type Registrations interface {
	Create(ctx context.Context, s mcpgw.Server) (*mcpgw.Server, error)
	Update(ctx context.Context, id string, s mcpgw.Server) (*mcpgw.Server, error)
	Delete(ctx context.Context, id string) error
	Get(ctx context.Context, id string) (*mcpgw.Server, error)
	List(ctx context.Context) ([]*mcpgw.Server, error)
}

// CacheAdmin is the tool-call cache's statistics and flushes.
type CacheAdmin interface {
	Stats(ctx context.Context, serverIDs []string) ([]toolcache.ServerStats, error)
	Flush(ctx context.Context) error
	FlushServer(ctx context.Context, serverID string) error
}

// Admin serves the registry and cache routes (the admin key only).
type Admin struct {
	Registrations Registrations
	Cache         CacheAdmin // nil: the cache is off (MCP_GATEWAY_ENABLED)
	// Generator builds the tools of an OpenAPI document (POST
	// /api/mcp/generate); nil answers 404.
	Generator Generator
	// Audit, when set, records an admin action that succeeded (the
	// tamper-evident audit chain): its event type, subject and details,
	// which never hold a credential.
	Audit func(r *http.Request, event, subject string, details map[string]any)
}

// Event types of the admin actions Admin reports to Audit.
const (
	EventServerCreate   = "mcp.server.create"
	EventServerUpdate   = "mcp.server.update"
	EventServerDelete   = "mcp.server.delete"
	EventServerGenerate = "mcp.server.generate"
	EventCacheFlush     = "mcp.cache.flush"
)

// maxRegistrationBytes bounds a registration body (an OpenAPI document
// may ride in it).
const maxRegistrationBytes = mcpgw.MaxSpecBytes + 64<<10

// Register adds the admin routes to mux; wrap guards each (auth.Guard).
func (a *Admin) Register(mux *http.ServeMux, wrap func(http.Handler) http.Handler) {
	h := func(pattern string, f http.HandlerFunc) { mux.Handle(pattern, wrap(f)) }
	h("GET /api/mcp/servers", a.list)
	h("POST /api/mcp/servers", a.create)
	h("GET /api/mcp/servers/{id}", a.get)
	h("PUT /api/mcp/servers/{id}", a.update)
	h("DELETE /api/mcp/servers/{id}", a.remove)
	h("GET /api/mcp/cache/stats", a.stats)
	h("POST /api/mcp/cache/flush", a.flush)
	h("POST /api/mcp/cache/flush/{id}", a.flush)
	h("POST /api/mcp/generate", a.generate)
}

func (a *Admin) list(w http.ResponseWriter, r *http.Request) {
	all, err := a.Registrations.List(r.Context())
	if err != nil {
		apierr.Write(w, registryError(err))
		return
	}
	out := make([]*mcpgw.Server, 0, len(all))
	for _, s := range all {
		out = append(out, s.Redacted())
	}
	_ = jsonbody.Write(w, http.StatusOK, map[string]any{"object": "list", "data": out})
}

func (a *Admin) create(w http.ResponseWriter, r *http.Request) {
	a.save(w, r, EventServerCreate, http.StatusCreated, func(s mcpgw.Server) (*mcpgw.Server, error) {
		return a.Registrations.Create(r.Context(), s)
	})
}

func (a *Admin) get(w http.ResponseWriter, r *http.Request) {
	s, err := a.Registrations.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		apierr.Write(w, registryError(err))
		return
	}
	_ = jsonbody.Write(w, http.StatusOK, s.Redacted())
}

func (a *Admin) update(w http.ResponseWriter, r *http.Request) {
	a.save(w, r, EventServerUpdate, http.StatusOK, func(s mcpgw.Server) (*mcpgw.Server, error) {
		return a.Registrations.Update(r.Context(), r.PathValue("id"), s)
	})
}

// save reads a registration, checks a generated server's document, stores
// it with store and answers the stored registration with status.
func (a *Admin) save(w http.ResponseWriter, r *http.Request, event string, status int, store func(mcpgw.Server) (*mcpgw.Server, error)) {
	var s mcpgw.Server
	if err := jsonbody.Read(r, maxRegistrationBytes, &s, true); err != nil {
		apierr.Write(w, err)
		return
	}
	if err := a.checkSpec(&s); err != nil {
		apierr.Write(w, err)
		return
	}
	out, err := store(s)
	if err != nil {
		apierr.Write(w, registryError(err))
		return
	}
	a.stored(r, event, out)
	_ = jsonbody.Write(w, status, out.Redacted())
}

// stored follows a stored registration: the audit (what follows from the
// change itself — sessions, tool lists, the catalog — follows the
// registry's change hook, on every process).
func (a *Admin) stored(r *http.Request, event string, out *mcpgw.Server) {
	a.audit(r, event, out)
}

func (a *Admin) remove(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := a.Registrations.Delete(r.Context(), id); err != nil {
		apierr.Write(w, registryError(err))
		return
	}
	if a.Audit != nil {
		a.Audit(r, EventServerDelete, id, nil)
	}
	_ = jsonbody.Write(w, http.StatusOK, map[string]any{"id": id, "deleted": true})
}

// audit records a registration's change: what an admin would ask of it
// (transport, address, auth type, access lists, cost, mode), never its
// credential nor a stdio program's environment values.
func (a *Admin) audit(r *http.Request, event string, s *mcpgw.Server) {
	if a.Audit == nil {
		return
	}
	a.Audit(r, event, s.ID, map[string]any{
		"name": s.Name, "transport": s.Transport, "base_url": withoutQuery(s.BaseURL), "command": s.Command,
		"auth_type": s.AuthType, "has_auth_token": s.HasAuthToken || s.AuthToken != "",
		"allowed_tools": s.AllowedTools, "disallowed_tools": s.DisallowedTools,
		"per_call_usd": s.CostInfo.PerCallUSD, "guardrail_mode": s.GuardrailMode, "public": s.Public(),
	})
}

// withoutQuery is raw without its query and fragment, which may carry a
// key some servers take in the URL.
func withoutQuery(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String()
}

// checkSpec refuses a generated server's registration whose document
// yields no tools, before anything is stored.
func (a *Admin) checkSpec(s *mcpgw.Server) error {
	if !strings.EqualFold(s.Transport, mcpgw.TransportOpenAPI) || s.OpenAPI == "" || a.Generator == nil {
		return nil // the registry names what is missing
	}
	if _, err := a.Generator.Tools([]byte(s.OpenAPI), s.IncludeMethods); err != nil {
		return apierr.From(err)
	}
	return nil
}

func (a *Admin) stats(w http.ResponseWriter, r *http.Request) {
	if a.Cache == nil {
		apierr.Write(w, cacheOff())
		return
	}
	all, err := a.Registrations.List(r.Context())
	if err != nil {
		apierr.Write(w, registryError(err))
		return
	}
	ids := make([]string, 0, len(all))
	for _, s := range all {
		ids = append(ids, s.ID)
	}
	st, err := a.Cache.Stats(r.Context(), ids)
	if err != nil {
		apierr.Write(w, apierr.Wrap(apierr.Unavailable, "store_unavailable", "the cache statistics could not be read", err))
		return
	}
	_ = jsonbody.Write(w, http.StatusOK, map[string]any{"enabled": true, "servers": st})
}

func (a *Admin) flush(w http.ResponseWriter, r *http.Request) {
	if a.Cache == nil {
		apierr.Write(w, cacheOff())
		return
	}
	id := r.PathValue("id")
	var err error
	if id == "" {
		err = a.Cache.Flush(r.Context())
	} else {
		err = a.Cache.FlushServer(r.Context(), id)
	}
	if err != nil {
		apierr.Write(w, apierr.Wrap(apierr.Unavailable, "store_unavailable", "the cache could not be flushed", err))
		return
	}
	if a.Audit != nil {
		a.Audit(r, EventCacheFlush, id, nil)
	}
	_ = jsonbody.Write(w, http.StatusOK, map[string]any{"flushed": true, "server_id": id})
}

func cacheOff() error {
	return apierr.New(apierr.NotFound, "cache_disabled", "the tool-call cache is off: set MCP_GATEWAY_ENABLED=true on the proxy")
}

// registryError maps the registry's errors once.
func registryError(err error) error {
	var v *mcpgw.ValidationError
	switch {
	case errors.As(err, &v):
		return apierr.BadParam(v.Field, "%s: %s", v.Field, v.Message)
	case errors.Is(err, store.ErrNotFound):
		return apierr.New(apierr.NotFound, "unknown_server", "no such MCP server")
	case errors.Is(err, store.ErrConflict):
		return apierr.New(apierr.Conflict, "server_exists", "an MCP server with this id is already registered")
	}
	var e *apierr.Error
	if errors.As(err, &e) {
		return e
	}
	return apierr.Wrap(apierr.Unavailable, "registry_unavailable", "the MCP server registry failed", err)
}
