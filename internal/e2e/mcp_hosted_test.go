package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/mcpgw/oauth/oauthtest"
)

// petAPI is the HTTP API the petstore document describes (GET
// /v3/pet/{petId} only); auths records each request's Authorization.
func petAPI(t *testing.T) (string, func() []string) {
	var mu sync.Mutex
	var auths []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer api-token" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		id, ok := strings.CutPrefix(r.URL.Path, "/v3/pet/")
		if !ok || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":` + id + `,"name":"doggie","status":"available"}`))
	}))
	t.Cleanup(hs.Close)
	return hs.URL, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), auths...) }
}

// TestToolGatewayOpenAPI generates a server from the petstore document
// (POST /api/mcp/generate), calls one of its tools with the SDK client
// through svc, and checks that bad documents register nothing.
func TestToolGatewayOpenAPI(t *testing.T) {
	api, auths := petAPI(t)
	spec, err := os.ReadFile("../mcpgw/openapi/testdata/petstore.json")
	if err != nil {
		t.Fatal(err)
	}
	g := start(t, nil, config.Map{"SVC_MCP_ALLOW_PRIVATE": "true"})
	var out struct {
		Server map[string]any `json:"server"`
		Tools  []struct {
			Name     string `json:"name"`
			ReadOnly bool   `json:"read_only"`
		} `json:"tools"`
	}
	st := g.request(g.proxy, "POST", "/api/mcp/generate", map[string]any{
		"spec": json.RawMessage(spec), "server_id": "pets", "server_name": "Petstore", "base_url": api + "/v3",
		"include_methods": []string{"GET"}, "auth_type": "bearer", "auth_token": "api-token",
		"allowed_tools": []string{"getPetById"},
	}, &out)
	if st != 201 || out.Server["transport"] != "openapi" || out.Server["has_auth_token"] != true || len(out.Tools) == 0 {
		t.Fatalf("generate: %d %+v", st, out)
	}
	names := map[string]bool{}
	for _, tl := range out.Tools {
		names[tl.Name] = true
		if !tl.ReadOnly {
			t.Errorf("GET tool %s not read-only", tl.Name)
		}
	}
	if !names["getPetById"] || names["updatePet"] {
		t.Errorf("tools %v: want getPetById and no PUT tool", names)
	}
	key, _ := g.newKey(nil)
	cs, err := mcpClient(t, g.proxy+"/pets/mcp/", key)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// allowed_tools: the key sees one tool in tools/list and in the catalog;
	// the admin key sees them all.
	if l, err := cs.ListTools(ctx, nil); err != nil || len(l.Tools) != 1 || l.Tools[0].Name != "getPetById" {
		t.Fatalf("tools/list: %v %+v", err, l)
	}
	for i := 0; i < 50 && len(catalogTools(t, g, adminKey, "pets")) == 0; i++ {
		time.Sleep(100 * time.Millisecond) // the catalog reads a new server's tools in the background
	}
	if n := catalogTools(t, g, key, "pets"); len(n) != 1 || n[0] != "getPetById" {
		t.Errorf("the key's catalog: %v, want [getPetById]", n)
	}
	if n := catalogTools(t, g, adminKey, "pets"); len(n) != len(out.Tools) {
		t.Errorf("the admin's catalog: %v, want %d tools", n, len(out.Tools))
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "getPetById", Arguments: map[string]any{"path": map[string]any{"petId": 7}}})
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("getPetById: %v %+v\n%s", err, res, g.logs.String())
	}
	if txt := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(txt, "doggie") || !strings.Contains(txt, `"id":7`) {
		t.Errorf("result %q", txt)
	}
	for _, a := range auths() {
		if a != "Bearer api-token" {
			t.Errorf("the API saw Authorization %q: only the registration's credential may reach it", a)
		}
	}
	// Bad documents and method lists: 400 naming the problem, nothing stored.
	for name, body := range map[string]map[string]any{
		"no paths":       {"spec": "openapi: 3.0.3\ninfo: {title: x, version: '1'}\npaths: {}\n"},
		"swagger 2":      {"spec": map[string]any{"swagger": "2.0", "info": map[string]any{"title": "x", "version": "1"}, "paths": map[string]any{}}},
		"not a document": {"spec": 42},
		"TRACE only":     {"spec": json.RawMessage(spec), "include_methods": []string{"TRACE"}},
	} {
		body["server_id"], body["base_url"] = "bad", api
		var e struct {
			Error struct{ Message, Param string } `json:"error"`
		}
		if st := g.request(g.proxy, "POST", "/api/mcp/generate", body, &e); st != 400 || e.Error.Message == "" {
			t.Errorf("%s: %d %+v, want 400 naming the problem", name, st, e)
		}
	}
	if st := g.request(g.proxy, "GET", "/api/mcp/servers/bad", nil, nil); st != 404 {
		t.Errorf("a refused document was registered: GET answered %d", st)
	}
	// A generated server's base_url is checked against SSRF like any other.
	if st := g.request(g.proxy, "POST", "/api/mcp/generate", map[string]any{"spec": json.RawMessage(spec),
		"server_id": "meta", "base_url": "http://169.254.169.254/v3"}, nil); st != 400 {
		t.Errorf("metadata base_url: %d, want 400", st)
	}
}

