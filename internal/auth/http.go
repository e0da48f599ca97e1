package auth

import (
	"context"
	"net/http"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/pipeline"
)

// Stage is the proxy's auth stage: it authenticates the request's
// credentials with a (x-api-key too when allowAPIKey) and sets x.Principal.
func Stage(a Authenticator, allowAPIKey bool) pipeline.Middleware {
	return func(next pipeline.Handler) pipeline.Handler {
		return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
			p, err := a.Authenticate(ctx, FromRequest(x.Inbound, allowAPIKey))
			if err != nil {
				return nil, err
			}
			x.Principal = p
			return next(identity.With(ctx, p), x)
		}
	}
}

// Guard serves h only to callers a authenticates as the admin principal
// (the management API): 401 otherwise.
func Guard(a Authenticator, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := a.Authenticate(r.Context(), FromRequest(r, false))
		if err != nil || !p.IsAdmin() {
			apierr.Write(w, &apierr.Error{Kind: apierr.Unauthenticated, Code: "invalid_admin_key",
				Message: "the management API needs Authorization: Bearer <ADMIN_API_KEY>"})
			return
		}
		h.ServeHTTP(w, r.WithContext(identity.With(r.Context(), p)))
	})
}

// AllowsModel reports whether an allow-list permits model. An empty list
// allows all; entries match the model as requested, or as sent upstream
// (without its provider prefix), and an entry ending in * matches by prefix.
func AllowsModel(models []string, requested, upstream string) bool {
	if len(models) == 0 {
		return true
	}
	for _, m := range models {
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
