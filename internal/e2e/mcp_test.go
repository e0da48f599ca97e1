package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/config"
)

// toolServer is an MCP server made with the SDK: lookup (read-only) and
// write; calls counts what reached it.
func toolServer(t *testing.T) (string, *atomic.Int64) {
	var calls atomic.Int64
	srv := mcp.NewServer(&mcp.Implementation{Name: "crm", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "lookup", Description: "look a customer up", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
			calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "found"}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "write", Description: "write a note"},
		func(_ context.Context, _ *mcp.CallToolRequest, v in) (*mcp.CallToolResult, any, error) {
			calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "wrote " + v.Text}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Only svc's credential for the server opens it: never the caller's key.
		if r.Header.Get("Authorization") != "Bearer upstream-token" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL, &calls
}

type keyed struct{ key string }

func (k keyed) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+k.key)
	return http.DefaultTransport.RoundTrip(r)
}

func mcpClient(t *testing.T, url, key string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: keyed{key}}, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// TestToolGateway registers an SDK server through the admin route and
// drives it with the SDK client through svc: the ACL, the budget debit,
// the cache on the read-only tool only, the audit entry, SSRF refusals and
// a revoked key.
func TestToolGateway(t *testing.T) {
	up, calls := toolServer(t)
	g := start(t, nil, config.Map{"SVC_MCP_ALLOW_PRIVATE": "true", "MCP_GATEWAY_ENABLED": "true"})
	var reg map[string]any
	st := g.request(g.proxy, "POST", "/api/mcp/servers", map[string]any{
		"id": "crm", "base_url": up + "/mcp", "auth_type": "bearer", "auth_token": "upstream-token",
		"disallowed_tools": []string{"delete"}, "allowed_params": map[string]any{"write": []string{"text"}},
		"cost_info": map[string]any{"per_call_usd": 0.25}, "guardrail_mode": "strict",
	}, &reg)
	if st != 201 || reg["has_auth_token"] != true || strings.Contains(g.logs.String(), "upstream-token") {
		t.Fatalf("register: %d %v", st, reg)
	}
	key, id := g.newKey(map[string]any{"max_budget_usd": 0.6})
	cs, err := mcpClient(t, g.proxy+"/crm/mcp/", key)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 2 {
		t.Fatalf("tools/list: %v %v\n%s", err, tools, g.logs.String())
	}
	for i := 0; i < 2; i++ {
		if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "lookup", Arguments: map[string]any{"text": "acme"}}); err != nil || r.IsError {
			t.Fatalf("lookup: %v %+v", err, r)
		}
	}
	if calls.Load() != 1 {
		t.Errorf("the read-only tool reached the server %d times, want 1 (the second from the cache)", calls.Load())
	}
	// The cache's statistics: this replica's counts at once.
	var stats struct {
		Servers []struct {
			ServerID string  `json:"server_id"`
			Hits     int     `json:"hits"`
			Misses   int     `json:"misses"`
			SavedUSD float64 `json:"saved_usd"`
		} `json:"servers"`
	}
	if st := g.request(g.proxy, "GET", "/api/mcp/cache/stats", nil, &stats); st != 200 || len(stats.Servers) == 0 ||
		stats.Servers[0].ServerID != "crm" || stats.Servers[0].Hits != 1 || stats.Servers[0].Misses != 1 || stats.Servers[0].SavedUSD != 0.25 {
		t.Errorf("cache stats: %d %+v, want crm with 1 hit, 1 miss, $0.25 saved", st, stats)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write", Arguments: map[string]any{"text": "x", "extra": 1}}); err == nil {
		t.Error("a parameter outside allowed_params passed")
	}
	// Budget 0.6 at 0.25 a call: lookup (paid), lookup (cached, free), write, then refused.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write", Arguments: map[string]any{"text": "a"}}); err != nil {
		t.Fatalf("write: %v", err)
	}
	if calls.Load() != 2 {
		t.Errorf("server calls %d, want 2", calls.Load())
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "write", Arguments: map[string]any{"text": "b"}})
	var we *jsonrpc.Error
	if err == nil || (!strings.Contains(err.Error(), "402") && !(errors.As(err, &we) && we.Code == -32011)) {
		t.Errorf("over budget: got %v, want a 402 / budget refusal", err)
	}
	// The audit log has the calls with the server, tool and outcome.
	entries := g.entriesAtLeast("provider=mcp:crm", 3)
	if tc, _ := entries[0]["tool_call"].(map[string]any); tc == nil || tc["server_id"] != "crm" || tc["arguments_sha256"] == "" {
		t.Errorf("audit entry: %v", entries[0])
	}
	// Usage and logs: the key's calls per tool, and one item per call.
	var use struct {
		Totals struct {
			Calls   int     `json:"calls"`
			CostUSD float64 `json:"cost_usd"`
		} `json:"totals"`
		Data []map[string]any `json:"data"`
	}
	if st, body := getJSON(t, g.proxy+"/api/mcp/usage?server_id=crm&period=all", key); st != 200 || json.Unmarshal([]byte(body), &use) != nil ||
		use.Totals.Calls < 3 || use.Totals.CostUSD < 0.49 || use.Totals.CostUSD > 0.51 {
		t.Errorf("usage: %d %s", st, body)
	}
	var logs struct {
		Data []map[string]any `json:"data"`
	}
	if st, body := getJSON(t, g.proxy+"/api/mcp/logs?tool=write&outcome=success", key); st != 200 || json.Unmarshal([]byte(body), &logs) != nil ||
		len(logs.Data) != 1 || logs.Data[0]["tool"] != "write" || logs.Data[0]["server_id"] != "crm" {
		t.Errorf("logs: %d %s", st, body)
	}
	if st, _ := getJSON(t, g.proxy+"/api/mcp/logs?key_id=someone-else", key); st != 403 {
		t.Errorf("another key's logs: %d, want 403", st)
	}
	// SSRF: the metadata address and loopback names are refused at registration.
	for _, u := range []string{"http://169.254.169.254/latest/meta-data", "http://[fd00:ec2::254]/mcp"} {
		if st := g.request(g.proxy, "POST", "/api/mcp/servers", map[string]any{"id": "evil", "base_url": u}, nil); st != 400 {
			t.Errorf("register %s: %d, want 400", u, st)
		}
	}
	// A revoked key: 401.
	if st := g.admin("POST", "/api/enterprise/vkeys/"+id+"/revoke", nil, nil); st != 200 {
		t.Fatalf("revoke: %d", st)
	}
	resp, _ := g.post("/crm/mcp/", key, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), map[string]string{"Accept": "application/json, text/event-stream"})
	if resp.StatusCode != 401 {
		t.Errorf("revoked key: %d, want 401", resp.StatusCode)
	}
}

// TestToolGatewaySSRFDefault: without SVC_MCP_ALLOW_PRIVATE a loopback
// server is refused at registration.
func TestToolGatewaySSRFDefault(t *testing.T) {
	up, _ := toolServer(t)
	g := start(t, nil, nil)
	var body map[string]any
	if st := g.request(g.proxy, "POST", "/api/mcp/servers", map[string]any{"id": "local", "base_url": up}, &body); st != 400 {
		t.Errorf("loopback registration: %d %v, want 400", st, body)
	}
}
