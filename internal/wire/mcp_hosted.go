package wire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/auditchain"
	"github.com/svc-gateway/svc/internal/mcpgw"
	"github.com/svc-gateway/svc/internal/mcpgw/access"
	"github.com/svc-gateway/svc/internal/mcpgw/oauth"
	"github.com/svc-gateway/svc/internal/mcpgw/openapi"
	"github.com/svc-gateway/svc/internal/mcpgw/registry"
)

// openapiHost hosts generated servers (transport "openapi") in process and
// checks documents for POST /api/mcp/generate: upstream.Hosted and
// httpapi.Generator over mcpgw/openapi.
type openapiHost struct {
	client   *http.Client // the egress policy's: checked at dial, no redirects
	maxBytes int64
	log      *slog.Logger
}

// Open parses the registration's document and serves its tools.
func (h openapiHost) Open(_ context.Context, s *mcpgw.Server, authorize func(*http.Request) error) (*mcp.Server, error) {
	doc, err := openapi.Parse([]byte(s.OpenAPI))
	if err != nil {
		return nil, err
	}
	return openapi.NewServer(doc, openapi.Options{Name: s.ID, BaseURL: s.BaseURL, IncludeMethods: s.IncludeMethods,
		Client: h.client, Authorize: authorize, MaxResponseBytes: h.maxBytes, Logger: h.log})
}

// Tools checks a document and lists the tools it yields; a bad document
// or method list is a 400 naming the problem.
func (openapiHost) Tools(spec []byte, include []string) ([]*mcp.Tool, error) {
	doc, err := openapi.Parse(spec)
	var se *openapi.SpecError
	switch {
	case errors.As(err, &se):
		return nil, apierr.BadParam("spec", "%s", se.Error())
	case err != nil:
		return nil, apierr.Wrap(apierr.InvalidRequest, "invalid_spec", "the OpenAPI document could not be read", err)
	}
	tools, err := doc.Tools(include)
	switch {
	case errors.As(err, &se):
		return nil, apierr.BadParam("spec", "%s", se.Error())
	case errors.Is(err, openapi.ErrUnknownMethod), errors.Is(err, openapi.ErrNoOperations):
		return nil, apierr.BadParam("include_methods", "%s", err.Error())
	case err != nil:
		return nil, apierr.Wrap(apierr.InvalidRequest, "invalid_spec", "the OpenAPI document's tools could not be built", err)
	}
	return tools, nil
}

// oauthServers is the registry as the OAuth flow sees it.
type oauthServers struct{ reg *registry.Registry }

// OAuthServer gives the flow a registration with auth_type oauth; its
// auth_token, when set, is the client secret of its oauth_client_id.
func (o oauthServers) OAuthServer(ctx context.Context, id string) (oauth.Server, error) {
	s, err := o.reg.Server(ctx, id)
	if err != nil {
		return oauth.Server{}, err
	}
	if s.AuthType != mcpgw.AuthOAuth {
		return oauth.Server{}, apierr.Newf(apierr.InvalidRequest, "not_oauth_server",
			"the MCP server %q has auth_type %q; set auth_type \"oauth\" to authorize it", id, s.AuthType)
	}
	out := oauth.Server{ID: s.ID, URL: s.BaseURL, ClientID: s.OAuthClientID, Scopes: s.OAuthScopes}
	if s.OAuthClientID != "" {
		secret, _, err := o.reg.Credential(ctx, id)
		if err != nil {
			return oauth.Server{}, fmt.Errorf("reading the client secret of %q: %w", id, err)
		}
		out.ClientSecret = secret
	}
	return out, nil
}

// oauthTokens gives the upstream pool the flow's tokens.
type oauthTokens struct{ flow *oauth.Flow }

func (t oauthTokens) AccessToken(ctx context.Context, id string) (string, error) {
	return t.flow.Token(ctx, id)
}

// oauthRedirectURL is the configured callback, or the proxy's on loopback.
func oauthRedirectURL(configured string, proxyPort int) string {
	if configured != "" {
		return configured
	}
	return "http://127.0.0.1:" + strconv.Itoa(proxyPort) + "/api/mcp/auth/callback"
}

// mcpChain appends the tool gateway's admin actions and access decisions
// to the tamper-evident audit chain (auditchain.Recorder).
type mcpChain struct{ auditchain.Recorder }

// decision records an access request's approval, denial or revocation.
func (c mcpChain) decision(ctx context.Context, r access.Request) {
	actor := r.DecidedBy
	if r.Status == access.StatusRevoked {
		actor = r.RevokedBy
	}
	c.Append(ctx, auditchain.Event{Type: "mcp.access." + string(r.Status), Actor: actor, Subject: r.ID,
		Details: map[string]any{"server_id": r.ServerID, "requester": r.UserID, "tools": r.ToolsRequested, "reason": r.Reason}})
}
