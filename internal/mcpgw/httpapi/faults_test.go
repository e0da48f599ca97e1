package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/mcpgw"
	"github.com/svc-gateway/svc/internal/mcpgw/httpapi"
)

// addTool adds a raw tool to the upstream before any session lists it.
func addTool(h *harness, name string, f mcp.ToolHandler) {
	h.up.srv.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, f)
}

// TestResultBound: an answer over the bound is an upstream error, not a
// crash or a truncated result, and the next call works.
func TestResultBound(t *testing.T) {
	h := newHarness(t, func(s settings) { s.pool.MaxResultBytes = 16 << 10 })
	addTool(h, "big", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", 256<<10)}}}, nil
	})
	cs := h.connect(t, "/logged/mcp/", "sk-good", nil)
	ctx := context.Background()
	if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "big", Arguments: map[string]any{}}); rpcCode(err) != httpapi.CodeUpstream {
		t.Fatalf("an answer over the bound: %v (result %d bytes), want the upstream error", err, len(text(r)))
	}
	if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "after"}}); err != nil || text(r) != "echo: after" {
		t.Errorf("the call after: %v %q", err, text(r))
	}
}

// TestUpstreamDies: the server's connections drop in the middle of a call;
// the caller gets an upstream error at once (not the timeout), and the
// next call opens a new session.
func TestUpstreamDies(t *testing.T) {
	h := newHarness(t, func(s settings) { s.gw.Timeout = 10 * time.Second })
	started, release := make(chan struct{}, 1), make(chan struct{})
	t.Cleanup(func() { close(release) }) // before the server's Close, which waits for its handlers
	addTool(h, "hang", func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
		case <-release:
		}
		return nil, errors.New("released")
	})
	cs := h.connect(t, "/logged/mcp/", "sk-good", nil)
	ctx := context.Background()
	done := make(chan error, 1)
	t0 := time.Now()
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hang", Arguments: map[string]any{}})
		done <- err
	}()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("the call never reached the server")
	}
	h.up.hs.CloseClientConnections()
	select {
	case err := <-done:
		if code := rpcCode(err); code != httpapi.CodeUpstream || time.Since(t0) > 8*time.Second {
			t.Errorf("a dropped call: %v (code %d) after %v, want the upstream error before the timeout", err, code, time.Since(t0))
		}
	case <-time.After(9 * time.Second):
		t.Fatal("the dropped call never ended")
	}
	if r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "again"}}); err != nil || text(r) != "echo: again" {
		t.Errorf("the call after the drop: %v %q", err, text(r))
	}
}

// TestTrustedNetworks: a server not on the public internet is reachable
// from SVC_MCP_TRUSTED_CIDRS only, on its endpoint and through the
// aggregate, whose calls are checked per request (a session outlives the
// address it began from).
func TestTrustedNetworks(t *testing.T) {
	var from atomic.Value
	from.Store(netip.MustParseAddr("198.51.100.7"))
	h := newHarness(t, func(s settings) {
		s.deps.TrustedCIDRs = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
		s.deps.ClientAddr = func(*http.Request) netip.Addr { return from.Load().(netip.Addr) }
	})
	private := false
	h.reg.mu.Lock()
	h.reg.m["inner"] = &mcpgw.Server{ID: "inner", BaseURL: h.up.url, Transport: mcpgw.TransportStreamable, AuthType: mcpgw.AuthNone,
		GuardrailMode: mcpgw.ModeLog, AvailableOnPublicInternet: &private}
	h.reg.mu.Unlock()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	_, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.url + "/inner/mcp/",
		HTTPClient: &http.Client{Transport: bearer{"sk-good"}}, MaxRetries: -1}, nil)
	if err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("the inner server from outside: %v, want a 403", err)
	}
	outside := h.connect(t, "/mcp/", "sk-good", nil)
	if names := strings.Join(toolNames(t, outside), ","); strings.Contains(names, "inner__") || !strings.Contains(names, "logged__echo") {
		t.Errorf("the aggregate from outside lists %s", names)
	}
	from.Store(netip.MustParseAddr("10.1.2.3"))
	inner := h.connect(t, "/inner/mcp/", "sk-good", nil)
	if r, err := inner.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "in"}}); err != nil || text(r) != "echo: in" {
		t.Errorf("the inner server from a trusted network: %v %q", err, text(r))
	}
	agg := h.connect(t, "/mcp/", "sk-good", nil)
	if names := strings.Join(toolNames(t, agg), ","); !strings.Contains(names, "inner__echo") {
		t.Errorf("the aggregate from a trusted network lists %s", names)
	}
	from.Store(netip.MustParseAddr("198.51.100.7"))
	before := h.up.calls.Load()
	if _, err := agg.CallTool(context.Background(), &mcp.CallToolParams{Name: "inner__echo", Arguments: map[string]any{"text": "x"}}); rpcCode(err) != httpapi.CodeForbidden {
		t.Errorf("a trusted session's call from outside: %v, want forbidden", err)
	}
	if h.up.calls.Load() != before {
		t.Error("the refused call reached the server")
	}
}