// TestToolGatewayOAuth authorizes an OAuth-protected MCP server through
// svc's routes (initiate, the authorization server's redirect, callback),
// then calls its tool through svc with a virtual key: svc sends its token,
// never the caller's key; the tokens list shows no token; revoke forgets it.
func TestToolGatewayOAuth(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "search", Description: "search the docs"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "3 hits"}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	as := oauthtest.New(t, func(a *oauthtest.AS) {
		a.Protected = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, r.Header.Get("Authorization"))
			mu.Unlock()
			h.ServeHTTP(w, r)
		})
	})
	// The callback's host is rewritten below: the proxy's port is known only
	// once it listens.
	const placeholder = "http://127.0.0.1:9/api/mcp/auth/callback"
	g := start(t, nil, config.Map{"SVC_MCP_ALLOW_PRIVATE": "true", "SVC_MCP_OAUTH_REDIRECT_URL": placeholder})
	if st := g.request(g.proxy, "POST", "/api/mcp/servers", map[string]any{
		"id": "docs", "base_url": as.ServerURL(), "auth_type": "oauth"}, nil); st != 201 {
		t.Fatalf("register: %d", st)
	}
	key, _ := g.newKey(nil)
	// A virtual key may not start an authorization.
	if st, _ := getJSON(t, g.proxy+"/api/mcp/auth/initiate?server_id=docs", key); st != 401 && st != 403 {
		t.Errorf("initiate with a virtual key: %d", st)
	}
	var ini struct {
		RedirectURL string `json:"redirect_url"`
	}
	if st := g.request(g.proxy, "GET", "/api/mcp/auth/initiate?server_id=docs", nil, &ini); st != 200 || ini.RedirectURL == "" {
		t.Fatalf("initiate: %d %+v", st, ini)
	}
	callback := authorizeInBrowser(t, ini.RedirectURL, placeholder, g.proxy)
	done, body := getJSON(t, callback, "")
	if done != 200 || !strings.Contains(body, `"authorized"`) {
		t.Fatalf("callback: %d %s\n%s", done, body, g.logs.String())
	}
	if again, _ := getJSON(t, callback, ""); again != 400 {
		t.Errorf("a replayed callback: %d, want 400 (the state is single use)", again)
	}
	var toks struct {
		Data []map[string]any `json:"data"`
	}
	st := g.request(g.proxy, "GET", "/api/mcp/auth/tokens", nil, &toks)
	raw, _ := json.Marshal(toks)
	if st != 200 || len(toks.Data) != 1 || toks.Data[0]["server_id"] != "docs" || strings.Contains(string(raw), "at-") {
		t.Fatalf("tokens: %d %s", st, raw)
	}
	// The catalog reads the server's tools once it is authorized.
	for i := 0; i < 50 && len(catalogTools(t, g, key, "docs")) == 0; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if n := catalogTools(t, g, key, "docs"); len(n) != 1 || n[0] != "search" {
		t.Errorf("catalog after authorization: %v, want [search]", n)
	}
	cs, err := mcpClient(t, g.proxy+"/docs/mcp/", key)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, g.logs.String())
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("search: %v %+v\n%s", err, res, g.logs.String())
	}
	mu.Lock()
	for _, a := range seen {
		if !strings.HasPrefix(a, "Bearer at-") {
			t.Errorf("the server saw Authorization %q, want svc's access token", a)
		}
	}
	mu.Unlock()
	if st := g.request(g.proxy, "DELETE", "/api/mcp/auth/tokens/docs", nil, nil); st != 200 {
		t.Errorf("revoke: %d", st)
	}
	if g.request(g.proxy, "GET", "/api/mcp/auth/tokens", nil, &toks); len(toks.Data) != 0 {
		t.Errorf("tokens after revoke: %v", toks.Data)
	}
}

// authorizeInBrowser follows the authorization URL as the admin's browser
// would, up to the authorization server's redirect to the callback, and
// returns that callback URL on the proxy.
func authorizeInBrowser(t *testing.T, authURL, placeholder, proxy string) string {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, placeholder+"?") {
		t.Fatalf("authorization server: %d %q", resp.StatusCode, loc)
	}
	u, _ := url.Parse(loc)
	return proxy + u.Path + "?" + u.RawQuery
}

