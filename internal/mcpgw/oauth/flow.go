package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/secret"
	"github.com/svc-gateway/svc/internal/store"
)

// Server is what an authorization needs of an MCP server's registration.
type Server struct {
	ID  string
	URL string // the MCP endpoint, e.g. https://mcp.example.com/mcp
	// ClientID and ClientSecret, when ClientID is set, are the client
	// registered for svc at the server's authorization server; without
	// them svc registers one dynamically (RFC 7591). ClientSecret may be
	// empty (a public client).
	ClientID     string
	ClientSecret string
	// Scopes, when set, are requested instead of those the server's
	// challenge or metadata suggest.
	Scopes []string
}

// Servers looks up MCP server registrations; the tool gateway's registry
// implements it. An unknown id is an error matching ErrUnknownServer or
// store.ErrNotFound.
type Servers interface {
	OAuthServer(ctx context.Context, id string) (Server, error)
}

// Errors the Flow's methods wrap (match them with errors.Is); the methods
// return them inside *apierr.Error values that carry the status.
var (
	// ErrUnknownServer: no MCP server is registered under the id (404).
	ErrUnknownServer = errors.New("oauth: unknown MCP server")
	// ErrNoToken: the server has no authorization; an admin must authorize
	// it (403 mcp_oauth_required).
	ErrNoToken = errors.New("oauth: the MCP server has not been authorized")
	// ErrReauthorize: the server's authorization ended (expired without a
	// refresh token, or the refresh was refused); an admin must authorize it
	// again (403 mcp_oauth_required).
	ErrReauthorize = errors.New("oauth: the MCP server's authorization must be renewed")
	// ErrState: the callback's state is unknown, expired or was used (400).
	ErrState = errors.New("oauth: invalid state")
)

// Config configures a Flow. Store, States, Servers, Sealer, Client and
// RedirectURL are required.
type Config struct {
	Servers Servers
	Store   Store
	States  States
	Sealer  *secret.Sealer
	// Client makes every request to MCP and authorization servers: the
	// wiring's client that refuses private addresses. Its timeout bounds
	// each request.
	Client *http.Client
	// RedirectURL is the callback's absolute URL as the admin's browser
	// reaches it (…/api/mcp/auth/callback): https, or http to a loopback
	// address.
	RedirectURL string
	// ClientName is the client_name of dynamic registrations (default "svc").
	ClientName string
	// AllowHTTPLoopback admits http:// metadata, endpoints and MCP servers on
	// a loopback address (tests, local development). Off, every URL
	// discovery yields must be https.
	AllowHTTPLoopback bool
	// RefreshBefore is how long before its expiry a token is refreshed
	// (default 60 s).
	RefreshBefore time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logger (default slog.Default()); it never sees a token.
	Logger *slog.Logger
	// OnAuthorized, when set, is called (in its own goroutine) after a
	// callback stored a server's tokens: the catalog reads its tools.
	OnAuthorized func(serverID string)
}

// Flow runs OAuth authorizations to MCP servers and hands out their tokens.
// It is safe for concurrent use.
type Flow struct {
	servers           Servers
	store             Store
	states            States
	sealer            *secret.Sealer
	client            *http.Client
	redirectURL       string
	clientName        string
	allowHTTPLoopback bool
	refreshBefore     time.Duration
	now               func() time.Time
	log               *slog.Logger
	refreshes         singleflight.Group
	retryAt           sync.Map // server id → time.Time: no refresh before
	onAuthorized      func(serverID string)
	tokens            tokenCache
}

// stateTTL is how long an authorization may take, initiate to callback.
const stateTTL = 10 * time.Minute

// New returns a Flow, or an error naming a missing or invalid setting.
func New(cfg Config) (*Flow, error) {
	switch {
	case cfg.Servers == nil, cfg.Store == nil, cfg.States == nil, cfg.Sealer == nil, cfg.Client == nil:
		return nil, errors.New("oauth: Servers, Store, States, Sealer and Client are required")
	}
	f := &Flow{
		servers: cfg.Servers, store: cfg.Store, states: cfg.States, sealer: cfg.Sealer,
		client: cfg.Client, redirectURL: cfg.RedirectURL, clientName: cfg.ClientName,
		allowHTTPLoopback: cfg.AllowHTTPLoopback, refreshBefore: cfg.RefreshBefore,
		now: cfg.Now, log: cfg.Logger, onAuthorized: cfg.OnAuthorized,
	}
	// The redirect URL may always be http to loopback (OAuth 2.1 section 8.4.2).
	if err := checkURL("RedirectURL", cfg.RedirectURL, true); err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	if f.clientName == "" {
		f.clientName = "svc"
	}
	if f.refreshBefore <= 0 {
		f.refreshBefore = 60 * time.Second
	}
	if f.now == nil {
		f.now = time.Now
	}
	if f.log == nil {
		f.log = slog.Default()
	}
	return f, nil
}

