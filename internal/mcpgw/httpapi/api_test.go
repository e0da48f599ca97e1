package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/mcpgw"
	"github.com/svc-gateway/svc/internal/mcpgw/httpapi"
	"github.com/svc-gateway/svc/internal/mcpgw/upstream"
	"github.com/svc-gateway/svc/internal/store"
)

// upstreamServer is a real MCP server made with the SDK: echo (read-only),
// write, slow, fail; calls counts the calls that reached it.
type upstreamServer struct {
	srv   *mcp.Server
	calls atomic.Int64
	url   string
	hs    *httptest.Server
}

func newUpstream(t testing.TB) *upstreamServer {
	u := &upstreamServer{srv: mcp.NewServer(&mcp.Implementation{Name: "tools", Version: "1"}, nil)}
	type echoIn struct {
		Text string `json:"text"`
		Mode string `json:"mode,omitempty"`
	}
	mcp.AddTool(u.srv, &mcp.Tool{Name: "echo", Description: "echo text", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			u.calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	mcp.AddTool(u.srv, &mcp.Tool{Name: "write", Description: "write a file"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			u.calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "wrote " + in.Text}}}, nil, nil
		})
	mcp.AddTool(u.srv, &mcp.Tool{Name: "slow", Description: "sleeps"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			u.calls.Add(1)
			select {
			case <-time.After(5 * time.Second):
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil, nil
		})
	mcp.AddTool(u.srv, &mcp.Tool{Name: "fail", Description: "fails"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			u.calls.Add(1)
			return nil, nil, errors.New("the disk is full")
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return u.srv }, nil))
	t.Cleanup(hs.Close)
	u.url, u.hs = hs.URL, hs
	return u
}

// servers is a fixed registry.
type servers struct {
	mu sync.Mutex
	m  map[string]*mcpgw.Server
}

func (s *servers) Server(_ context.Context, id string) (*mcpgw.Server, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.m[id]; ok {
		return v, nil
	}
	return nil, store.ErrNotFound
}

func (s *servers) Servers(context.Context) ([]*mcpgw.Server, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*mcpgw.Server
	for _, v := range s.m {
		out = append(out, v)
	}
	return out, nil
}

// scanner flags any text containing "123-45-6789" as US_SSN.
type scanner struct{}

func (scanner) ScanTool(_ context.Context, s mcpgw.Scan) (mcpgw.Finding, error) {
	for _, t := range s.Texts {
		if strings.Contains(t, "123-45-6789") {
			return mcpgw.Finding{Violations: []string{"US_SSN"}}, nil
		}
	}
	return mcpgw.Finding{}, nil
}

// cache is a map cache.
type cache struct {
	mu   sync.Mutex
	m    map[string]*mcp.CallToolResult
	hits int
}

func (c *cache) key(k mcpgw.CacheKey) string {
	return k.Tenant + "|" + k.ServerID + "|" + k.Tool + "|" + string(k.Arguments)
}
func (c *cache) Get(_ context.Context, k mcpgw.CacheKey) (*mcp.CallToolResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[c.key(k)], nil
}
func (c *cache) Put(_ context.Context, k mcpgw.CacheKey, r *mcp.CallToolResult, _ []byte, _ time.Duration, _ float64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[c.key(k)] = r
	return nil
}
func (c *cache) Hit(context.Context, string, float64) { c.mu.Lock(); c.hits++; c.mu.Unlock() }

// limits refuses callers named "broke" with 402 and counts settlements.
type limits struct{ admitted, settled atomic.Int64 }

type admission struct{ l *limits }

func (a admission) Settle(context.Context, float64) { a.l.settled.Add(1) }

func (l *limits) Admit(_ context.Context, p *identity.Principal, _ float64) (mcpgw.Admission, error) {
	if p.ID == "broke" {
		return nil, apierr.New(apierr.BudgetExceeded, "budget_exceeded", "the key's budget is spent")
	}
	l.admitted.Add(1)
	return admission{l}, nil
}

type recorder struct {
	mu  sync.Mutex
	all []*mcpgw.Record
}

func (r *recorder) RecordToolCall(rec *mcpgw.Record) {
	r.mu.Lock()
	r.all = append(r.all, rec)
	r.mu.Unlock()
}

type harness struct {
	up    *upstreamServer
	reg   *servers
	cache *cache
	lim   *limits
	rec   *recorder
	api   *httpapi.API
	url   string
}

// settings are what an option may change before the harness is built.
type settings struct {
	deps    *httpapi.Deps
	gw      *mcpgw.Options
	pool    *upstream.Options
	gateway *mcpgw.Gateway
}

// option changes a harness's settings.
type option func(settings)