// getJSON GETs u asking for JSON, with key when it is set.
func getJSON(t *testing.T, u, key string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Accept", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

// catalogTools lists the tools of server in GET /api/mcp/catalog as key
// sees them.
func catalogTools(t *testing.T, g *gateway, key, server string) []string {
	t.Helper()
	st, body := getJSON(t, g.proxy+"/api/mcp/catalog", key)
	var l struct {
		Servers []struct {
			ServerID string `json:"server_id"`
			Tools    []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(body), &l); st != 200 || err != nil {
		t.Fatalf("catalog: %d %v %s", st, err, body)
	}
	var names []string
	for _, s := range l.Servers {
		if s.ServerID == server {
			for _, tl := range s.Tools {
				names = append(names, tl.Name)
			}
		}
	}
	return names
}

// TestToolGatewayAccessRequest: a key asks for a tool its server does not
// allow, an admin approves, the key calls it; the decision and the
// registration are on the audit chain.
func TestToolGatewayAccessRequest(t *testing.T) {
	up, _ := toolServer(t)
	g := start(t, nil, config.Map{"SVC_MCP_ALLOW_PRIVATE": "true"})
	if st := g.request(g.proxy, "POST", "/api/mcp/servers", map[string]any{"id": "crm", "base_url": up + "/mcp",
		"auth_type": "bearer", "auth_token": "upstream-token", "allowed_tools": []string{"lookup"}}, nil); st != 201 {
		t.Fatalf("register: %d", st)
	}
	key, _ := g.newKey(nil)
	cs, err := mcpClient(t, g.proxy+"/crm/mcp/", key)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write", Arguments: map[string]any{"text": "x"}}); err == nil {
		t.Fatal("write before any grant passed")
	}
	resp, body := g.post("/api/mcp/catalog/requests", key, []byte(`{"server_id":"crm","tools_requested":["write"],"justification":"notes for the CRM"}`), nil)
	var req struct{ ID, Status string }
	if resp.StatusCode != 201 || json.Unmarshal(body, &req) != nil || req.Status != "pending" {
		t.Fatalf("request: %d %s", resp.StatusCode, body)
	}
	// The key cannot approve its own request.
	if resp, _ := g.post("/api/mcp/catalog/requests/"+req.ID+"/approve", key, nil, nil); resp.StatusCode != 403 && resp.StatusCode != 401 {
		t.Errorf("self-approval: %d", resp.StatusCode)
	}
	if st := g.request(g.proxy, "POST", "/api/mcp/catalog/requests/"+req.ID+"/approve", nil, nil); st != 200 {
		t.Fatalf("approve: %d", st)
	}
	var r *mcp.CallToolResult
	for i := 0; i < 50; i++ { // the grant reaches the gateway's cache through the bus
		if r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "write", Arguments: map[string]any{"text": "granted"}}); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil || text0(r) != "wrote granted" {
		t.Fatalf("write after the grant: %v %+v", err, r)
	}
	for _, ev := range []string{"mcp.server.create", "mcp.access.approved"} {
		var logs struct {
			Data []struct {
				EventType string `json:"event_type"`
				Subject   string `json:"subject"`
				Details   map[string]any
			} `json:"data"`
		}
		if st := g.admin("GET", "/api/audit/logs?event_type="+ev, nil, &logs); st != 200 || len(logs.Data) != 1 {
			t.Errorf("audit chain %s: %d %+v", ev, st, logs)
			continue
		}
		if raw, _ := json.Marshal(logs.Data[0]); strings.Contains(string(raw), "upstream-token") {
			t.Errorf("the chain holds the credential: %s", raw)
		}
	}
}

func text0(r *mcp.CallToolResult) string {
	if r == nil || len(r.Content) == 0 {
		return ""
	}
	tc, _ := r.Content[0].(*mcp.TextContent)
	if tc == nil {
		return ""
	}
	return tc.Text
}

// TestToolGatewayGuardrailModes: with the real compliance engine (the
// enterprise_standard family for a key without a preset), an SSN in the
// arguments is refused by a strict server before it is called, and passed
// but flagged by a log server.
func TestToolGatewayGuardrailModes(t *testing.T) {
	up, calls := toolServer(t)
	g := start(t, nil, config.Map{"SVC_MCP_ALLOW_PRIVATE": "true"})
	for _, mode := range []string{"strict", "log"} {
		if st := g.request(g.proxy, "POST", "/api/mcp/servers", map[string]any{"id": mode, "base_url": up + "/mcp",
			"auth_type": "bearer", "auth_token": "upstream-token", "guardrail_mode": mode}, nil); st != 201 {
			t.Fatalf("register %s: %d", mode, st)
		}
	}
	key, _ := g.newKey(nil)
	secret := map[string]any{"text": "the customer's SSN is 123-45-6789"}
	strict, err := mcpClient(t, g.proxy+"/strict/mcp/", key)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err = strict.CallTool(ctx, &mcp.CallToolParams{Name: "write", Arguments: secret})
	if err == nil || calls.Load() != 0 {
		t.Fatalf("strict: %v (server calls %d), want a refusal before the call", err, calls.Load())
	}
	logged, err := mcpClient(t, g.proxy+"/log/mcp/", key)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := logged.CallTool(ctx, &mcp.CallToolParams{Name: "write", Arguments: secret}); err != nil || r.IsError || calls.Load() != 1 {
		t.Fatalf("log: %v %+v (server calls %d), want the call through", err, r, calls.Load())
	}
	entries := g.entriesAtLeast("provider=mcp:log", 1)
	raw, _ := json.Marshal(entries[0])
	if !strings.Contains(string(raw), `"flagged":true`) || !strings.Contains(string(raw), "ssn") || strings.Contains(string(raw), "123-45-6789") {
		t.Errorf("log-mode entry: %s, want it flagged and without the arguments", raw)
	}
}
