package wire

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/auditchain"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/clientip"
	"github.com/svc-gateway/svc/internal/compliance"
	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/egress"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/mcpgw"
	"github.com/svc-gateway/svc/internal/mcpgw/access"
	"github.com/svc-gateway/svc/internal/mcpgw/catalog"
	mcphttp "github.com/svc-gateway/svc/internal/mcpgw/httpapi"
	"github.com/svc-gateway/svc/internal/mcpgw/oauth"
	"github.com/svc-gateway/svc/internal/mcpgw/registry"
	"github.com/svc-gateway/svc/internal/mcpgw/toolcache"
	"github.com/svc-gateway/svc/internal/mcpgw/upstream"
	"github.com/svc-gateway/svc/internal/mcpgw/usage"
	"github.com/svc-gateway/svc/internal/secret"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// toolGateway is the tool gateway (MCP) of a proxy process: the registry,
// the upstream sessions, the gateway, its endpoints and admin routes.
type toolGateway struct {
	reg     *registry.Registry
	pool    *upstream.Pool
	api     *mcphttp.API
	admin   *mcphttp.Admin
	catalog *catalog.Catalog
	access  *access.Service
	oauth   *oauth.Flow
	usage   *usage.API
	guard   func(http.Handler) http.Handler // the admin key only
	authed  func(http.Handler) http.Handler // any valid key
}

// mcpParts are the shared parts the tool gateway is built on.
type mcpParts struct {
	s      *System
	cfg    config.MCPSettings
	db     *sqlstore.DB
	kv     store.KV
	sealer *secret.Sealer
	egress egress.Policy
	audit  mcpChain
	authn  auth.Chain // the admin key, then virtual keys
}

func (s *System) mcpParts(keys *auth.Keys) (mcpParts, error) {
	db, kv, err := s.stores()
	if err != nil {
		return mcpParts{}, err
	}
	master, err := s.MasterKey()
	if err != nil {
		return mcpParts{}, err
	}
	admin, err := s.AdminKey()
	if err != nil {
		return mcpParts{}, err
	}
	chain, err := s.Chain()
	if err != nil {
		return mcpParts{}, err
	}
	si, err := s.SignIn()
	if err != nil {
		return mcpParts{}, err
	}
	cfg := s.Config.MCP
	return mcpParts{s: s, cfg: cfg, db: db, kv: kv, sealer: secret.NewSealer(master),
		egress: egress.Policy{AllowPrivate: cfg.AllowPrivate}, audit: mcpChain{auditchain.Recorder{Chain: chain, Log: s.Log}},
		authn: append(auth.Chain{auth.AdminKey(admin), keys}, si.authenticators()...)}, nil
}

// newToolGateway builds the tool gateway over the process's shared parts;
// its background work (registry follow, grants follow, catalog refresh)
// is registered with the System.
func newToolGateway(s *System, keys *auth.Keys, lim mcpLimits, scan mcpScanner, rec mcpRecorder) (*toolGateway, error) {
	p, err := s.mcpParts(keys)
	if err != nil {
		return nil, err
	}
	reg := registry.New(registry.Options{Store: registry.NewSQLStore(p.db), Sealer: p.sealer, Bus: p.kv,
		Egress: p.egress, Validate: mcpgw.ValidateOptions{StdioEnabled: p.cfg.StdioEnabled}, Log: s.Log})
	if err := reg.Load(s.ctx); err != nil {
		return nil, err
	}
	t := &toolGateway{reg: reg}
	host := openapiHost{client: p.egress.Client(p.cfg.Timeout), maxBytes: p.cfg.MaxResultBytes, log: s.Log}
	if err := t.upstreams(p, host); err != nil {
		return nil, err
	}
	requests := access.NewSQLStore(p.db, nil)
	grants := access.NewGrants(requests, p.kv, 0, s.Log)
	t.access = access.NewService(access.Config{Store: requests, Grants: grants, Servers: reg, Log: s.Log,
		OnDecision: p.audit.decision})
	var tc *toolcache.Cache
	if p.cfg.CacheEnabled {
		tc = toolcache.New(p.kv, toolcache.Options{DefaultTTL: p.cfg.CacheTTL, Log: s.Log})
		s.runs("mcp-cache-stats", tc.Run)
	}
	gw := t.gateway(p, grants, tc, lim, scan, rec)
	if err := t.surfaces(p, gw, host, tc); err != nil {
		return nil, err
	}
	// A registration changed (here or on another process) or a requester's
	// grants did: the live MCP sessions' tool lists are refreshed in the
	// background (calls do not refresh them).
	reg.OnChange(func(id string) {
		t.pool.Forget(id)
		t.api.ServerChanged(id)
		go t.refreshCatalog(id)
	})
	grants.OnChange(t.api.GrantsChanged)
	s.onClose(t.api.Close) // before the pool's: closers run last-built first
	s.runs("mcp-registry", reg.Run)
	s.runs("mcp-grants", grants.Run)
	s.runs("mcp-catalog", func(ctx context.Context) error {
		if err := t.catalog.RefreshAll(ctx); err != nil {
			s.Log.Warn("mcp: the first catalog refresh failed", "err", err)
		}
		<-ctx.Done()
		return nil
	})
	return t, nil
}