func newHarness(t testing.TB, opts ...option) *harness {
	h := &harness{up: newUpstream(t), cache: &cache{m: map[string]*mcp.CallToolResult{}}, lim: &limits{}, rec: &recorder{}}
	h.reg = &servers{m: map[string]*mcpgw.Server{
		"fs": {ID: "fs", BaseURL: h.up.url, Transport: mcpgw.TransportStreamable, AuthType: mcpgw.AuthNone, GuardrailMode: mcpgw.ModeStrict,
			DisallowedTools: []string{"write"}, AllowedParams: mcpgw.AllowedParams{"echo": {"text": "", "mode": "(plain|loud)"}}},
		"logged": {ID: "logged", BaseURL: h.up.url, Transport: mcpgw.TransportStreamable, AuthType: mcpgw.AuthNone, GuardrailMode: mcpgw.ModeLog},
	}}
	po := upstream.Options{Client: &http.Client{}, OnToolsChanged: func(id string) { h.api.ToolsChanged(id) }}
	gw := &mcpgw.Gateway{Servers: h.reg, Limits: h.lim, Scanner: scanner{}, Cache: h.cache, Recorder: h.rec,
		Options: mcpgw.Options{CacheEnabled: true, Timeout: 300 * time.Millisecond}}
	deps := httpapi.Deps{Gateway: gw}
	for _, o := range opts {
		o(settings{deps: &deps, gw: &gw.Options, pool: &po, gateway: gw})
	}
	pool := upstream.New(po)
	t.Cleanup(func() { pool.Close() })
	gw.Upstream, deps.Sessions = pool, pool
	authn := auth.AuthenticatorFunc(func(_ context.Context, c auth.Credentials) (*identity.Principal, error) {
		switch c.Token() {
		case "sk-good":
			return &identity.Principal{Kind: identity.VirtualKey, ID: "k1"}, nil
		case "sk-other":
			return &identity.Principal{Kind: identity.VirtualKey, ID: "k2"}, nil
		case "sk-broke":
			return &identity.Principal{Kind: identity.VirtualKey, ID: "broke"}, nil
		}
		return nil, apierr.New(apierr.Unauthenticated, "invalid_api_key", "invalid key")
	})
	deps.Auth = authn
	h.api = httpapi.New(deps)
	mux := http.NewServeMux()
	h.api.Register(mux)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	h.url = hs.URL
	return h
}

type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

func (h *harness) connect(t *testing.T, path, key string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.url + path, HTTPClient: &http.Client{Transport: bearer{key}}}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", path, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func text(r *mcp.CallToolResult) string {
	if r == nil || len(r.Content) == 0 {
		return ""
	}
	if tc, ok := r.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

func rpcCode(err error) int64 {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return 0
}

func TestServerEndpoint(t *testing.T) {
	h := newHarness(t)
	cs := h.connect(t, "/fs/mcp/", "sk-good", nil)
	ctx := context.Background()
	if got := strings.Join(toolNames(t, cs), ","); strings.Contains(got, "write") || !strings.Contains(got, "echo") {
		t.Errorf("tools/list = %s: want echo and no write (disallowed)", got)
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || text(r) != "echo: hi" {
		t.Fatalf("echo: %v %q", err, text(r))
	}
	// Denials: a disallowed tool, a parameter not listed, a value its pattern refuses.
	for _, c := range []mcp.CallToolParams{
		{Name: "write", Arguments: map[string]any{"text": "x"}},
		{Name: "echo", Arguments: map[string]any{"text": "x", "extra": 1}},
		{Name: "echo", Arguments: map[string]any{"text": "x", "mode": "evil"}},
	} {
		_, err := cs.CallTool(ctx, &c)
		if rpcCode(err) != httpapi.CodeForbidden {
			t.Errorf("%s %v: got %v, want a forbidden JSON-RPC error", c.Name, c.Arguments, err)
		}
	}
	// Strict: a violation in the arguments blocks, naming it.
	before := h.up.calls.Load()
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "my ssn is 123-45-6789"}})
	if rpcCode(err) != httpapi.CodeForbidden || !strings.Contains(err.Error(), "US_SSN") {
		t.Errorf("strict violation: got %v, want a forbidden error naming US_SSN", err)
	}
	if h.up.calls.Load() != before {
		t.Error("a blocked call reached the server")
	}
	// A tool's own failure is a result with isError, not a protocol error.
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fail", Arguments: map[string]any{"text": "x"}})
	if err != nil || !r.IsError {
		t.Errorf("fail: got %v %+v, want isError", err, r)
	}
	// A hanging tool times out.
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"text": "x"}})
	if rpcCode(err) != httpapi.CodeTimeout {
		t.Errorf("slow: got %v, want the timeout code", err)
	}
	if len(h.rec.all) != 7 {
		t.Errorf("recorded %d calls, want one per call", len(h.rec.all))
	}
	for _, rec := range h.rec.all {
		if rec.ArgumentsHash == "" || rec.Arguments != nil {
			t.Errorf("record %+v: want a hash and no arguments", rec)
		}
	}
}

