package mgmt

import (
	"io"
	"net/http"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/cache"
)

// metacacheStats answers GET /api/metacache/stats: the fleet's cache figures.
func (a *API) metacacheStats(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	s, err := a.d.Cache.Stats(ctx)
	if err != nil {
		apierr.Write(w, apierr.Wrap(apierr.Unavailable, "store_unavailable", "the cache statistics are unavailable: the shared store did not answer", err))
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Success bool `json:"success"`
		cache.Stats
	}{true, s})
}

// metacacheFlush answers POST /api/metacache/flush: the whole cache, or one
// namespace with {"namespace": "<ns>"} ("default" names the default one).
func (a *API) metacacheFlush(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Namespace string `json:"namespace"`
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		apierr.Write(w, apierr.Wrap(apierr.InvalidRequest, "body_read_failed", "could not read the request body", err))
		return
	}
	if len(strings.TrimSpace(string(b))) > 0 {
		if err := decodeBody(b, &req); err != nil {
			apierr.Write(w, err)
			return
		}
	}
	if ns := r.URL.Query().Get("namespace"); ns != "" && req.Namespace == "" {
		req.Namespace = ns
	}
	if req.Namespace != "" && req.Namespace != "*" && !cache.ValidNamespace(req.Namespace) {
		apierr.Write(w, apierr.BadParam("namespace", "a namespace is 1–128 characters of letters, digits, '.', '_', '-' or ':'"))
		return
	}
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	if err := a.d.Cache.Flush(ctx, req.Namespace); err != nil {
		apierr.Write(w, apierr.Wrap(apierr.Unavailable, "store_unavailable", "the cache could not be flushed: the shared store did not answer", err))
		return
	}
	scope := req.Namespace
	if scope == "" || scope == "*" {
		scope = "all"
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "flushed": scope})
}