// upstreams builds the OAuth flow and the pool of upstream sessions.
func (t *toolGateway) upstreams(p mcpParts, host openapiHost) error {
	s := p.s
	var err error
	t.oauth, err = oauth.New(oauth.Config{Servers: oauthServers{t.reg}, Store: oauth.NewSQLStore(p.db),
		States: oauth.NewKVStates(p.kv), Sealer: p.sealer, Client: p.egress.Client(30 * time.Second),
		RedirectURL: oauthRedirectURL(p.cfg.OAuthRedirectURL, s.Config.Port(config.Proxy)), ClientName: "svc",
		AllowHTTPLoopback: p.cfg.AllowPrivate, Logger: s.Log, OnAuthorized: t.authorized})
	if err != nil {
		return fmt.Errorf("SVC_MCP_OAUTH_REDIRECT_URL: %w", err)
	}
	t.pool = upstream.New(upstream.Options{Client: p.egress.Client(0), MaxResultBytes: p.cfg.MaxResultBytes,
		Credentials: t.reg, Tokens: oauthTokens{t.oauth}, Hosted: host,
		Logger: s.Log, Version: buildVersion(), OnToolsChanged: t.toolsChanged})
	s.onClose(func() { t.pool.Close() })
	return nil
}

// gateway is the call path over the registry, the pool and the adapters.
func (t *toolGateway) gateway(p mcpParts, grants *access.Grants, tc *toolcache.Cache, lim mcpLimits, scan mcpScanner, rec mcpRecorder) *mcpgw.Gateway {
	m, cfg := p.s.Metrics(), p.cfg
	gw := &mcpgw.Gateway{Servers: t.reg, Upstream: t.pool, Grants: grants, Limits: lim, Scanner: scan, Recorder: rec,
		Options: mcpgw.Options{LogArguments: cfg.LogArguments, CacheEnabled: cfg.CacheEnabled, CacheTTL: cfg.CacheTTL,
			Timeout: cfg.Timeout, ComplianceFailOpen: p.s.Config.ComplianceFailOpen, Logger: p.s.Log,
			Count: func(server, tool string) { m.MCPCalls.WithLabelValues(server, tool).Inc() }}}
	if tc != nil {
		gw.Cache = tc
	}
	return gw
}

// surfaces builds the HTTP sides: the MCP endpoints, the admin routes, the
// catalog, usage and logs.
func (t *toolGateway) surfaces(p mcpParts, gw *mcpgw.Gateway, host openapiHost, tc *toolcache.Cache) error {
	s := p.s
	t.api = mcphttp.New(mcphttp.Deps{Gateway: gw, Sessions: t.pool, Auth: p.authn, TrustedCIDRs: p.cfg.TrustedCIDRs,
		ClientAddr: clientip.Resolver{Proxies: s.Config.TrustedProxies}.Addr, Logger: s.Log, Version: buildVersion()})
	t.catalog = catalog.New(t.reg, t.pool, catalog.Options{Log: s.Log, Visible: catalogFilter(gw)})
	t.admin = &mcphttp.Admin{Registrations: t.reg, Generator: host, Audit: p.audit.Record}
	if tc != nil {
		t.admin.Cache = tc
	}
	reader, err := s.LogReader()
	if err != nil {
		return err
	}
	t.usage = usage.New(reader, usage.Options{Log: s.Log})
	t.guard = func(h http.Handler) http.Handler { return auth.Guard(p.authn, h) }
	t.authed = func(h http.Handler) http.Handler { return authenticated(p.authn, h) }
	return nil
}