// pending is an authorization between Initiate and Callback, kept sealed in
// States under the hash of its state.
type pending struct {
	State         string    `json:"state"`
	ServerID      string    `json:"server_id"`
	Requester     string    `json:"requester"`
	Verifier      string    `json:"verifier"`
	Issuer        string    `json:"issuer"`
	IssParameter  bool      `json:"iss_parameter"`
	TokenEndpoint string    `json:"token_endpoint"`
	Resource      string    `json:"resource"`
	Client        client    `json:"client"`
	Scopes        []string  `json:"scopes"`
	CreatedAt     time.Time `json:"created_at"`
}

// client is the OAuth client an authorization uses.
type client struct {
	ID         string `json:"id"`
	Secret     string `json:"secret"`
	Auth       string `json:"auth"` // client_secret_basic, client_secret_post, none
	Registered bool   `json:"registered"`
}

// Initiate starts the authorization of the MCP server serverID for
// requester (who will be recorded as having authorized it) and returns the
// URL to send the admin's browser to.
func (f *Flow) Initiate(ctx context.Context, serverID, requester string) (string, error) {
	srv, err := f.server(ctx, serverID)
	if err != nil {
		return "", err
	}
	if err := f.checkURL("MCP server URL", srv.URL); err != nil {
		return "", apierr.Wrap(apierr.InvalidRequest, "invalid_server_url",
			"the MCP server's URL must be an absolute https URL", err)
	}
	d, err := f.discover(ctx, srv.URL)
	if err != nil {
		return "", err
	}
	c, err := f.clientFor(ctx, srv, d)
	if err != nil {
		return "", err
	}
	scopes := srv.Scopes
	if len(scopes) == 0 {
		scopes = d.scopes
	}
	state, err := randomState()
	if err != nil {
		return "", apierr.Wrap(apierr.Internal, "internal_error", "internal error", err)
	}
	p := pending{
		State: state, ServerID: srv.ID, Requester: requester, Verifier: oauth2.GenerateVerifier(),
		Issuer: d.meta.Issuer, IssParameter: d.meta.AuthorizationResponseIssParameterSupported,
		TokenEndpoint: d.meta.TokenEndpoint, Resource: d.resource, Client: c, Scopes: scopes,
		CreatedAt: f.now(),
	}
	if err := f.keep(ctx, p); err != nil {
		return "", err
	}
	cfg := f.oauthConfig(c, d.meta.AuthorizationEndpoint, d.meta.TokenEndpoint, scopes)
	return cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(p.Verifier),
		oauth2.SetAuthURLParam("resource", d.resource)), nil
}

// server looks serverID up, mapping an unknown id to a 404.
func (f *Flow) server(ctx context.Context, serverID string) (Server, error) {
	srv, err := f.servers.OAuthServer(ctx, serverID)
	if errors.Is(err, ErrUnknownServer) || errors.Is(err, store.ErrNotFound) {
		return Server{}, &apierr.Error{Kind: apierr.NotFound, Code: "mcp_server_not_found", Param: "server_id",
			Message: fmt.Sprintf("no MCP server %q is registered", serverID), Err: fmt.Errorf("%w: %w", ErrUnknownServer, err)}
	}
	if err != nil {
		return Server{}, fmt.Errorf("oauth: look up MCP server %q: %w", serverID, err)
	}
	if srv.ID == "" {
		srv.ID = serverID
	}
	return srv, nil
}

// randomState is 32 random bytes, base64url without padding.
func randomState() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// stateKey is the States key of a state: its SHA-256, so the state itself
// is never a key in the shared store.
func stateKey(state string) string {
	h := sha256.Sum256([]byte(state))
	return hex.EncodeToString(h[:])
}

// keep seals p and puts it in States.
func (f *Flow) keep(ctx context.Context, p pending) error {
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("oauth: encode pending authorization: %w", err)
	}
	defer clear(b)
	key := stateKey(p.State)
	sealed, err := f.sealer.Seal(b, []byte("mcp-oauth-state\x00"+key))
	if err != nil {
		return fmt.Errorf("oauth: seal pending authorization: %w", err)
	}
	if err := f.states.Put(ctx, key, sealed, stateTTL); err != nil {
		return apierr.Wrap(apierr.Unavailable, "store_unavailable", "the pending authorization could not be kept", err)
	}
	return nil
}

// oauthConfig is the oauth2 configuration of client c at endpoints.
func (f *Flow) oauthConfig(c client, authURL, tokenURL string, scopes []string) *oauth2.Config {
	style := oauth2.AuthStyleInHeader
	if c.Auth != "client_secret_basic" {
		style = oauth2.AuthStyleInParams // client_secret_post, and none: the id alone in the body
	}
	return &oauth2.Config{
		ClientID: c.ID, ClientSecret: c.Secret, RedirectURL: f.redirectURL, Scopes: scopes,
		Endpoint: oauth2.Endpoint{AuthURL: authURL, TokenURL: tokenURL, AuthStyle: style},
	}
}
