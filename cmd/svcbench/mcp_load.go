package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fake MCP server's registration and tools.
const (
	mcpServerID   = "bench"
	mcpEchoTool   = "echo"   // not read-only: answers "echo:" + text
	mcpLookupTool = "lookup" // read-only (readOnlyHint): answers "found:" + text
)

// envMCPUpstream ("1") makes a child of svcbench serve the fake MCP server
// on SVCBENCH_ADDR.
const envMCPUpstream = "SVCBENCH_MCP_UPSTREAM"

// mcpUpstreamChildEnv is the environment that makes a child serve the fake
// MCP server.
func mcpUpstreamChildEnv(addr string) []string {
	return []string{envMCPUpstream + "=1", envAddr + "=" + addr}
}

// mcpToolInput is the tools' argument.
type mcpToolInput struct {
	Text string `json:"text" jsonschema:"any text, answered back"`
}

// answers maps a tool to the prefix of its answer.
var answers = map[string]string{mcpEchoTool: "echo:", mcpLookupTool: "found:"}

// newMCPUpstream is the fake MCP server: the two tools, counting the calls
// that reach them.
func newMCPUpstream(echo, lookup *atomic.Int64) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "svcbench-fake", Version: "1"}, nil)
	answer := func(n *atomic.Int64, tool string) mcp.ToolHandlerFor[mcpToolInput, any] {
		return func(_ context.Context, _ *mcp.CallToolRequest, in mcpToolInput) (*mcp.CallToolResult, any, error) {
			n.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: answers[tool] + in.Text}}}, nil, nil
		}
	}
	mcp.AddTool(srv, &mcp.Tool{Name: mcpEchoTool, Description: "say the text back"}, answer(echo, mcpEchoTool))
	mcp.AddTool(srv, &mcp.Tool{Name: mcpLookupTool, Description: "look the text up",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, answer(lookup, mcpLookupTool))
	return srv
}

// startMCPUpstreamChild serves the fake MCP server at /mcp with the SDK's
// streamable-HTTP handler and its defaults (sessions, answers framed as
// SSE), to callers with svcbench's upstream key; GET /stats (no key) is the
// calls each tool served, as JSON.
func startMCPUpstreamChild() (string, func(), error) {
	var echo, lookup atomic.Int64
	mcpSrv := newMCPUpstream(&echo, &lookup)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return mcpSrv }, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+upstreamKey {
			http.Error(w, "unknown key", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]int64{mcpEchoTool: echo.Load(), mcpLookupTool: lookup.Load()})
	})
	ln, err := net.Listen("tcp", os.Getenv(envAddr))
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/mcp", func() { _ = srv.Close() }, nil
}

// upstreamCalls reads the fake's GET /stats (origin is its base URL).
func upstreamCalls(ctx context.Context, origin string) (map[string]int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, origin+"/stats", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out map[string]int64
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<10)).Decode(&out); err != nil {
		return nil, fmt.Errorf("the fake's /stats: %w", err)
	}
	return out, nil
}

// registerMCPServer registers the fake with svc (POST /api/mcp/servers on
// the proxy port, admin key), its credential svcbench's upstream key.
func registerMCPServer(ctx context.Context, proxyURL, admin, upstream string) error {
	body, _ := json.Marshal(map[string]any{"id": mcpServerID, "name": "svcbench fake", "base_url": upstream,
		"auth_type": "bearer", "auth_token": upstreamKey})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, proxyURL+"/api/mcp/servers", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+admin)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("registering the MCP server: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("registering the MCP server: status %d: %s", resp.StatusCode, bytes.TrimSpace(b))
	}
	return nil
}

// newSDKClient is the HTTP client under every SDK session: the load's
// transport (keep-alive, enough idle connections), no overall timeout,
// since each session keeps a long-lived SSE stream open; each call is
// bounded by its context instead.
func newSDKClient(maxConcurrency int) *http.Client {
	return newClient(maxConcurrency, 0)
}

// authTransport sets the Authorization header of every request.
type authTransport struct {
	base http.RoundTripper
	auth string
}

func (t authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", t.auth)
	return t.base.RoundTrip(r)
}