func TestLogModeFlags(t *testing.T) {
	h := newHarness(t)
	cs := h.connect(t, "/logged/mcp/", "sk-good", nil)
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write", Arguments: map[string]any{"text": "123-45-6789"}})
	if err != nil || text(r) != "wrote 123-45-6789" {
		t.Fatalf("log mode: %v %q, want the call through", err, text(r))
	}
	last := h.rec.all[len(h.rec.all)-1]
	if !last.Flagged || len(last.Violations) == 0 {
		t.Errorf("record %+v: want flagged with the violation", last)
	}
}

func TestCacheOnlyReadOnly(t *testing.T) {
	h := newHarness(t)
	cs := h.connect(t, "/logged/mcp/", "sk-good", nil)
	ctx := context.Background()
	call := func(name string) {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "a"}}); err != nil {
			t.Fatal(err)
		}
	}
	call("echo")
	n := h.up.calls.Load()
	call("echo")
	if h.up.calls.Load() != n || h.cache.hits != 1 {
		t.Errorf("second read-only call reached the server (calls %d → %d, hits %d)", n, h.up.calls.Load(), h.cache.hits)
	}
	call("write")
	call("write")
	if h.up.calls.Load() != n+2 {
		t.Errorf("write calls served from the cache: server saw %d, want %d", h.up.calls.Load(), n+2)
	}
}

func TestHTTPStatuses(t *testing.T) {
	h := newHarness(t)
	post := func(path, key, body string) (int, string) {
		req, _ := http.NewRequest("POST", h.url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`
	if st, body := post("/fs/mcp/", "", call); st != 401 || !strings.Contains(body, `"code":-32010`) {
		t.Errorf("no key: %d %s", st, body)
	}
	if st, body := post("/fs/mcp/", "sk-broke", call); st != 402 || !strings.Contains(body, `"id":7`) {
		t.Errorf("over budget: %d %s, want 402 with the request id", st, body)
	}
	if st, _ := post("/nope/mcp/", "sk-good", call); st != 404 {
		t.Errorf("unknown server: %d, want 404", st)
	}
	if st, body := post("/fs/mcp/", "sk-good", `{"jsonrpc":`); st >= 500 {
		t.Errorf("malformed JSON-RPC: %d %s, want a 4xx parse error", st, body)
	}
	st, body := post("/mcp/v1/fs/tools/call", "sk-good", `{"name":"echo","arguments":{"text":"v1"}}`)
	if st != 200 || !strings.Contains(body, "echo: v1") {
		t.Errorf("v1 plain: %d %s", st, body)
	}
	st, body = post("/mcp/v1/fs/tools/call", "sk-good", `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"text":"rpc"}}}`)
	var rpc struct {
		ID     string `json:"id"`
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if st != 200 || json.Unmarshal([]byte(body), &rpc) != nil || rpc.ID != "a" || len(rpc.Result.Content) == 0 || rpc.Result.Content[0].Text != "echo: rpc" {
		t.Errorf("v1 JSON-RPC: %d %s", st, body)
	}
	if st, body := post("/mcp/v1/fs/tools/call", "sk-good", `{"name":"write"}`); st != 403 || !strings.Contains(body, "tool_not_allowed") {
		t.Errorf("v1 disallowed: %d %s", st, body)
	}
	if st, _ := post("/mcp/v1/fs/tools/call", "sk-good", `{"name":"echo","arguments":[1]}`); st != 400 {
		t.Errorf("v1 arguments not an object: %d, want 400", st)
	}
}

func TestAggregate(t *testing.T) {
	h := newHarness(t)
	cs := h.connect(t, "/mcp/", "sk-good", nil)
	names := strings.Join(toolNames(t, cs), ",")
	if !strings.Contains(names, "fs__echo") || !strings.Contains(names, "logged__write") || strings.Contains(names, "fs__write") {
		t.Errorf("aggregate tools = %s", names)
	}
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fs__echo", Arguments: map[string]any{"text": "agg"}})
	if err != nil || text(r) != "echo: agg" {
		t.Errorf("aggregate call: %v %q", err, text(r))
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fs__write", Arguments: map[string]any{}}); rpcCode(err) != httpapi.CodeForbidden {
		t.Errorf("aggregate disallowed: %v", err)
	}
}

func TestToolListChanged(t *testing.T) {
	h := newHarness(t)
	changed := make(chan struct{}, 4)
	cs := h.connect(t, "/logged/mcp/", "sk-good", &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	_ = toolNames(t, cs)
	h.up.srv.AddTool(&mcp.Tool{Name: "fresh", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "new"}}}, nil
	})
	// The gateway learns of it from the upstream's notice (the pool's
	// handler) and tells its own sessions.
	select {
	case <-changed:
		if !strings.Contains(strings.Join(toolNames(t, cs), ","), "fresh") {
			t.Fatal("list_changed came but the list lacks the new tool")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}
}
