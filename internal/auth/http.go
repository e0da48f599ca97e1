package auth

import (
	"context"
	"net/http"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/secret"
)

// Bearer returns the token of an `Authorization: Bearer <token>` header.
func Bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// Stage is the proxy's auth stage: it authenticates the virtual key in
// Authorization (or, when allowAPIKeyHeader, in x-api-key) and sets
// x.Principal.
func (k *Keys) Stage(allowAPIKeyHeader bool) pipeline.Middleware {
	return func(next pipeline.Handler) pipeline.Handler {
		return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
			tok := Bearer(x.Inbound)
			if tok == "" && allowAPIKeyHeader {
				tok = strings.TrimSpace(x.Inbound.Header.Get("x-api-key"))
			}
			p, err := k.Authenticate(ctx, tok)
			if err != nil {
				return nil, err
			}
			x.Principal = p
			return next(identity.With(ctx, p), x)
		}
	}
}

// AllowsModel reports whether p may use model. An empty allow-list allows all;
// entries match the model as requested, or without its provider prefix, and an
// entry ending in * matches by prefix.
func AllowsModel(p *identity.Principal, requested, upstream string) bool {
	if p == nil || len(p.Models) == 0 {
		return true
	}
	for _, m := range p.Models {
		if pre, ok := strings.CutSuffix(m, "*"); ok {
			if strings.HasPrefix(requested, pre) || strings.HasPrefix(upstream, pre) {
				return true
			}
			continue
		}
		if m == requested || m == upstream {
			return true
		}
	}
	return false
}

// ErrModelNotAllowed is the 403 for a model outside the key's restrictions.
func ErrModelNotAllowed(model string) error {
	return apierr.Newf(apierr.Forbidden, "model_not_allowed", "this key may not use model %q", model)
}

// Admin guards management routes with the ADMIN_API_KEY bearer token
// (constant-time comparison).
func Admin(adminKey string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := Bearer(r)
		if tok == "" || !secret.Equal(tok, adminKey) {
			apierr.Write(w, &apierr.Error{Kind: apierr.Unauthenticated, Code: "invalid_admin_key",
				Message: "the management API needs Authorization: Bearer <ADMIN_API_KEY>"})
			return
		}
		r = r.WithContext(identity.With(r.Context(), &identity.Principal{Kind: identity.Admin, ID: "admin"}))
		h.ServeHTTP(w, r)
	})
}
