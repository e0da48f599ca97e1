package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/mcpgw"
)

// calls records the ids of the tools/call requests a server received.
type calls struct {
	mu  sync.Mutex
	ids []string
	// expire answers 404 (an expired session) to svc's own ids.
	expire bool
}

func (c *calls) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(b, &m) == nil && m.Method == "tools/call" {
				c.mu.Lock()
				c.ids = append(c.ids, string(m.ID))
				expire := c.expire && strings.HasPrefix(string(m.ID), `"svc-`)
				c.mu.Unlock()
				if expire {
					http.Error(w, "session not found", http.StatusNotFound)
					return
				}
			}
		}
		h.ServeHTTP(w, r)
	})
}

func (c *calls) seen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.ids...)
}

// toolServer serves tools that answer, ask the client for its roots, and
// wait for cancellation; cancelled receives when the waiting tool stops.
func toolServer(t *testing.T, c *calls, opts *mcp.StreamableHTTPOptions) (string, chan struct{}) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "tools", Version: "1"}, nil)
	type in struct {
		Text string `json:"text,omitempty"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + a.Text}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "roots"}, func(ctx context.Context, req *mcp.CallToolRequest, _ in) (*mcp.CallToolResult, any, error) {
		//lint:ignore SA1019 any request of the server's during a call will do; roots/list needs no client capability
		_, err := req.Session.ListRoots(ctx, nil)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "asked: " + errText(err)}}}, nil, nil
	})
	var runs atomic.Int64
	mcp.AddTool(srv, &mcp.Tool{Name: "closes"}, func(ctx context.Context, req *mcp.CallToolRequest, _ in) (*mcp.CallToolResult, any, error) {
		runs.Add(1)
		// A long-running tool's server closes the stream and the client
		// comes back for the answer (SEP-1699).
		if req.Extra != nil && req.Extra.CloseSSEStream != nil {
			req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 20 * time.Millisecond})
		}
		time.Sleep(100 * time.Millisecond)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("done after %d run(s)", runs.Load())}}}, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "nags"}, func(ctx context.Context, req *mcp.CallToolRequest, _ in) (*mcp.CallToolResult, any, error) {
		for range 40 {
			//lint:ignore SA1019 any request of the server's during a call will do
			_, _ = req.Session.ListRoots(ctx, nil)
		}
		return &mcp.CallToolResult{}, nil, nil
	})
	cancelled := make(chan struct{}, 1)
	mcp.AddTool(srv, &mcp.Tool{Name: "wait"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ in) (*mcp.CallToolResult, any, error) {
		select {
		case <-ctx.Done():
			cancelled <- struct{}{}
		case <-time.After(10 * time.Second):
		}
		return &mcp.CallToolResult{}, nil, nil
	})
	hs := httptest.NewServer(c.wrap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts)))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	return hs.URL, cancelled
}

func errText(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

func newPool(t *testing.T) *Pool {
	p := New(Options{Client: http.DefaultClient, MaxResultBytes: 1 << 20})
	t.Cleanup(func() { p.Close() })
	return p
}

func callEcho(t *testing.T, p *Pool, s *mcpgw.Server, text string) {
	t.Helper()
	r, err := p.CallTool(context.Background(), s, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Content[0].(*mcp.TextContent).Text; got != "echo: "+text {
		t.Fatalf("echo %q answered %q", text, got)
	}
}

// TestDirectCalls: tools/call is posted by svc itself (its "svc-<n>" ids),
// whether the server answers with an event stream (the SDK's default) or
// with JSON.
func TestDirectCalls(t *testing.T) {
	for _, json := range []bool{false, true} {
		c := &calls{}
		url, _ := toolServer(t, c, &mcp.StreamableHTTPOptions{JSONResponse: json})
		s := &mcpgw.Server{ID: "t", BaseURL: url, AuthType: mcpgw.AuthNone, UpdatedAt: time.Now()}
		p := newPool(t)
		callEcho(t, p, s, "one")
		callEcho(t, p, s, "two")
		if got := c.seen(); len(got) != 2 || got[0] != `"svc-1"` || got[1] != `"svc-2"` {
			t.Errorf("JSON answers %v: the server saw calls %v, want svc's own two", json, got)
		}
	}
}

// TestDirectFallsBack: a server that refuses svc's request before running
// anything (here 404, an expired session) gets the call from the SDK's
// client instead, once.
func TestDirectFallsBack(t *testing.T) {
	c := &calls{expire: true}
	url, _ := toolServer(t, c, nil)
	p := newPool(t)
	callEcho(t, p, &mcpgw.Server{ID: "t", BaseURL: url, AuthType: mcpgw.AuthNone, UpdatedAt: time.Now()}, "x")
	if got := c.seen(); len(got) != 2 || got[0] != `"svc-1"` || strings.HasPrefix(got[1], `"svc-`) {
		t.Errorf("the server saw calls %v, want svc's refused one then the SDK's", got)
	}
}

