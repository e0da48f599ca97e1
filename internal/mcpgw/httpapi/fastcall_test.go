package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/mcpgw/httpapi"
)

// initBody is an initialize request as an MCP client sends it.
const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`

// mcpPost posts body to path as an MCP client would (JSON, accepting JSON
// and an event stream; key as the bearer; on session sid when set),
// headers overriding; it returns the answer with
// its body read.
func (h *harness) mcpPost(t testing.TB, path, key, sid, body string, headers ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", h.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// rawCall posts one tools/call on session sid with key, as an MCP client
// would, and returns the status, content type and body.
func (h *harness) rawCall(t *testing.T, path, key, sid, name, args string) (int, string, string) {
	t.Helper()
	resp, body := h.mcpPost(t, path, key, sid, `{"jsonrpc":"2.0","id":"c-7","method":"tools/call","params":{"name":"`+name+`","arguments":`+args+`}}`)
	return resp.StatusCode, resp.Header.Get("Content-Type"), body
}

// fastCallOnce makes the first fast call of a new session: the SDK runs
// the InitializedHandler that makes a session live after it has answered
// the client's notice, so the first calls may still be the SDK's.
func (h *harness) fastCallOnce(t *testing.T, path, sid, name, args string) (int, string, string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		status, ct, body := h.rawCall(t, path, "sk-good", sid, name, args)
		if ct == "application/json" || time.Now().After(deadline) {
			return status, ct, body
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type rpcAnswer struct {
	ID     string              `json:"id"`
	Result *mcp.CallToolResult `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestFastPath: a tools/call on a live session of the caller's is answered