// toolsChanged follows an upstream's notifications/tools/list_changed.
func (t *toolGateway) toolsChanged(id string) {
	t.api.ToolsChanged(id)
	t.refreshCatalog(id)
}

// refreshCatalog lists a server's tools again for the catalog and search.
func (t *toolGateway) refreshCatalog(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = t.catalog.Refresh(ctx, id)
}

// authorized follows an OAuth authorization of this process: the server's
// session reopens with the new token and its tools are listed again.
func (t *toolGateway) authorized(id string) {
	t.pool.Forget(id)
	t.toolsChanged(id)
}

// routes adds the tool gateway's routes (the proxy port's, and the ones
// the spec's ingress sends to management, served here too so one proxy is
// complete) to mux.
func (t *toolGateway) routes(mux *http.ServeMux) {
	t.api.Register(mux)
	t.admin.Register(mux, t.guard)
	mux.Handle("GET /api/mcp/catalog", t.authed(t.catalog.CatalogHandler()))
	mux.Handle("GET /api/mcp/tools/index", t.authed(t.catalog.IndexHandler()))
	mux.Handle("GET /api/mcp/tools/search", t.authed(t.catalog.SearchHandler()))
	h := t.authed(t.access.Handler())
	mux.Handle("/api/mcp/catalog/requests", h)
	mux.Handle("/api/mcp/catalog/requests/", h)
	mux.Handle("GET /api/mcp/usage", t.authed(t.usage.UsageHandler()))
	mux.Handle("GET /api/mcp/logs", t.authed(t.usage.LogsHandler()))
	mux.Handle("GET /api/mcp/auth/initiate", t.guard(http.HandlerFunc(t.oauth.HandleInitiate)))
	mux.Handle("GET /api/mcp/auth/tokens", t.guard(http.HandlerFunc(t.oauth.HandleTokens)))
	mux.Handle("DELETE /api/mcp/auth/tokens/{server_id}", t.guard(http.HandlerFunc(t.revokeOAuth)))
	// The admin's browser reaches the callback from the authorization
	// server with no svc credential: its single-use state authorizes it.
	mux.HandleFunc("GET /api/mcp/auth/callback", t.oauth.HandleCallback)
}

// revokeOAuth forgets a server's tokens and its session (which holds none,
// but would go on failing with the old authorization's errors).
func (t *toolGateway) revokeOAuth(w http.ResponseWriter, r *http.Request) {
	t.oauth.HandleRevoke(w, r)
	t.pool.Forget(r.PathValue("server_id"))
}

// withTools serves the tool gateway's routes beside the proxy's; strip
// removes identity headers an untrusted peer sent, before either sees them.
type withTools struct {
	proxy interface{ Handler() http.Handler }
	tools *toolGateway
	strip func(http.Handler) http.Handler
}

func (w withTools) Handler() http.Handler {
	mux := http.NewServeMux()
	w.tools.routes(mux)
	mux.Handle("/", w.proxy.Handler())
	return w.strip(mux)
}

// catalogFilter shows a caller the tools tools/list would show it; the
// admin key sees every tool.
func catalogFilter(gw *mcpgw.Gateway) func(*http.Request) catalog.Filter {
	return func(r *http.Request) catalog.Filter {
		p := identity.From(r.Context())
		if p.IsAdmin() {
			return nil
		}
		ctx := r.Context()
		return func(serverID, tool string) bool { return p != nil && gw.Shows(ctx, p, serverID, tool) }
	}
}

// defaultToolFamily is the compliance family a tool call is scanned under
// when its caller has no preset.
func defaultToolFamily() *compliance.Policy { return compliance.Policies[compliance.DefaultPolicy] }

// authenticated serves h to any caller the chain accepts (a virtual key or
// the admin key), with the principal on the request: 401 otherwise.
func authenticated(a auth.Authenticator, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := a.Authenticate(r.Context(), auth.FromRequest(r, true))
		if err != nil || p == nil {
			apierr.Write(w, &apierr.Error{Kind: apierr.Unauthenticated, Code: "invalid_api_key",
				Message: "a valid key is required: Authorization: Bearer <key>"})
			return
		}
		h.ServeHTTP(w, r.WithContext(identity.With(r.Context(), p)))
	})
}
