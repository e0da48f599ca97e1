package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolGatewayAcrossProxies runs two proxies and a management process on
// one PostgreSQL and one Redis: a registration, a flush, an access grant and
// a registration change made through one proxy reach the other within a
// second, and the tool-call cache is shared.
func TestToolGatewayAcrossProxies(t *testing.T) {
	mg, p1, p2, up, calls := crmOnTwoProxies(t, "MCP_GATEWAY_ENABLED", "true")
	key, _ := mg.newKey(nil)
	var s2 *mcp.ClientSession
	if !eventuallyFor(5*time.Second, func() bool {
		var err error
		s2, err = mcpClient(t, p2.proxy+"/crm/mcp/", key)
		return err == nil
	}) {
		t.Fatal("the second proxy does not know the server registered through the first within a second")
	}
	s1, err := mcpClient(t, p1.proxy+"/crm/mcp/", key)
	if err != nil {
		t.Fatal(err)
	}
	// The other proxy's catalog lists the server's tools too (its
	// registry change hook refreshes it, not only the admin's process).
	if !eventuallyFor(5*time.Second, func() bool {
		_, body := getJSON(t, p2.proxy+"/api/mcp/catalog", adminKey)
		return strings.Contains(body, `"lookup"`)
	}) {
		t.Error("the second proxy's catalog does not list the server registered through the first")
	}
	ctx := context.Background()
	lookup := func(cs *mcp.ClientSession) {
		t.Helper()
		if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "lookup", Arguments: map[string]any{"text": "acme"}}); err != nil || r.IsError {
			t.Fatalf("lookup: %v %+v", err, r)
		}
	}
	// The cache is shared: the second proxy answers from the first's entry.
	lookup(s1)
	lookup(s2)
	if calls.Load() != 1 {
		t.Errorf("the server saw %d calls, want 1 (the second proxy served from the shared cache)", calls.Load())
	}
	// A flush through one proxy empties the cache for the other.
	if st := p2.request(p2.proxy, "POST", "/api/mcp/cache/flush/crm", nil, nil); st != 200 {
		t.Fatalf("flush: %d", st)
	}
	// Replicas trust the generation they read for a second, so the other
	// proxy sees the flush within a second of its last read: up to a second
	// after the flush, and a poll more.
	deadline := time.Now().Add(5 * time.Second) // a second and a poll, with room for -race under load
	for time.Now().Before(deadline) && calls.Load() < 2 {
		lookup(s1)
		time.Sleep(20 * time.Millisecond)
	}
	if calls.Load() != 2 {
		t.Errorf("5 s after a flush through the other proxy the server saw %d calls, want 2", calls.Load())
	}
	// An access grant approved through one proxy opens the tool on the other.
	resp, body := p1.post("/api/mcp/catalog/requests", key, []byte(`{"server_id":"crm","tools_requested":["write"],"justification":"notes"}`), nil)
	var req struct{ ID string }
	if resp.StatusCode != 201 || json.Unmarshal(body, &req) != nil {
		t.Fatalf("request: %d %s", resp.StatusCode, body)
	}
	if st := p2.request(p2.proxy, "POST", "/api/mcp/catalog/requests/"+req.ID+"/approve", nil, nil); st != 200 {
		t.Fatalf("approve: %d", st)
	}
	if !eventuallyFor(5*time.Second, func() bool {
		r, err := s1.CallTool(ctx, &mcp.CallToolParams{Name: "write", Arguments: map[string]any{"text": "x"}})
		return err == nil && !r.IsError
	}) {
		t.Error("a grant approved through the second proxy does not reach the first within a second")
	}
	// A registration change through one proxy reaches the other's tools/list.
	if st := p2.request(p2.proxy, "PUT", "/api/mcp/servers/crm", map[string]any{"base_url": up + "/mcp",
		"auth_type": "bearer", "auth_token": "upstream-token", "allowed_tools": []string{"write"}}, nil); st != 200 {
		t.Fatalf("update: %d", st)
	}
	if !eventuallyFor(5*time.Second, func() bool {
		cs, err := mcpClient(t, p1.proxy+"/crm/mcp/", key)
		if err != nil {
			return false
		}
		l, err := cs.ListTools(ctx, nil)
		if err != nil {
			return false
		}
		var names []string
		for _, tl := range l.Tools {
			names = append(names, tl.Name)
		}
		return slices.Equal(names, []string{"write"})
	}) {
		t.Error("the first proxy still shows lookup a second after the second proxy's update")
	}
}

// crmOnTwoProxies starts a management process and two proxies on shared
// PostgreSQL and Redis (with settings added), and registers toolServer as
// "crm" through the first proxy with only lookup allowed; up is the tool
// server's URL, calls what reached it.
func crmOnTwoProxies(t *testing.T, settings ...string) (mg, p1, p2 *gateway, up string, calls *atomic.Int64) {
	t.Helper()
	shared := with(sharedStores(t), append([]string{"SVC_MCP_ALLOW_PRIVATE", "true"}, settings...)...)
	up, calls = toolServer(t)
	mg = start(t, nil, with(shared, "SERVICE_TYPE", "api-server"))
	p1 = start(t, nil, with(shared, "SERVICE_TYPE", "proxy"))
	p2 = start(t, nil, with(shared, "SERVICE_TYPE", "proxy"))
	if st := p1.request(p1.proxy, "POST", "/api/mcp/servers", map[string]any{"id": "crm", "base_url": up + "/mcp",
		"auth_type": "bearer", "auth_token": "upstream-token", "allowed_tools": []string{"lookup"}}, nil); st != 201 {
		t.Fatalf("register on the first proxy: %d", st)
	}
	return mg, p1, p2, up, calls
}
