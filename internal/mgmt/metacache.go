package mgmt

import (
	"io"
	"net/http"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/cache"
)

// metacacheStats answers GET /api/metacache/stats: the fleet's cache figures.
func (a *API) metacacheStats(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	s, err := a.d.Cache.Stats(ctx)
	if err != nil {
		return apierr.Wrap(apierr.Unavailable, "store_unavailable", "the cache statistics are unavailable: the shared store did not answer", err)
	}
	return writeJSON(w, http.StatusOK, struct {
		Success bool `json:"success"`
		cache.Stats
	}{true, s})
}

// metacacheFlush answers POST /api/metacache/flush: the whole cache, or one
// namespace with {"namespace": "<ns>"} ("default" names the default one).
func (a *API) metacacheFlush(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Namespace string `json:"namespace"`
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return apierr.Wrap(apierr.InvalidRequest, "body_read_failed", "could not read the request body", err)
	}
	if len(strings.TrimSpace(string(b))) > 0 {
		if err := decodeBody(b, &req); err != nil {
			return err
		}
	}
	if ns := r.URL.Query().Get("namespace"); ns != "" && req.Namespace == "" {
		req.Namespace = ns
	}
	if req.Namespace != "" && req.Namespace != "*" && !cache.ValidNamespace(req.Namespace) {
		return apierr.BadParam("namespace", "a namespace is 1–128 characters of letters, digits, '.', '_', '-' or ':'")
	}
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	if err := a.d.Cache.Flush(ctx, req.Namespace); err != nil {
		return apierr.Wrap(apierr.Unavailable, "store_unavailable", "the cache could not be flushed: the shared store did not answer", err)
	}
	scope := req.Namespace
	if scope == "" || scope == "*" {
		scope = "all"
	}
	a.Record(r, evCacheFlush, scope, map[string]any{"namespace": scope})
	return writeJSON(w, http.StatusOK, map[string]any{"success": true, "flushed": scope})
}