// below the SDK, as one application/json response (the SDK's own answers
// are event streams) with the same result and errors; another caller's
// session, a session of another endpoint and a closed session are not.
func TestFastPath(t *testing.T) {
	h := newHarness(t)
	cs := h.connect(t, "/fs/mcp/", "sk-good", nil)
	sid := cs.ID()

	status, ct, body := h.fastCallOnce(t, "/fs/mcp/", sid, "echo", `{"text":"fast"}`)
	var a rpcAnswer
	if status != 200 || ct != "application/json" || json.Unmarshal([]byte(body), &a) != nil {
		t.Fatalf("fast call: %d %s %s", status, ct, body)
	}
	if a.ID != "c-7" || a.Error != nil || text(a.Result) != "echo: fast" {
		t.Errorf("fast call answered %s", body)
	}
	// The gateway's refusals keep their JSON-RPC codes.
	_, _, body = h.rawCall(t, "/fs/mcp/", "sk-good", sid, "write", `{"text":"x"}`)
	a = rpcAnswer{}
	if json.Unmarshal([]byte(body), &a) != nil || a.Error == nil || a.Error.Code != httpapi.CodeForbidden {
		t.Errorf("a disallowed tool: %s, want the forbidden code", body)
	}

	// Another caller with this session: the SDK's refusal, no call made.
	before := h.up.calls.Load()
	if status, _, body := h.rawCall(t, "/fs/mcp/", "sk-other", sid, "echo", `{"text":"x"}`); status != http.StatusForbidden {
		t.Errorf("another caller's session: %d %s, want 403", status, body)
	}
	// The session on another endpoint: not found there.
	if status, _, body := h.rawCall(t, "/logged/mcp/", "sk-good", sid, "echo", `{"text":"x"}`); status != http.StatusNotFound {
		t.Errorf("a session of another endpoint: %d %s, want 404", status, body)
	}
	if h.up.calls.Load() != before {
		t.Error("a refused call reached the server")
	}
	if a, s := h.lim.admitted.Load(), h.lim.settled.Load(); a != s {
		t.Errorf("admitted %d, settled %d: want every admission settled", a, s)
	}

	// Closed: the SDK forgets the session, and so does the fast path.
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		status, _, _ := h.rawCall(t, "/fs/mcp/", "sk-good", sid, "echo", `{"text":"x"}`)
		if status == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a closed session still answered %d", status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFastPathAggregate: the aggregate endpoint's calls take the fast path
// under their shown names.
func TestFastPathAggregate(t *testing.T) {
	h := newHarness(t)
	cs := h.connect(t, "/mcp/", "sk-good", nil)
	status, ct, body := h.fastCallOnce(t, "/mcp/", cs.ID(), "fs__echo", `{"text":"all"}`)
	var a rpcAnswer
	if status != 200 || ct != "application/json" || json.Unmarshal([]byte(body), &a) != nil || text(a.Result) != "echo: all" {
		t.Fatalf("aggregate fast call: %d %s %s", status, ct, body)
	}
	// The SDK client reads the JSON answer as it reads its own streams.
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fs__echo", Arguments: map[string]any{"text": "sdk"}})
	if err != nil || text(r) != "echo: sdk" {
		t.Fatalf("SDK client: %v %q", err, text(r))
	}
}

// TestNotFastPath: what the SDK must answer still reaches it, on a session
// the fast path serves — a request without an id (a notification), a
// batch, params or an id the SDK refuses, a name in another case, a
// request whose Accept, protocol version or Last-Event-ID the transport
// judges.
func TestNotFastPath(t *testing.T) {
	h := newHarness(t)
	cs := h.connect(t, "/fs/mcp/", "sk-good", nil)
	if _, ct, body := h.fastCallOnce(t, "/fs/mcp/", cs.ID(), "echo", `{"text":"live"}`); ct != "application/json" {
		t.Fatalf("the session never took the fast path: %s %s", ct, body)
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`
	for _, c := range []struct{ name, body, accept, header, value string }{
		{"notification", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"text":"n"}}}`, "", "", ""},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}}]`, "", "", ""},
		{"arguments not an object", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":[1]}}`, "", "", ""},
		{"accept json only", call, "application/json", "", ""},
		{"an id that is an object", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`, "", "", ""},
		{"a name in another case", `{"jsonrpc":"2.0","id":1,"METHOD":"tools/call","method":"ping","params":{"name":"echo","arguments":{"text":"a"}}}`, "", "", ""},
		{"another protocol version", call, "", "Mcp-Protocol-Version", "1999-01-01"},
		{"a resumed stream", call, "", "Last-Event-ID", "7"},
	} {
		headers := []string{}
		if c.accept != "" {
			headers = append(headers, "Accept", c.accept)
		}
		if c.header != "" {
			headers = append(headers, c.header, c.value)
		}
		resp, _ := h.mcpPost(t, "/fs/mcp/", "sk-good", cs.ID(), c.body, headers...)
		if resp.Header.Get("Content-Type") == "application/json" && resp.StatusCode == 200 {
			t.Errorf("%s: answered as the fast path answers", c.name)
		}
	}
	if a, s := h.lim.admitted.Load(), h.lim.settled.Load(); a != s {
		t.Errorf("admitted %d, settled %d: want every admission settled", a, s)
	}
}

// TestSessionOfAnotherEndpoint: a session opened on one endpoint and used
// on another runs nothing there, also before the handshake's end (the
// fast path knows only sessions that finished it; the SDK would run the
// call on the first endpoint's server after the second's checks).
func TestSessionOfAnotherEndpoint(t *testing.T) {
	h := newHarness(t)
	post := func(path, sid, body string) (*http.Response, string) { return h.mcpPost(t, path, "sk-good", sid, body) }
	resp, body := post("/logged/mcp/", "", initBody)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	before := h.up.calls.Load()
	// No notifications/initialized: straight to a call on another endpoint.
	_, body = post("/fs/mcp/", sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write","arguments":{"text":"x"}}}`)
	if !strings.Contains(body, "another endpoint") || h.up.calls.Load() != before {
		t.Errorf("a call through another endpoint: %s (server calls %d → %d), want it refused", body, before, h.up.calls.Load())
	}
	// On its own endpoint the session works.
	_, body = post("/logged/mcp/", sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"own"}}}`)
	if !strings.Contains(body, "echo: own") {
		t.Errorf("a call on the session's own endpoint: %s", body)
	}
}

// rawSession opens a session without an SDK client (so without the
// standalone stream an SDK client holds open): initialize, then
// notifications/initialized; it returns the session id.
func (h *harness) rawSession(t *testing.T, path string) string {
	t.Helper()
	resp, _ := h.mcpPost(t, path, "sk-good", "", initBody)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("initialize opened no session")
	}
	if resp, _ := h.mcpPost(t, path, "sk-good", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode >= 300 {
		t.Fatalf("initialized: %d", resp.StatusCode)
	}
	return sid
}

// TestIdleSessionsClosed: a session with no request open and none for
// SessionIdle is closed (a client gone without DELETE leaves nothing
// behind); requests, the fast path's too, keep it open, and so does an SDK
// client's standalone stream.
func TestIdleSessionsClosed(t *testing.T) {
	h := newHarness(t, func(s settings) { s.deps.SessionIdle = 400 * time.Millisecond })
	sid := h.rawSession(t, "/fs/mcp/")
	if _, ct, body := h.fastCallOnce(t, "/fs/mcp/", sid, "echo", `{"text":"live"}`); ct != "application/json" {
		t.Fatalf("the session never took the fast path: %s %s", ct, body)
	}
	for range 6 { // 600 ms of fast calls, 100 ms apart: never idle
		time.Sleep(100 * time.Millisecond)
		if status, ct, body := h.rawCall(t, "/fs/mcp/", "sk-good", sid, "echo", `{"text":"busy"}`); status != 200 || ct != "application/json" {
			t.Fatalf("a busy session: %d %s %s", status, ct, body)
		}
	}
	connected := h.connect(t, "/fs/mcp/", "sk-good", nil) // holds its stream open
	// Idle for well over SessionIdle (the reaper looks every quarter of it).
	time.Sleep(1200 * time.Millisecond)
	if status, _, body := h.rawCall(t, "/fs/mcp/", "sk-good", sid, "echo", `{"text":"late"}`); status != http.StatusNotFound {
		t.Fatalf("an idle session still answers %d %s", status, body)
	}
	if r, err := connected.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "still here"}}); err != nil || text(r) != "echo: still here" {
		t.Errorf("a connected client's session: %v %q, want it kept", err, text(r))
	}
}

// TestSessionsPerCallerBounded: a caller holds at most MaxSessions open;
// another initialize is refused (429) until one closes, and other callers
// are not affected.
func TestSessionsPerCallerBounded(t *testing.T) {
	h := newHarness(t, func(s settings) { s.deps.MaxSessions = 2 })
	a := h.connect(t, "/fs/mcp/", "sk-good", nil)
	h.connect(t, "/mcp/", "sk-good", nil)
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	connect := func(key string) (*mcp.ClientSession, error) {
		return c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: h.url + "/fs/mcp/",
			HTTPClient: &http.Client{Transport: bearer{key}}}, nil)
	}
	if cs, err := connect("sk-good"); err == nil {
		cs.Close()
		t.Fatal("a third session of the same caller was opened")
	} else if !strings.Contains(err.Error(), "429") && !strings.Contains(err.Error(), "Too Many") && !strings.Contains(err.Error(), "too_many_sessions") {
		t.Errorf("a third session: %v, want a 429", err)
	}
	other, err := connect("sk-other")
	if err != nil {
		t.Fatalf("another caller: %v", err)
	}
	other.Close()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		cs, err := connect("sk-good")
		if err == nil {
			cs.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after one closed, a new session: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestUnfinishedHandshakeReaped: a session whose client never finishes the
// handshake is closed when idle too.
func TestUnfinishedHandshakeReaped(t *testing.T) {
	h := newHarness(t, func(s settings) { s.deps.SessionIdle = 300 * time.Millisecond })
	resp, _ := h.mcpPost(t, "/fs/mcp/", "sk-good", "", initBody)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session")
	}
	time.Sleep(time.Second)
	if status, _, body := h.rawCall(t, "/fs/mcp/", "sk-good", sid, "echo", `{"text":"late"}`); status != http.StatusNotFound {
		t.Errorf("a session idle since its initialize still answers %d %s", status, body)
	}
}

// TestSessionBoundHolds: concurrent initializes, in every form the SDK
// takes (one object, a batch, duplicate keys), open no more sessions than
// the bound, and each one opened is recorded (so reaped when idle).
func TestSessionBoundHolds(t *testing.T) {
	h := newHarness(t, func(s settings) { s.deps.MaxSessions = 2; s.deps.SessionIdle = 300 * time.Millisecond })
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	bodies := []string{init, "[" + init + "]", strings.Replace(init, `"id":1`, `"id":1,"id":1`, 1)}
	var mu sync.Mutex
	var sids []string
	var wg sync.WaitGroup
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := h.mcpPost(t, "/fs/mcp/", "sk-good", "", bodies[i%len(bodies)])
			if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && resp.StatusCode == 200 {
				mu.Lock()
				sids = append(sids, sid)
				mu.Unlock()
			} else if resp.StatusCode != http.StatusTooManyRequests {
				t.Errorf("an initialize over the bound: %d, want 429", resp.StatusCode)
			}
		}()
	}
	wg.Wait()
	if len(sids) == 0 || len(sids) > 2 {
		t.Fatalf("%d sessions opened, want 1 or 2 (the bound)", len(sids))
	}
	time.Sleep(time.Second) // idle: every one opened is closed
	for _, sid := range sids {
		if status, _, _ := h.rawCall(t, "/fs/mcp/", "sk-good", sid, "echo", `{"text":"x"}`); status != http.StatusNotFound {
			t.Errorf("session %s, idle, answers %d: it was not recorded", sid, status)
		}
	}
}
