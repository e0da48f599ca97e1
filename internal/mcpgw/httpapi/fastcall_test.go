package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/mcpgw/httpapi"
)

// rawCall posts one tools/call on session sid with key, as an MCP client
// would, and returns the status, content type and body.
func (h *harness) rawCall(t *testing.T, path, key, sid, name, args string) (int, string, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":"c-7","method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
	req, _ := http.NewRequest("POST", h.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
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

	status, ct, body := h.rawCall(t, "/fs/mcp/", "sk-good", sid, "echo", `{"text":"fast"}`)
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
	status, ct, body := h.rawCall(t, "/mcp/", "sk-good", cs.ID(), "fs__echo", `{"text":"all"}`)
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

// TestNotFastPath: what the SDK must answer still reaches it — a request
// without an id (a notification), a batch, params that do not decode, and
// a request whose Accept the transport refuses.
func TestNotFastPath(t *testing.T) {
	h := newHarness(t)
	cs := h.connect(t, "/fs/mcp/", "sk-good", nil)
	for _, c := range []struct{ name, body, accept string }{
		{"notification", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"text":"n"}}}`, ""},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}}]`, ""},
		{"arguments not an object", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":[1]}}`, ""},
		{"accept json only", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`, "application/json"},
	} {
		req, _ := http.NewRequest("POST", h.url+"/fs/mcp/", strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer sk-good")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if c.accept != "" {
			req.Header.Set("Accept", c.accept)
		}
		req.Header.Set("Mcp-Session-Id", cs.ID())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Header.Get("Content-Type") == "application/json" && resp.StatusCode == 200 {
			t.Errorf("%s: answered as the fast path answers", c.name)
		}
	}
	if a, s := h.lim.admitted.Load(), h.lim.settled.Load(); a != s {
		t.Errorf("admitted %d, settled %d: want every admission settled", a, s)
	}
}
