package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/mcpgw"
)

// aggregateSep joins a server id and a tool name in the aggregate server.
const aggregateSep = "__"

// viewKey names one caller's view of one server ("" for the aggregate).
type viewKey struct {
	server string
	caller string
	// trusted: the caller's network may reach servers not on the public
	// internet (the aggregate shows them only then).
	trusted bool
}

// view is the MCP server one caller's sessions of one endpoint talk to:
// the tools the caller may see, under the names the endpoint shows. The SDK
// serves tools/list from it and sends notifications/tools/list_changed
// when refresh changes it; tools/call and the relayed methods go through
// its middleware.
//
// A view is refreshed when it is made, for a request without a session
// (initialize), for every tools/list, and after a change that may alter
// it (a registration, an upstream's tool list, a grant): the change marks
// it stale and refreshes it in the background. A tools/call never waits
// for a refresh: the gateway checks the call itself.
type view struct {
	api       *API
	key       viewKey
	principal *identity.Principal
	srv       *mcp.Server
	born      time.Time

	// stale: a change may have altered what the view shows since its last
	// refresh began; pending: a background refresh is queued or running.
	stale, pending atomic.Bool
	// refreshing serialises refreshes; begun counts those begun, so a
	// caller that waited for one begun after it asked needs no other.
	refreshing sync.Mutex
	begun      atomic.Uint64

	mu    sync.Mutex
	names map[string]target // shown name → server and tool
	shown map[string]string // shown name → the tool's JSON, to add only what changed
}

type target struct {
	server string
	tool   string
}

// server is the SDK's getServer, called for every HTTP request: the
// caller's view of the endpoint, made on the first session and shared by
// the caller's later ones. It refreshes the view only for a new view or a
// request that opens a session; a stale view is refreshed in the
// background.
func (a *API) server(r *http.Request) *mcp.Server {
	p := identity.From(r.Context())
	if p == nil {
		return nil
	}
	st := stateOf(r)
	key := viewKey{server: r.PathValue("server_id"), caller: st.callerOf(p), trusted: st.trusted(a, r)}
	v, made := a.view(key, p)
	switch {
	case made || (r.Method == http.MethodPost && r.Header.Get(sessionHeader) == "" && !st.refreshed):
		st.refreshed = true // the SDK asks twice for a request that opens a session
		v.refreshNow(r.Context())
	case v.stale.Load():
		v.kick()
	}
	return v.srv
}

// sessionHeader is the streamable-HTTP transport's session header.
const sessionHeader = "Mcp-Session-Id"

