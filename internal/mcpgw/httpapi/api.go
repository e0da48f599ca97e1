// Package httpapi is the tool gateway's HTTP surface on the proxy port:
// `/{server_id}/mcp/` (a full MCP streamable-HTTP endpoint per registered
// server, made with the MCP Go SDK's server and relayed to the upstream
// session), `/mcp/` (every server the caller may use as one MCP server,
// tools named `<server_id>__<tool>`) and `POST /mcp/v1/{server_id}/tools/call`
// (one call as plain JSON or JSON-RPC, for callers without an MCP client).
//
// Every HTTP request is authenticated (401 before the SDK sees it), a
// server not on the public internet is reachable only from
// SVC_MCP_TRUSTED_CIDRS, and a tools/call is admitted under the caller's
// limits before the SDK runs it, so a refusal has its HTTP status (402,
// 429). The calls themselves go through mcpgw.Gateway.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/clientip"
	"github.com/svc-gateway/svc/internal/mcpgw"
)

// Sessions gives the upstream session of a server, for the methods relayed
// as they are (resources, prompts, completion), with the scrubber of the
// credentials it sends (nil: none), which answers pass through.
type Sessions interface {
	Session(ctx context.Context, s *mcpgw.Server) (*mcp.ClientSession, *apierr.Scrubber, error)
}

// Deps are what the surface needs.
type Deps struct {
	Gateway  *mcpgw.Gateway
	Sessions Sessions
	Auth     auth.Authenticator
	// TrustedCIDRs may reach servers not on the public internet.
	TrustedCIDRs []netip.Prefix
	// ClientAddr is the address a request came from (behind trusted
	// proxies, from X-Forwarded-For); default the TCP peer.
	ClientAddr func(*http.Request) netip.Addr
	// MaxBodyBytes bounds one request (default 4 MiB + 64 KiB).
	MaxBodyBytes int64
	// SessionIdle closes a session that made no request for this long
	// (default DefaultSessionIdle): a client that went away without
	// DELETE leaves nothing behind.
	SessionIdle time.Duration
	// MaxSessions is how many sessions one caller may hold open (default
	// DefaultMaxSessions); an initialize past it is refused (429).
	MaxSessions int
	Logger      *slog.Logger
	Version     string
}

// API serves the MCP endpoints.
type API struct {
	d         Deps
	streaming *mcp.StreamableHTTPHandler
	sdkLog    *slog.Logger

	mu    sync.RWMutex
	views map[viewKey]*view // live per-caller servers, for list_changed

	// live maps the id of each open session to its *liveSession, until
	// the SDK closes it (sessions.go); counts are the open sessions per
	// caller.
	live    sync.Map
	countMu sync.Mutex
	counts  map[string]int // open sessions per caller
	pending map[string]int // requests that may open one, per caller

	// life bounds the refreshes no request waits for; Close ends it.
	life context.Context
	stop context.CancelFunc
}

// New returns the surface.
func New(d Deps) *API {
	if d.ClientAddr == nil {
		d.ClientAddr = clientip.Resolver{}.Addr
	}
	if d.MaxBodyBytes <= 0 {
		d.MaxBodyBytes = mcpgw.MaxArgumentsBytes + 64<<10
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.SessionIdle <= 0 {
		d.SessionIdle = DefaultSessionIdle
	}
	if d.MaxSessions <= 0 {
		d.MaxSessions = DefaultMaxSessions
	}
	a := &API{d: d, views: make(map[viewKey]*view), counts: make(map[string]int), pending: make(map[string]int), sdkLog: slog.New(quiet{d.Logger.Handler()})}
	a.life, a.stop = context.WithCancel(context.Background())
	go a.reapIdle()
	a.streaming = mcp.NewStreamableHTTPHandler(a.server, &mcp.StreamableHTTPOptions{
		Logger:                     a.sdkLog,
		MaxRequestBodyBytes:        d.MaxBodyBytes,
		DisableLocalhostProtection: true, // svc authenticates every request itself
	})
	return a
}

// Register adds the routes to the proxy's mux.
func (a *API) Register(mux *http.ServeMux) {
	mcpH := a.authenticate(a.streaming, true)
	mux.Handle("/{server_id}/mcp", mcpH)
	mux.Handle("/{server_id}/mcp/{$}", mcpH)
	mux.Handle("/mcp", mcpH)
	mux.Handle("/mcp/{$}", mcpH)
	mux.Handle("POST /mcp/v1/{server_id}/tools/call", a.authenticate(http.HandlerFunc(a.serveV1), false))
}

// ToolsChanged refreshes the tool lists of the live sessions of a server
// (its own endpoint's and the aggregate's) before it returns: the SDK
// sends each of them notifications/tools/list_changed. Call it when the
// server's tools or registration changed.
func (a *API) ToolsChanged(serverID string) {
	for _, v := range a.changed(showing(serverID)) {
		v.refreshStale(a.life)
	}
}

// Close stops the background refreshes (the upstream sessions they would
// open would outlive the pool); the endpoints keep answering.
func (a *API) Close() { a.stop() }

// ServerChanged is ToolsChanged without waiting: the views are marked
// stale at once and refreshed in the background. It never blocks (the
// registry's change hooks call it).
func (a *API) ServerChanged(serverID string) {
	a.refreshLater(a.changed(showing(serverID)))
}

// GrantsChanged marks stale the views of caller (identity.Principal.Caller)
// that show serverID, and refreshes those with sessions in the background;
// an empty caller or serverID matches every one (the grants were all
// dropped). It never blocks (the grants' change hook calls it).
func (a *API) GrantsChanged(caller, serverID string) {
	a.refreshLater(a.changed(func(k viewKey) bool {
		return (caller == "" || k.caller == caller) && (serverID == "" || showing(serverID)(k))
	}))
}

// showing selects the views that show serverID: its own and the aggregate.
func showing(serverID string) func(viewKey) bool {
	return func(k viewKey) bool { return k.server == serverID || k.server == "" }
}

func (a *API) refreshLater(views []*view) {
	for _, v := range views {
		v.kick()
	}
}

// clientAddr is the caller's address, for the trusted-network check.

// reachable says whether the caller may reach s from where it calls.
func (a *API) reachable(r *http.Request, s *mcpgw.Server) error {
	if s.Public() || a.trusted(r) {
		return nil
	}
	return notTrusted(s.ID)
}

// trusted says whether the request comes from SVC_MCP_TRUSTED_CIDRS.
func (a *API) trusted(r *http.Request) bool {
	addr := a.d.ClientAddr(r)
	for _, p := range a.d.TrustedCIDRs {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

func notTrusted(id string) error {
	return apierr.Newf(apierr.Forbidden, "network_not_trusted", "MCP server %q is reachable only from approved network segments", id)
}
