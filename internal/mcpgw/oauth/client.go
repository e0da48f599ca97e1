package oauth

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/store"
)

// clientFor picks the OAuth client for an authorization of srv: the one
// configured on the server, else the one dynamic registration gave svc for
// the same issuer and redirect URL before, else a new registration.
func (f *Flow) clientFor(ctx context.Context, srv Server, d *discovery) (client, error) {
	meta := d.meta
	if srv.ClientID != "" {
		return client{ID: srv.ClientID, Secret: srv.ClientSecret,
			Auth: clientAuth(meta.TokenEndpointAuthMethodsSupported, srv.ClientSecret != "")}, nil
	}
	if c, ok := f.registeredBefore(ctx, srv.ID, meta.Issuer); ok {
		return c, nil
	}
	if meta.RegistrationEndpoint == "" {
		return client{}, apierr.New(apierr.InvalidRequest, "mcp_oauth_client_required",
			"the MCP server's authorization server offers no dynamic client registration: configure a client id (and secret) on the MCP server")
	}
	scopes := srv.Scopes
	if len(scopes) == 0 {
		scopes = d.scopes
	}
	req := &oauthex.ClientRegistrationMetadata{
		RedirectURIs:            []string{f.redirectURL},
		TokenEndpointAuthMethod: clientAuth(meta.TokenEndpointAuthMethodsSupported, true),
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		ClientName:              f.clientName,
		Scope:                   strings.Join(scopes, " "),
	}
	if slices.Contains(meta.TokenEndpointAuthMethodsSupported, "none") &&
		!slices.Contains(meta.TokenEndpointAuthMethodsSupported, "client_secret_basic") &&
		!slices.Contains(meta.TokenEndpointAuthMethodsSupported, "client_secret_post") {
		req.TokenEndpointAuthMethod = "none"
	}
	res, err := oauthex.RegisterClient(ctx, meta.RegistrationEndpoint, req, f.client)
	if err != nil {
		return client{}, registrationError(err)
	}
	c := client{ID: res.ClientID, Secret: res.ClientSecret, Registered: true, Auth: res.TokenEndpointAuthMethod}
	if c.Auth == "" {
		c.Auth = req.TokenEndpointAuthMethod
	}
	if c.Secret == "" {
		c.Auth = "none"
	}
	if c.Auth != "client_secret_basic" && c.Auth != "client_secret_post" && c.Auth != "none" {
		return client{}, apierr.New(apierr.UpstreamError, "mcp_oauth_registration_failed",
			"the authorization server registered svc with a client authentication method svc does not speak: "+sanitize(c.Auth, 64))
	}
	return c, nil
}

// registeredBefore returns the dynamically registered client of the
// server's current record when it was registered with issuer for this
// redirect URL.
func (f *Flow) registeredBefore(ctx context.Context, serverID, issuer string) (client, bool) {
	r, err := f.store.Record(ctx, serverID)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			f.log.Warn("mcp oauth: reading the stored client failed; registering a new one", "server_id", serverID, "err", err)
		}
		return client{}, false
	}
	if !r.Registered || r.Issuer != issuer || r.RedirectURI != f.redirectURL {
		return client{}, false
	}
	c := client{ID: r.ClientID, Auth: r.ClientAuth, Registered: true}
	if len(r.ClientSecret) > 0 {
		s, err := f.open(r.ClientSecret, r.ServerID, colClientSecret)
		if err != nil {
			f.log.Warn("mcp oauth: the stored client secret does not open; registering a new client", "server_id", serverID, "err", err)
			return client{}, false
		}
		c.Secret = s
	}
	return c, true
}

// clientAuth chooses how a client authenticates at the token endpoint among
// the methods the server supports: none without a secret, else basic (the
// RFC 8414 default when the server lists none), else post.
func clientAuth(supported []string, hasSecret bool) string {
	switch {
	case !hasSecret:
		return "none"
	case len(supported) == 0, slices.Contains(supported, "client_secret_basic"):
		return "client_secret_basic"
	case slices.Contains(supported, "client_secret_post"):
		return "client_secret_post"
	}
	return "client_secret_basic"
}

// registrationError maps a failed dynamic registration to a 502. The
// registration answer's body, which oauthex quotes in some errors and which
// may hold a client secret, is never kept: only the server's error code, or
// the transport failure.
func registrationError(err error) error {
	var regErr *oauthex.ClientRegistrationError
	if errors.As(err, &regErr) {
		code := sanitize(regErr.ErrorCode, 64)
		return apierr.Wrap(apierr.UpstreamError, "mcp_oauth_registration_failed",
			"the authorization server refused svc's client registration: "+code, errors.New("registration refused: "+code))
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return apierr.Wrap(apierr.UpstreamError, "mcp_oauth_registration_failed",
			"the authorization server's registration endpoint could not be reached", urlErr)
	}
	return apierr.Wrap(apierr.UpstreamError, "mcp_oauth_registration_failed",
		"the authorization server's registration answer was not usable", errors.New("registration failed"))
}

// sanitize keeps at most max runes of s that are printable, for quoting a
// value an authorization server chose in a message.
func sanitize(s string, max int) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == max {
			b.WriteString("…")
			break
		}
		if unicode.IsPrint(r) {
			b.WriteRune(r)
			n++
		}
	}
	return b.String()
}
