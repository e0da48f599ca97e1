package httpapi_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/mcpgw"
)

// grants is a settable grants store that counts its lookups.
type grants struct {
	mu      sync.Mutex
	m       map[string]bool // caller|server|tool
	lookups atomic.Int64
}

func (g *grants) Granted(_ context.Context, p *identity.Principal, server, tool string) (bool, error) {
	g.lookups.Add(1)
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.m[p.Caller()+"|"+server+"|"+tool], nil
}

func (g *grants) grant(caller, server, tool string) {
	g.mu.Lock()
	g.m[caller+"|"+server+"|"+tool] = true
	g.mu.Unlock()
}

// withGrants gives the harness's gateway g and a server "crm" whose
// allowed tools are echo only.
func withGrants(g *grants) option {
	return func(s settings) { s.gateway.Grants = g }
}

func (h *harness) addCRM() {
	h.reg.mu.Lock()
	h.reg.m["crm"] = &mcpgw.Server{ID: "crm", BaseURL: h.up.url, Transport: mcpgw.TransportStreamable, AuthType: mcpgw.AuthNone,
		GuardrailMode: mcpgw.ModeLog, AllowedTools: []string{"echo"}}
	h.reg.mu.Unlock()
}

// listChanged connects to path with a handler counting
// notifications/tools/list_changed.
func (h *harness) listChanged(t *testing.T, path string) (*mcp.ClientSession, chan struct{}) {
	ch := make(chan struct{}, 16)
	cs := h.connect(t, path, "sk-good", &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		ch <- struct{}{}
	}})
	return cs, ch
}

func waitChanged(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Second):
		t.Fatalf("%s: no notifications/tools/list_changed within a second", what)
	}
}

// TestGrantReachesLiveSession: a grant made while a session is open shows
// in its tools/list, announced by list_changed, within a second, on the
// server's endpoint and on the aggregate.
func TestGrantReachesLiveSession(t *testing.T) {
	g := &grants{m: map[string]bool{}}
	h := newHarness(t, withGrants(g))
	h.addCRM()
	cs, changed := h.listChanged(t, "/crm/mcp/")
	agg, aggChanged := h.listChanged(t, "/mcp/")
	if got := toolNames(t, cs); !slices.Equal(got, []string{"echo"}) {
		t.Fatalf("tools/list before the grant = %v, want [echo]", got)
	}
	_ = toolNames(t, agg)
	g.grant("virtual_key:k1", "crm", "write")
	h.api.GrantsChanged("virtual_key:k1", "crm")
	waitChanged(t, changed, "server endpoint")
	if got := toolNames(t, cs); !slices.Contains(got, "write") {
		t.Errorf("tools/list after the grant = %v, want write in it", got)
	}
	waitChanged(t, aggChanged, "aggregate")
	if got := strings.Join(toolNames(t, agg), ","); !strings.Contains(got, "crm__write") {
		t.Errorf("aggregate tools/list after the grant = %s, want crm__write in it", got)
	}
}

// TestRegistrationReachesLiveSession: a registration change shows in a
// live session's tools/list, announced by list_changed, within a second.
func TestRegistrationReachesLiveSession(t *testing.T) {
	h := newHarness(t)
	cs, changed := h.listChanged(t, "/fs/mcp/")
	if got := toolNames(t, cs); !slices.Contains(got, "fail") {
		t.Fatalf("tools/list = %v, want fail in it", got)
	}
	h.reg.mu.Lock()
	c := *h.reg.m["fs"]
	c.DisallowedTools = []string{"write", "fail"}
	h.reg.m["fs"] = &c
	h.reg.mu.Unlock()
	h.api.ServerChanged("fs")
	waitChanged(t, changed, "registration change")
	if got := toolNames(t, cs); slices.Contains(got, "fail") || !slices.Contains(got, "echo") {
		t.Errorf("tools/list after the change = %v, want echo and no fail", got)
	}
}

// TestCallsDoNotRefresh: tools/call on a live session does not rebuild the
// caller's tool list: no grant is looked up for tools the call does not
// name (a refresh asks for every tool outside allowed_tools).
func TestCallsDoNotRefresh(t *testing.T) {
	g := &grants{m: map[string]bool{}}
	h := newHarness(t, withGrants(g))
	h.addCRM()
	cs := h.connect(t, "/crm/mcp/", "sk-good", nil)
	_ = toolNames(t, cs)
	before := g.lookups.Load()
	for i := range 10 {
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": strings.Repeat("a", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if n := g.lookups.Load() - before; n != 0 {
		t.Errorf("10 calls of an allowed tool looked up %d grants, want 0 (no tool-list refresh per call)", n)
	}
}

// TestFailingServerKeepsItsTools: on the aggregate, a server whose tools
// cannot be listed any more keeps the tools it showed; the others are
// refreshed as usual.
func TestFailingServerKeepsItsTools(t *testing.T) {
	h := newHarness(t)
	second := newUpstream(t)
	h.reg.mu.Lock()
	h.reg.m["second"] = &mcpgw.Server{ID: "second", BaseURL: second.url, Transport: mcpgw.TransportStreamable, AuthType: mcpgw.AuthNone, GuardrailMode: mcpgw.ModeLog}
	h.reg.mu.Unlock()
	cs := h.connect(t, "/mcp/", "sk-good", nil)
	if got := strings.Join(toolNames(t, cs), ","); !strings.Contains(got, "second__echo") {
		t.Fatalf("aggregate tools = %s, want second__echo", got)
	}
	// The second server goes away; its registration changes, so the pool
	// opens a new session, which fails. Meanwhile fs loses a tool.
	second.hs.CloseClientConnections()
	second.hs.Close()
	h.reg.mu.Lock()
	s2 := *h.reg.m["second"]
	s2.UpdatedAt = time.Now()
	h.reg.m["second"] = &s2
	fs := *h.reg.m["fs"]
	fs.DisallowedTools = []string{"write", "fail"}
	h.reg.m["fs"] = &fs
	h.reg.mu.Unlock()
	got := strings.Join(toolNames(t, cs), ",")
	if !strings.Contains(got, "second__echo") {
		t.Errorf("aggregate tools after the second server failed = %s, want second__echo kept", got)
	}
	if strings.Contains(got, "fs__fail") {
		t.Errorf("aggregate tools = %s: fs__fail is disallowed now", got)
	}
}