// view returns the caller's view of key, made (and reported so) when new.
func (a *API) view(key viewKey, p *identity.Principal) (*view, bool) {
	a.mu.RLock()
	v := a.views[key]
	a.mu.RUnlock()
	if v != nil {
		return v, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if v = a.views[key]; v != nil {
		return v, false
	}
	v = a.newView(key, p)
	a.views[key] = v
	return v, true
}

func (a *API) newView(key viewKey, p *identity.Principal) *view {
	v := &view{api: a, key: key, principal: p, born: time.Now(), names: make(map[string]target), shown: make(map[string]string)}
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	opts := &mcp.ServerOptions{Logger: a.sdkLog, Capabilities: caps}
	opts.InitializedHandler = func(_ context.Context, r *mcp.InitializedRequest) { a.handshakeDone(v, r.Session) }
	if key.server != "" {
		// One server's endpoint relays its resources and prompts.
		caps.Resources, caps.Prompts = &mcp.ResourceCapabilities{}, &mcp.PromptCapabilities{}
		caps.Completions = &mcp.CompletionCapabilities{}
		opts.CompletionHandler = v.complete
	}
	name := "svc"
	if key.server != "" {
		name = "svc/" + key.server
	}
	v.srv = mcp.NewServer(&mcp.Implementation{Name: name, Version: a.d.Version}, opts)
	v.srv.AddReceivingMiddleware(v.middleware)
	return v
}

// viewGrace keeps a view without sessions for a while: the request that
// made it may not have connected its session yet.
const viewGrace = time.Minute

// changed marks stale the views match selects and returns those that still
// have sessions; views without sessions (past viewGrace) are dropped.
func (a *API) changed(match func(viewKey) bool) []*view {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []*view
	for k, v := range a.views {
		if !match(k) {
			continue
		}
		v.stale.Store(true)
		live := false
		for range v.srv.Sessions() {
			live = true
			break
		}
		if !live {
			if time.Since(v.born) > viewGrace {
				delete(a.views, k)
			}
			continue
		}
		out = append(out, v)
	}
	return out
}

// refreshNow refreshes the view unless a refresh begun since the call
// (another caller's) has just completed.
func (v *view) refreshNow(ctx context.Context) {
	asked := v.begun.Load()
	v.refreshing.Lock()
	defer v.refreshing.Unlock()
	if v.begun.Load() > asked {
		return // one begun after the call has completed
	}
	v.begin()
	v.refresh(ctx)
}

// refreshStale refreshes the view if it is stale.
func (v *view) refreshStale(ctx context.Context) {
	if !v.stale.Load() {
		return
	}
	v.refreshing.Lock()
	defer v.refreshing.Unlock()
	if !v.stale.Load() {
		return
	}
	v.begin()
	v.refresh(ctx)
}

// begin starts a refresh (refreshing held): a change from now on marks
// the view stale again.
func (v *view) begin() {
	v.stale.Store(false)
	v.begun.Add(1)
}

// kick refreshes a stale view in the background, one goroutine at a time;
// a change during that refresh is followed by another.
func (v *view) kick() {
	if v.api.life.Err() != nil || !v.pending.CompareAndSwap(false, true) {
		return
	}
	go func() {
		for {
			ctx, cancel := context.WithTimeout(v.api.life, backgroundRefresh)
			v.refreshStale(ctx)
			cancel()
			v.pending.Store(false)
			if !v.stale.Load() || v.api.life.Err() != nil || !v.pending.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}

// backgroundRefresh bounds one refresh no request waits for.
const backgroundRefresh = time.Minute

// refresh sets the view's tools to what the caller may see now. A server
// whose tools cannot be listed keeps the ones it showed (a failing
// upstream does not empty the sessions' lists; its calls fail on their
// own); a refresh cut short by ctx changes nothing and leaves the view
// stale.
func (v *view) refresh(ctx context.Context) {
	want := make(map[string]*mcp.Tool)
	targets := make(map[string]target)
	failed := make(map[string]bool)
	for _, s := range v.servers(ctx) {
		tools, err := v.api.d.Gateway.Tools(ctx, v.principal, s)
		if err != nil {
			if ctx.Err() != nil {
				v.stale.Store(true)
				return
			}
			v.api.d.Logger.Warn("mcp: listing tools failed", "server", s.ID, "err", err)
			failed[s.ID] = true
			continue
		}
		for _, t := range tools {
			name := t.Name
			if v.key.server == "" {
				name = s.ID + aggregateSep + t.Name
			}
			c := *t
			c.Name = name
			want[name] = &c
			targets[name] = target{server: s.ID, tool: t.Name}
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	var gone []string
	for name, t := range v.names {
		if _, ok := want[name]; !ok {
			if failed[t.server] {
				targets[name] = t // kept as it was shown
				continue
			}
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		v.srv.RemoveTools(gone...)
		for _, name := range gone {
			delete(v.shown, name)
		}
	}
	for name, t := range want {
		b, _ := json.Marshal(t)
		if v.shown[name] == string(b) {
			continue // unchanged: no notice to the sessions
		}
		if err := addTool(v.srv, t); err != nil {
			v.api.d.Logger.Warn("mcp: a tool svc cannot serve", "tool", name, "err", err)
			delete(targets, name)
			continue
		}
		v.shown[name] = string(b)
	}
	v.names = targets
}

// servers are the registrations the view shows: its one server, or (the
// aggregate) every server the caller's network may reach.
func (v *view) servers(ctx context.Context) []*mcpgw.Server {
	if v.key.server != "" {
		s, err := v.api.d.Gateway.Servers.Server(ctx, v.key.server)
		if err != nil {
			return nil
		}
		return []*mcpgw.Server{s}
	}
	all, err := v.api.d.Gateway.Servers.Servers(ctx)
	if err != nil {
		v.api.d.Logger.Warn("mcp: listing servers failed", "err", err)
		return nil
	}
	if v.key.trusted {
		return all
	}
	out := make([]*mcpgw.Server, 0, len(all))
	for _, s := range all {
		if s.Public() {
			out = append(out, s)
		}
	}
	return out
}

// addTool adds t, refusing (instead of the SDK's panic) a schema that is
// not an object.
func addTool(srv *mcp.Server, t *mcp.Tool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	srv.AddTool(t, unreachable)
	return nil
}

// unreachable is the tools' handler: the middleware answers every
// tools/call first.
func unreachable(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return nil, rpcError(apierr.New(apierr.Internal, "", "tool call bypassed the gateway"))
}

// lookup maps a shown tool name to its server and tool.
func (v *view) lookup(name string) (target, bool) {
	v.mu.Lock()
	t, ok := v.names[name]
	v.mu.Unlock()
	if ok {
		return t, true
	}
	if v.key.server != "" {
		return target{server: v.key.server, tool: name}, true
	}
	server, tool, found := strings.Cut(name, aggregateSep)
	return target{server: server, tool: tool}, found
}
