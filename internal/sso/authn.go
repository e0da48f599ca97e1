package sso

import (
	"context"
	"errors"

	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/sso/token"
)

// TokenAuthenticator signs in the bearers of internal JWTs (auth's chain):
// it claims a bearer token shaped like a JWT, and a token that fails is
// refused with the check that failed (it never falls through).
type TokenAuthenticator struct{ Tokens *token.Signer }

// Authenticate implements auth.Authenticator.
func (a TokenAuthenticator) Authenticate(ctx context.Context, c auth.Credentials) (*identity.Principal, error) {
	raw := c.Token()
	if a.Tokens == nil || !token.LooksLikeJWT(raw) {
		return nil, auth.ErrNotMine
	}
	claims, err := a.Tokens.Verify(ctx, raw)
	if err != nil {
		var te *token.Error
		if errors.As(err, &te) {
			return nil, te.API()
		}
		return nil, err
	}
	return &identity.Principal{Kind: identity.User, ID: claims.Username, Name: claims.Name, Email: claims.Email,
		Department: claims.Department, Groups: claims.GroupList(), Roles: claims.Roles, AuthMethod: claims.AuthMethod}, nil
}

// HeaderAuthenticator signs in the users an authenticating proxy names in
// trusted headers, on any route, when the connecting address is one of
// Proxies and no token was presented. Roles follow the configuration's
// admin groups at each request.
type HeaderAuthenticator struct {
	Proxies Proxies
	Service *Service
}

// Authenticate implements auth.Authenticator.
func (a HeaderAuthenticator) Authenticate(_ context.Context, c auth.Credentials) (*identity.Principal, error) {
	if c.Token() != "" || c.Header == nil || !a.Proxies.TrustsAddr(c.RemoteAddr) {
		return nil, auth.ErrNotMine
	}
	id, ok := FromHeaders(c.Header)
	if !ok {
		return nil, auth.ErrNotMine
	}
	var patterns []string
	if a.Service != nil {
		if cfg, ok := a.Service.Config(); ok {
			patterns = cfg.AdminGroups
		}
	}
	return &identity.Principal{Kind: identity.User, ID: id.Username, Name: id.DisplayName, Email: id.Email,
		Department: id.Department, Groups: id.Groups, Roles: Roles(id.Groups, patterns), AuthMethod: id.Method}, nil
}