// connectMCP opens one SDK client session (initialize included) to
// endpoint, authenticated with auth, over base's transport.
func connectMCP(ctx context.Context, base *http.Client, endpoint, auth string) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "svcbench", Version: "1"}, nil)
	tr := base.Transport
	if tr == nil {
		tr = http.DefaultTransport
	}
	hc := &http.Client{Transport: authTransport{base: tr, auth: auth}}
	return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1}, nil)
}

// mcpCaller makes one tools/call and checks its answer. Each worker has its
// own; a caller is used by one goroutine at a time.
type mcpCaller interface {
	call(ctx context.Context) error
}

// sdkCaller calls a tool over an SDK session: with arguments of its own on
// every call, or (fixed) the same ones every time.
type sdkCaller struct {
	cs     *mcp.ClientSession
	tool   string
	prefix string
	fixed  bool
	seq    int
}

func (s *sdkCaller) call(ctx context.Context) error {
	text := "acme"
	if !s.fixed {
		s.seq++
		text = s.prefix + "-" + strconv.Itoa(s.seq)
	}
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: s.tool, Arguments: map[string]any{"text": text}})
	if err != nil {
		return err
	}
	return checkAnswer(res, answers[s.tool]+text)
}

// v1Caller calls the echo tool with POST /mcp/v1/{server_id}/tools/call,
// {name, arguments} as plain JSON.
type v1Caller struct {
	client *http.Client
	url    string
	auth   string
	prefix string
	seq    int
	buf    bytes.Buffer
}

func (v *v1Caller) call(ctx context.Context) error {
	v.seq++
	text := v.prefix + "-" + strconv.Itoa(v.seq) // no character JSON escapes
	body := `{"name":"` + mcpEchoTool + `","arguments":{"text":"` + text + `"}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", v.auth)
	req.Header.Set("Content-Type", "application/json")
	resp, err := v.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	v.buf.Reset()
	if _, err := v.buf.ReadFrom(io.LimitReader(resp.Body, 1<<20)); err != nil {
		return fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %.300s", resp.StatusCode, bytes.TrimSpace(v.buf.Bytes()))
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(v.buf.Bytes(), &res); err != nil {
		return fmt.Errorf("not a CallToolResult: %w: %.300s", err, v.buf.Bytes())
	}
	return checkAnswer(&res, answers[mcpEchoTool]+text)
}

// checkAnswer checks a result is one text, want.
func checkAnswer(res *mcp.CallToolResult, want string) error {
	var got string
	if len(res.Content) == 1 {
		if t, ok := res.Content[0].(*mcp.TextContent); ok {
			got = t.Text
		}
	}
	switch {
	case res.IsError:
		return fmt.Errorf("tool error: %.300s", got)
	case got != want:
		return fmt.Errorf("answer %.100q, want %q", got, want)
	}
	return nil
}

// runMCPPhase makes n calls of path p from its first c callers, each a
// worker making one call at a time, and gathers their latencies (sorted).
func runMCPPhase(ctx context.Context, p mcpPath, c, n int, timeout time.Duration) phaseResult {
	var (
		next atomic.Int64
		mu   sync.Mutex
		res  phaseResult
		wg   sync.WaitGroup
	)
	start := time.Now()
	for _, caller := range p.callers[:c] {
		wg.Go(func() {
			lat := make([]time.Duration, 0, n/c+1)
			var fails int
			var first error
			for ctx.Err() == nil && next.Add(1) <= int64(n) {
				callCtx, cancel := context.WithTimeout(ctx, timeout)
				t0 := time.Now()
				err := caller.call(callCtx)
				d := time.Since(t0)
				cancel()
				if err != nil {
					fails++
					if first == nil {
						first = fmt.Errorf("%s: %w", p.name, err)
					}
					continue
				}
				lat = append(lat, d)
			}
			mu.Lock()
			defer mu.Unlock()
			res.requests += len(lat) + fails
			res.failures += fails
			if res.firstError == nil {
				res.firstError = first
			}
			res.latency = append(res.latency, lat...)
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	slices.Sort(res.latency)
	return res
}
