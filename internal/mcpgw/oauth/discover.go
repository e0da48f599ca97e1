package oauth

import (
	"github.com/svc-gateway/svc/internal/egress"

	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/svc-gateway/svc/internal/apierr"
)

// discovery is what the authorization of one MCP server needs to know of
// its authorization server.
type discovery struct {
	resource string   // the RFC 8707 resource: the protected resource's identifier
	scopes   []string // the challenge's scope, else the resource's scopes_supported
	meta     *oauthex.AuthServerMeta
}

// discover finds the authorization server of the MCP server at serverURL,
// as the MCP specification's authorization section says: the protected
// resource metadata named by the server's 401 challenge, else at the
// well-known URIs beside its URL (with the path, then at the root); then the
// authorization server metadata of its first authorization server. A server
// that publishes no resource metadata is taken to be its own authorization
// server (the 2025-03-26 revision's fallback).
func (f *Flow) discover(ctx context.Context, serverURL string) (*discovery, error) {
	challenge := f.probe(ctx, serverURL)
	var (
		prm     *oauthex.ProtectedResourceMetadata
		lastErr error
	)
	for _, c := range resourceMetadataURLs(challenge.metadataURL, serverURL) {
		if err := f.checkURL("resource_metadata", c.url); err != nil {
			lastErr = err
			continue
		}
		m, err := oauthex.GetProtectedResourceMetadata(ctx, c.url, c.resource, f.client)
		if err != nil {
			lastErr = err
			continue
		}
		prm = m
		break
	}
	d := &discovery{resource: serverURL, scopes: challenge.scopes}
	issuer := ""
	switch {
	case prm != nil && len(prm.AuthorizationServers) == 0:
		return nil, discoveryError("the MCP server's protected resource metadata names no authorization server", nil)
	case prm != nil:
		d.resource, issuer = prm.Resource, prm.AuthorizationServers[0]
		if len(d.scopes) == 0 {
			d.scopes = prm.ScopesSupported
		}
	case challenge.metadataURL != "":
		// The server named its metadata but it could not be had: say why
		// rather than guess.
		return nil, discoveryError("the MCP server's protected resource metadata could not be read", lastErr)
	default:
		u, _ := url.Parse(serverURL) // checked by the caller
		issuer = (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
	}
	if err := f.checkURL("authorization server", issuer); err != nil {
		return nil, discoveryError("the MCP server names an authorization server svc may not use", err)
	}
	meta, err := f.authServerMeta(ctx, issuer)
	if err != nil {
		return nil, err
	}
	d.meta = meta
	return d, nil
}

// authServerMeta fetches and checks the metadata of the authorization
// server issuer: RFC 8414, else OpenID Connect discovery. oauthex checks that
// the metadata's issuer is issuer, that PKCE is offered and that no endpoint
// has a scheme a browser would run; svc also wants S256 and https endpoints.
func (f *Flow) authServerMeta(ctx context.Context, issuer string) (*oauthex.AuthServerMeta, error) {
	var lastErr error
	for _, u := range authServerMetadataURLs(issuer) {
		meta, err := oauthex.GetAuthServerMeta(ctx, u, issuer, f.client)
		if err != nil {
			lastErr = err
			continue
		}
		if meta == nil { // a 4xx: not at this address
			continue
		}
		if !slices.Contains(meta.CodeChallengeMethodsSupported, "S256") {
			return nil, discoveryError("the authorization server does not offer PKCE with S256", nil)
		}
		if meta.AuthorizationEndpoint == "" || meta.TokenEndpoint == "" {
			return nil, discoveryError("the authorization server's metadata lacks its authorization or token endpoint", nil)
		}
		for _, e := range []struct{ name, url string }{
			{"authorization_endpoint", meta.AuthorizationEndpoint},
			{"token_endpoint", meta.TokenEndpoint},
			{"registration_endpoint", meta.RegistrationEndpoint},
		} {
			if e.url == "" {
				continue
			}
			if err := f.checkURL(e.name, e.url); err != nil {
				return nil, discoveryError("the authorization server's "+e.name+" is not one svc may use", err)
			}
		}
		return meta, nil
	}
	return nil, discoveryError("no authorization server metadata was found for "+issuer, lastErr)
}

// challenge is what an MCP server's 401 says about its authorization.
type challenge struct {
	metadataURL string
	scopes      []string
}

// maxProbeDrain bounds what is read of the probe's answer (to reuse the
// connection); the rest is dropped.
const maxProbeDrain = 4 << 10

// probe asks the MCP server, without credentials, for its challenge. Any
// failure yields no challenge: the well-known addresses are tried next.
func (f *Flow) probe(ctx context.Context, serverURL string) challenge {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, serverURL, nil)
	if err != nil {
		return challenge{}
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := f.client.Do(req)
	if err != nil {
		return challenge{}
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, maxProbeDrain))
	if res.StatusCode != http.StatusUnauthorized {
		return challenge{}
	}
	cs, err := oauthex.ParseWWWAuthenticate(res.Header.Values("WWW-Authenticate"))
	if err != nil {
		return challenge{}
	}
	var c challenge
	for _, ch := range cs {
		if ch.Scheme != "bearer" {
			continue
		}
		if u := ch.Params["resource_metadata"]; u != "" && c.metadataURL == "" {
			c.metadataURL = u
		}
		if s := ch.Params["scope"]; s != "" && c.scopes == nil {
			c.scopes = strings.Fields(s)
		}
	}
	return c
}

