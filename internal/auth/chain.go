package auth

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/secret"
)

// Credentials are what a caller presented, read once from the request by
// the surface that serves it.
type Credentials struct {
	// Bearer is the token of `Authorization: Bearer <token>`.
	Bearer string
	// APIKey is the x-api-key header, where the route accepts it (the
	// native passthrough routes); "" elsewhere.
	APIKey string
	// Header is the whole request header, for authenticators that read
	// other headers (SPNEGO, trusted proxy headers).
	Header http.Header
	// RemoteAddr is the caller's address as the server saw it.
	RemoteAddr string
}

// FromRequest reads r's credentials; allowAPIKey takes x-api-key too.
func FromRequest(r *http.Request, allowAPIKey bool) Credentials {
	c := Credentials{Bearer: Bearer(r), Header: r.Header, RemoteAddr: r.RemoteAddr}
	if allowAPIKey {
		c.APIKey = strings.TrimSpace(r.Header.Get("x-api-key"))
	}
	return c
}

// Token is the presented secret: the bearer token, else the x-api-key.
func (c Credentials) Token() string {
	if c.Bearer != "" {
		return c.Bearer
	}
	return c.APIKey
}

// Authenticator turns credentials into a principal. It returns ErrNotMine
// when the credentials are not of its kind (the next authenticator of a
// Chain tries), and any other error to refuse them (a revoked key, a bad
// signature): a credential of its kind that fails never falls through.
type Authenticator interface {
	Authenticate(ctx context.Context, c Credentials) (*identity.Principal, error)
}

// ErrNotMine says that an authenticator does not handle the credentials.
var ErrNotMine = errors.New("auth: credentials of another kind")

// Chain tries its authenticators in order: the first that claims the
// credentials decides. Credentials no authenticator claims are a 401:
// missing when there were none, invalid otherwise.
type Chain []Authenticator

// Authenticate implements Authenticator.
func (ch Chain) Authenticate(ctx context.Context, c Credentials) (*identity.Principal, error) {
	for _, a := range ch {
		p, err := a.Authenticate(ctx, c)
		if errors.Is(err, ErrNotMine) {
			continue
		}
		return p, err
	}
	if c.Token() == "" {
		return nil, errMissing
	}
	return nil, errInvalid
}

var (
	errMissing = &apierr.Error{Kind: apierr.Unauthenticated, Code: "missing_api_key",
		Message: "missing API key: send your virtual key as Authorization: Bearer sk-svc-…"}
	errInvalid = &apierr.Error{Kind: apierr.Unauthenticated, Code: "invalid_api_key",
		Message: "invalid API key: the virtual key is unknown or revoked"}
)

// AdminKey authenticates the ADMIN_API_KEY bearer token (compared in
// constant time) as the admin principal.
type AdminKey string

// Admin is the principal of the admin key.
var Admin = &identity.Principal{Kind: identity.Admin, ID: "admin", Name: "admin"}

// Authenticate implements Authenticator.
func (k AdminKey) Authenticate(_ context.Context, c Credentials) (*identity.Principal, error) {
	if c.Bearer == "" || k == "" || !secret.Equal(c.Bearer, string(k)) {
		return nil, ErrNotMine
	}
	return Admin, nil
}

// Bearer returns the token of an `Authorization: Bearer <token>` header.
func Bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

var (
	_ Authenticator = Chain(nil)
	_ Authenticator = AdminKey("")
	_ Authenticator = (*Keys)(nil)
)

// AuthenticatorFunc adapts a function to an Authenticator.
type AuthenticatorFunc func(ctx context.Context, c Credentials) (*identity.Principal, error)

// Authenticate implements Authenticator.
func (f AuthenticatorFunc) Authenticate(ctx context.Context, c Credentials) (*identity.Principal, error) {
	return f(ctx, c)
}
