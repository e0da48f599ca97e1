package auth

import (
	"context"
	"errors"
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
// (the management API). No valid credential is 401; a valid one that is
// not an admin's is 403 (asking again with it cannot succeed); a failure
// to check it (a store down) keeps its own status (503): a caller is
// never told its key is wrong when svc could not read it.
func Guard(a Authenticator, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := a.Authenticate(r.Context(), FromRequest(r, false))
		if err := guardError(p, err); err != nil {
			apierr.Write(w, err)
			return
		}
		h.ServeHTTP(w, r.WithContext(identity.With(r.Context(), p)))
	})
}

// guardError is Guard's refusal of p (and the authenticator's err), nil
// for the admin.
func guardError(p *identity.Principal, err error) error {
	switch {
	case err == nil && p != nil && p.IsAdmin():
		return nil
	case err == nil && p != nil:
		return apierr.New(apierr.Forbidden, "admin_required", "the management API needs the admin key or an admin's sign-in; this credential is not an admin's")
	case err != nil:
		var e *apierr.Error
		if !errors.As(err, &e) {
			return apierr.Wrap(apierr.Unavailable, "auth_unavailable", "the credential could not be checked", err)
		}
		if e.Kind != apierr.Unauthenticated {
			return e
		}
	}
	return &apierr.Error{Kind: apierr.Unauthenticated, Code: "invalid_admin_key",
		Message: "the management API needs Authorization: Bearer <ADMIN_API_KEY>"}
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