// metadataCandidate is an address of protected resource metadata and the
// resource identifier the metadata must name (RFC 9728 section 3.3).
type metadataCandidate struct{ url, resource string }

// resourceMetadataURLs lists where a server's protected resource metadata
// may be, in the MCP specification's order: the challenge's, the well-known
// URI with the server's path, the well-known URI at the root.
func resourceMetadataURLs(fromChallenge, serverURL string) []metadataCandidate {
	var out []metadataCandidate
	if fromChallenge != "" {
		out = append(out, metadataCandidate{fromChallenge, serverURL})
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		return out
	}
	root := url.URL{Scheme: u.Scheme, Host: u.Host}
	if p := strings.Trim(u.Path, "/"); p != "" {
		withPath := root
		withPath.Path = "/.well-known/oauth-protected-resource/" + p
		out = append(out, metadataCandidate{withPath.String(), serverURL})
	}
	atRoot := root
	atRoot.Path = "/.well-known/oauth-protected-resource"
	return append(out, metadataCandidate{atRoot.String(), root.String()})
}

// authServerMetadataURLs lists where an issuer's metadata may be, in the
// MCP specification's order: RFC 8414 and OpenID Connect discovery, with
// path insertion for an issuer with a path and OIDC's path appending last.
func authServerMetadataURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	root := url.URL{Scheme: u.Scheme, Host: u.Host}
	p := strings.Trim(u.Path, "/")
	if p == "" {
		a, o := root, root
		a.Path, o.Path = "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"
		return []string{a.String(), o.String()}
	}
	a, o, appended := root, root, root
	a.Path = "/.well-known/oauth-authorization-server/" + p
	o.Path = "/.well-known/openid-configuration/" + p
	appended.Path = "/" + p + "/.well-known/openid-configuration"
	return []string{a.String(), o.String(), appended.String()}
}

// checkURL refuses a URL svc would send a request or a browser to unless it
// is absolute https without credentials in it (or http to a loopback
// address, with AllowHTTPLoopback).
func (f *Flow) checkURL(name, raw string) error {
	return checkURL(name, raw, f.allowHTTPLoopback)
}

// checkURL is Flow.checkURL with the loopback exception given.
func checkURL(name, raw string, allowHTTPLoopback bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%s: not a URL", name)
	}
	if u.Host == "" || u.User != nil || u.Fragment != "" {
		return fmt.Errorf("%s %q: must be an absolute URL without credentials or fragment", name, raw)
	}
	switch {
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && allowHTTPLoopback && egress.IsLoopbackHost(u.Hostname()):
		return nil
	}
	return fmt.Errorf("%s %q: must use https", name, raw)
}

// discoveryError is the error of a failed discovery: the upstream's fault,
// so a 502 that says what was missing; cause is logged, never sent.
func discoveryError(msg string, cause error) error {
	if cause == nil {
		cause = errors.New(msg)
	}
	return apierr.Wrap(apierr.UpstreamError, "mcp_oauth_discovery_failed", msg, cause)
}