// TestRelay: resources and prompts of a server's endpoint are the
// upstream's.
func TestRelay(t *testing.T) {
	h := newHarness(t)
	h.up.srv.AddResource(&mcp.Resource{URI: "file:///readme.md", Name: "readme", MIMEType: "text/markdown"},
		func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: "# hello"}}}, nil
		})
	h.up.srv.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "who", Required: true}}},
		func(_ context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello " + r.Params.Arguments["who"]}}}}, nil
		})
	cs := h.connect(t, "/fs/mcp/", "sk-good", nil)
	ctx := context.Background()
	rl, err := cs.ListResources(ctx, nil)
	if err != nil || len(rl.Resources) != 1 || rl.Resources[0].URI != "file:///readme.md" {
		t.Fatalf("resources/list: %v %+v", err, rl)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///readme.md"})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "# hello" {
		t.Errorf("resources/read: %v %+v", err, rr)
	}
	pl, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(pl.Prompts) != 1 || pl.Prompts[0].Name != "greet" {
		t.Errorf("prompts/list: %v %+v", err, pl)
	}
	pg, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"who": "svc"}})
	if err != nil || len(pg.Messages) != 1 || pg.Messages[0].Content.(*mcp.TextContent).Text != "hello svc" {
		t.Errorf("prompts/get: %v %+v", err, pg)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///nope"}); err == nil {
		t.Error("an unknown resource was read")
	}
}

// TestAdmissionsSettled: every admission is settled once — the calls' by
// the gateway, and one the SDK refused before any call ran (a stale
// session) with nothing spent.
func TestAdmissionsSettled(t *testing.T) {
	h := newHarness(t)
	cs := h.connect(t, "/fs/mcp/", "sk-good", nil)
	for range 2 {
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
			t.Fatal(err)
		}
	}
	resp, _ := h.mcpPost(t, "/fs/mcp/", "sk-good", "stale-session", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"y"}}}`)
	if resp.StatusCode < 400 {
		t.Fatalf("a stale session: %d, want the SDK's refusal", resp.StatusCode)
	}
	if a, s := h.lim.admitted.Load(), h.lim.settled.Load(); a != 3 || s != a {
		t.Errorf("admitted %d, settled %d: want every admission settled once", a, s)
	}
}

// TestV1AdmittedOnce: a JSON-RPC tools/call on the plain route is admitted
// once (the pre-admission is the call's), and settled once.
func TestV1AdmittedOnce(t *testing.T) {
	h := newHarness(t)
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"y"}}}`,
		`{"name":"echo","arguments":{"text":"z"}}`,
	} {
		req, _ := http.NewRequest("POST", h.url+"/mcp/v1/fs/tools/call", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer sk-good")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", body, resp.StatusCode)
		}
	}
	if a, s := h.lim.admitted.Load(), h.lim.settled.Load(); a != 2 || s != 2 {
		t.Errorf("two calls: admitted %d, settled %d; want 2 and 2", a, s)
	}
}

// TestRelayedFailureIsGeneric: a relayed method (completion, resources)
// that fails below the protocol — the server gone — answers svc's generic
// upstream error, not the transport's text with the server's address.
func TestRelayedFailureIsGeneric(t *testing.T) {
	h := newHarness(t)
	cs := h.connect(t, "/fs/mcp/", "sk-good", nil)
	ctx := context.Background()
	if _, err := cs.ListResources(ctx, nil); err != nil {
		t.Fatalf("resources before the server went: %v", err)
	}
	addr := strings.TrimPrefix(h.up.url, "http://")
	h.up.hs.CloseClientConnections()
	h.up.hs.Close()
	_, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "p"},
		Argument: mcp.CompleteParamsArgument{Name: "a", Value: "x"}})
	if err == nil || rpcCode(err) != httpapi.CodeUpstream || strings.Contains(err.Error(), addr) {
		t.Errorf("completion with the server gone: %v, want svc's upstream error without %s", err, addr)
	}
	_, err = cs.ListResources(ctx, nil)
	if err == nil || rpcCode(err) != httpapi.CodeUpstream || strings.Contains(err.Error(), addr) {
		t.Errorf("resources with the server gone: %v, want svc's upstream error without %s", err, addr)
	}
}

// TestRelayBounded: a relayed method of a server that hangs ends at
// SVC_MCP_TIMEOUT, as a tool call does.
func TestRelayBounded(t *testing.T) {
	h := newHarness(t) // Timeout 300 ms
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	h.up.srv.AddResource(&mcp.Resource{URI: "mem://hang", Name: "hang"}, func(ctx context.Context, _ *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, errors.New("released")
	})
	cs := h.connect(t, "/fs/mcp/", "sk-good", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mem://hang"})
	if err == nil || time.Since(start) > 3*time.Second {
		t.Errorf("reading a hanging resource: %v after %v, want an error at the timeout", err, time.Since(start))
	}
}
