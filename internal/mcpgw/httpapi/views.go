package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

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
type view struct {
	api       *API
	key       viewKey
	principal *identity.Principal
	srv       *mcp.Server

	mu    sync.Mutex
	names map[string]target // shown name → server and tool
	shown map[string]string // shown name → the tool's JSON, to add only what changed
}

type target struct {
	server string
	tool   string
}

// server is the SDK's getServer: the caller's view of the endpoint, made
// on the first session and shared by the caller's later ones.
func (a *API) server(r *http.Request) *mcp.Server {
	p := identity.From(r.Context())
	if p == nil {
		return nil
	}
	key := viewKey{server: r.PathValue("server_id"), caller: p.Caller(), trusted: a.trusted(r)}
	a.mu.Lock()
	v := a.views[key]
	if v == nil {
		v = a.newView(key, p)
		a.views[key] = v
	}
	a.mu.Unlock()
	v.refresh(r.Context())
	return v.srv
}

func (a *API) newView(key viewKey, p *identity.Principal) *view {
	v := &view{api: a, key: key, principal: p, names: make(map[string]target), shown: make(map[string]string)}
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	opts := &mcp.ServerOptions{Logger: a.sdkLog, Capabilities: caps}
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

// liveViews are the views showing serverID (its own and the aggregate)
// that still have sessions; views without sessions are dropped.
func (a *API) liveViews(serverID string) []*view {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []*view
	for k, v := range a.views {
		live := false
		for range v.srv.Sessions() {
			live = true
			break
		}
		if !live {
			delete(a.views, k)
			continue
		}
		if k.server == serverID || k.server == "" {
			out = append(out, v)
		}
	}
	return out
}

// refresh sets the view's tools to what the caller may see now.
func (v *view) refresh(ctx context.Context) {
	want := make(map[string]*mcp.Tool)
	targets := make(map[string]target)
	for _, s := range v.servers(ctx) {
		tools, err := v.api.d.Gateway.Tools(ctx, v.principal, s)
		if err != nil {
			v.api.d.Logger.Warn("mcp: listing tools failed", "server", s.ID, "err", err)
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
	for name := range v.names {
		if _, ok := want[name]; !ok {
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