// TestDirectRefusesServerRequests: a server that asks the client something
// during a call (roots/list) is answered with an error, and the call ends.
func TestDirectRefusesServerRequests(t *testing.T) {
	url, _ := toolServer(t, &calls{}, nil)
	p := newPool(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := p.CallTool(ctx, &mcpgw.Server{ID: "t", BaseURL: url, AuthType: mcpgw.AuthNone, UpdatedAt: time.Now()},
		&mcp.CallToolParams{Name: "roots", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Content[0].(*mcp.TextContent).Text; got == "asked: no error" || !strings.HasPrefix(got, "asked: ") {
		t.Errorf("the tool got %q, want svc's refusal", got)
	}
}

// TestDirectCancels: a call svc gives up on is cancelled on the server too.
func TestDirectCancels(t *testing.T) {
	url, cancelled := toolServer(t, &calls{}, nil)
	p := newPool(t)
	s := &mcpgw.Server{ID: "t", BaseURL: url, AuthType: mcpgw.AuthNone, UpdatedAt: time.Now()}
	callEcho(t, p, s, "open the session first")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := p.CallTool(ctx, s, &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}}); err == nil {
		t.Fatal("a call past its deadline succeeded")
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Error("the server's tool was not cancelled")
	}
}

// TestDirectPrimedAndResumed: a server with an event store primes each
// stream with an event that has an id and no data, and may close a stream
// before its answer (SEP-1699): the direct path skips the priming event and
// resumes the stream with Last-Event-ID, so the tool runs once and its
// answer arrives, without the SDK's client.
func TestDirectPrimedAndResumed(t *testing.T) {
	c := &calls{}
	url, _ := toolServer(t, c, &mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)})
	p := newPool(t)
	s := &mcpgw.Server{ID: "t", BaseURL: url, AuthType: mcpgw.AuthNone, UpdatedAt: time.Now()}
	callEcho(t, p, s, "primed")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := p.CallTool(ctx, s, &mcp.CallToolParams{Name: "closes", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("a call whose stream the server closed: %v", err)
	}
	if got := r.Content[0].(*mcp.TextContent).Text; got != "done after 1 run(s)" {
		t.Errorf("answer %q, want the one run's", got)
	}
	if got := c.seen(); len(got) != 2 || got[1] != `"svc-2"` {
		t.Errorf("the server saw calls %v, want svc's own two", got)
	}
}

// TestDirectRefusalsBounded: a server that keeps asking during a call
// fails the call instead of holding svc to it.
func TestDirectRefusalsBounded(t *testing.T) {
	url, _ := toolServer(t, &calls{}, nil)
	p := newPool(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := p.CallTool(ctx, &mcpgw.Server{ID: "t", BaseURL: url, AuthType: mcpgw.AuthNone, UpdatedAt: time.Now()},
		&mcp.CallToolParams{Name: "nags", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "requests during one call") {
		t.Errorf("a server asking 40 times: %v, want the call failed", err)
	}
}

// TestCallToolJSON: a text result read by the direct path comes with its
// JSON, exactly what json.Marshal writes for it, from an event stream or a
// JSON answer.
func TestCallToolJSON(t *testing.T) {
	for _, jsonAnswer := range []bool{false, true} {
		url, _ := toolServer(t, &calls{}, &mcp.StreamableHTTPOptions{JSONResponse: jsonAnswer})
		p := newPool(t)
		s := &mcpgw.Server{ID: "t", BaseURL: url, AuthType: mcpgw.AuthNone, UpdatedAt: time.Now()}
		r, enc, err := p.CallToolJSON(context.Background(), s, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "<a & b>"}})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(r)
		if !bytes.Equal(enc, want) || !strings.Contains(string(enc), `echo: \u003ca \u0026 b\u003e`) {
			t.Errorf("JSON answers %v: result's JSON %s, want %s", jsonAnswer, enc, want)
		}
	}
}

// TestDirectReusesConnections: the direct path reads an answer to the end
// of its body, so the connection is reused even when the server ends the
// body a moment after the answer: an event stream's rest is read after its
// message, a JSON body whole before it is decoded. Closed before its end,
// every call would dial anew. The calls are spaced by more than that
// moment, so that a connection is free again for the next one (back to
// back, the calls would need as many connections as fit in it, which
// depends on the machine's speed).
func TestDirectReusesConnections(t *testing.T) {
	const end, calls = 5 * time.Millisecond, 12
	for _, jsonAnswer := range []bool{false, true} {
		url, conns := lateEndServer(t, jsonAnswer, end)
		p := New(Options{Client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}, MaxResultBytes: 1 << 20})
		t.Cleanup(func() { p.Close() })
		s := &mcpgw.Server{ID: "t", BaseURL: url, AuthType: mcpgw.AuthNone, UpdatedAt: time.Now()}
		callEcho(t, p, s, "open the session")
		before := conns.Load()
		for i := range calls {
			callEcho(t, p, s, strconv.Itoa(i))
			time.Sleep(3 * end)
		}
		if n := conns.Load() - before; n > calls/4 {
			t.Errorf("JSON answers %v: %d calls opened %d connections, want about one", jsonAnswer, calls, n)
		}
	}
}

// lateEndServer serves an echo tool whose answers (an event stream, or
// JSON) are sent at once and their bodies ended after end; conns counts
// the connections it accepted.
func lateEndServer(t *testing.T, jsonAnswer bool, end time.Duration) (string, *atomic.Int64) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "tools", Version: "1"}, nil)
	type in struct {
		Text string `json:"text,omitempty"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + a.Text}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: jsonAnswer})
	conns := new(atomic.Int64)
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		if r.Method == http.MethodPost {
			w.(http.Flusher).Flush() // the answer goes (a JSON body chunked)
			time.Sleep(end)          // and its body's end waits
		}
	}))
	hs.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	hs.Start()
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	return hs.URL, conns
}
