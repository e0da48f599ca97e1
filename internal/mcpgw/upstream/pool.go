// Package upstream holds the tool gateway's client sessions to registered
// MCP servers, made with the MCP Go SDK's client: one shared session per
// server (streamable HTTP, the older HTTP+SSE transport, a stdio program,
// or a server svc hosts in process), opened on first use, reopened after it
// fails, closed when the registration changes. Each HTTP request carries
// the registration's credential (bearer, a named header, or an OAuth
// token), never anything of the caller's; responses are bounded. The tool
// list of each server is cached until the server says it changed
// (notifications/tools/list_changed) or the registration changes.
//
// It implements mcpgw.Upstream; the wiring and the HTTP surface import it.
package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/mcpgw"
)

// Credentials gives a registration's secrets: the auth token and a stdio
// program's environment.
type Credentials interface {
	Credential(ctx context.Context, id string) (token string, env map[string]string, err error)
}

// Tokens gives the OAuth access token of a server (refreshed as needed).
type Tokens interface {
	AccessToken(ctx context.Context, serverID string) (string, error)
}

// Hosted opens an in-process MCP server for a registration svc hosts
// itself (TransportOpenAPI). authorize sets the registration's credential
// on a request the hosted server sends, replacing any the request carries.
type Hosted interface {
	Open(ctx context.Context, s *mcpgw.Server, authorize func(*http.Request) error) (*mcp.Server, error)
}

// Options configure a Pool.
type Options struct {
	// Client makes the HTTP requests (the egress policy's client: it
	// refuses forbidden addresses at connect time and follows no
	// redirects). Required for HTTP transports.
	Client *http.Client
	// MaxResultBytes bounds one response from a server
	// (SVC_MCP_MAX_RESULT_BYTES).
	MaxResultBytes int64
	// ToolsTTL bounds how long a tool list is trusted without a notice
	// (default 5 minutes).
	ToolsTTL time.Duration
	// OnToolsChanged is called (in its own goroutine) when a server says
	// its tools changed.
	OnToolsChanged func(serverID string)
	Credentials    Credentials
	Tokens         Tokens
	Hosted         Hosted
	Logger         *slog.Logger
	// Version is the client version svc announces.
	Version string
}

// Pool is the set of sessions, one per registered server.
type Pool struct {
	opts   Options
	mu     sync.Mutex
	conn   map[string]*conn // by server id
	closed bool             // Close was called: no session is opened again
}

// ErrClosed is returned by a Pool after Close.
var ErrClosed = errors.New("upstream: the session pool is closed")

// conn is one server's session and its cached tools.
type conn struct {
	version time.Time // the registration's UpdatedAt the session was opened for
	ready   chan struct{}
	session *mcp.ClientSession
	err     error
	auth    *authorizer // what the session sends the server (nil: nothing)
	direct  *direct     // streamable HTTP: tools/call posted by svc (direct.go)

	mu      sync.Mutex
	tools   []*mcp.Tool
	toolsAt time.Time
}

// New returns an empty pool.
func New(o Options) *Pool {
	if o.ToolsTTL <= 0 {
		o.ToolsTTL = 5 * time.Minute
	}
	if o.MaxResultBytes <= 0 {
		o.MaxResultBytes = 10 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Pool{opts: o, conn: make(map[string]*conn)}
}

// ListTools returns the server's tools, from the cache when fresh.
func (p *Pool) ListTools(ctx context.Context, s *mcpgw.Server) ([]*mcp.Tool, error) {
	c, err := p.get(ctx, s)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	tools, at := c.tools, c.toolsAt
	c.mu.Unlock()
	if tools != nil && time.Since(at) < p.opts.ToolsTTL {
		return tools, nil
	}
	var list []*mcp.Tool
	for t, err := range c.session.Tools(ctx, nil) {
		if err != nil {
			p.drop(s.ID, c)
			return nil, fmt.Errorf("listing the tools of %q: %w", s.ID, err)
		}
		list = append(list, t)
		if len(list) > 10000 {
			return nil, fmt.Errorf("server %q lists more than 10000 tools", s.ID)
		}
	}
	if list == nil {
		list = []*mcp.Tool{}
	}
	c.mu.Lock()
	c.tools, c.toolsAt = list, time.Now()
	c.mu.Unlock()
	return list, nil
}

// CallTool calls a tool on the server's session. A session that failed is
// dropped, so the next call opens a new one.
func (p *Pool) CallTool(ctx context.Context, s *mcpgw.Server, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	r, _, err := p.CallToolJSON(ctx, s, params)
	return r, err
}

// CallToolJSON is CallTool that also gives the result's JSON, as
// json.Marshal writes it, when the direct path read a result of text
// content only (nil otherwise): the surfaces answer with it instead of
// encoding the result again (mcpgw.JSONCaller).
func (p *Pool) CallToolJSON(ctx context.Context, s *mcpgw.Server, params *mcp.CallToolParams) (*mcp.CallToolResult, []byte, error) {
	c, err := p.get(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	r, plain, err := p.callDirect(ctx, s.ID, c, params)
	if errors.Is(err, errNotDirect) {
		plain = false
		r, err = c.session.CallTool(ctx, params)
	}
	if err != nil {
		if ctx.Err() == nil && isConnectionError(err) {
			p.drop(s.ID, c)
		}
		return nil, nil, scrubError(c.auth, err)
	}
	if n := resultSize(r); n > p.opts.MaxResultBytes {
		return nil, nil, &TooLargeError{Limit: p.opts.MaxResultBytes}
	}
	// Every part of the result (text, embedded resources, structured
	// content) is cleaned of the credentials the session sent.
	var enc []byte // a plain result's JSON, encoded once for the check and the caller
	if plain {
		if e, err := mcpgw.AppendResult(nil, r); err == nil {
			enc = e
		}
	}
	r, same, err := mcpgw.ScrubEncoded(c.auth.scrubber(), r, enc)
	if err != nil || !same {
		return r, nil, err
	}
	return r, enc, nil
}

// Session returns the server's session, for the calls the gateway relays
// as they are (resources, prompts, completion), and the scrubber their
// answers must pass through (nil when the session sends no credential):
// see Scrub.
func (p *Pool) Session(ctx context.Context, s *mcpgw.Server) (*mcp.ClientSession, *apierr.Scrubber, error) {
	c, err := p.get(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	return c.session, c.auth.scrubber(), nil
}

// TooLargeError is a server's answer over MaxResultBytes.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the tool server's answer is over %d bytes", e.Limit)
}

// Forget closes the session of a server whose registration changed or was
// removed.
func (p *Pool) Forget(id string) {
	p.mu.Lock()
	c := p.conn[id]
	delete(p.conn, id)
	p.mu.Unlock()
	if c != nil {
		go c.close()
	}
}

// toolsChanged handles a server's notice that its tools changed.
func (p *Pool) toolsChanged(id string) {
	p.ToolsChanged(id)
	if p.opts.OnToolsChanged != nil {
		go p.opts.OnToolsChanged(id)
	}
}

// ToolsChanged drops a server's cached tools.
func (p *Pool) ToolsChanged(id string) {
	p.mu.Lock()
	c := p.conn[id]
	p.mu.Unlock()
	if c != nil {
		c.mu.Lock()
		c.tools = nil
		c.mu.Unlock()
	}
}

// Close closes every session; later calls fail with ErrClosed (a session
// opened after Close would never be closed).
func (p *Pool) Close() error {
	p.mu.Lock()
	conns := p.conn
	p.conn = make(map[string]*conn)
	p.closed = true
	p.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
	return nil
}

func (c *conn) close() {
	<-c.ready
	if c.session != nil {
		_ = c.session.Close()
	}
}

// get returns the server's open session, opening it once for concurrent
// callers.
func (p *Pool) get(ctx context.Context, s *mcpgw.Server) (*conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // opening a session for a caller already gone would be waste
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	c := p.conn[s.ID]
	if c != nil && !c.version.Equal(s.UpdatedAt) {
		delete(p.conn, s.ID)
		go c.close()
		c = nil
	}
	if c == nil {
		c = &conn{version: s.UpdatedAt, ready: make(chan struct{})}
		p.conn[s.ID] = c
		go p.open(s, c)
	}
	p.mu.Unlock()
	select {
	case <-c.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if c.err != nil {
		p.drop(s.ID, c)
		return nil, c.err
	}
	return c, nil
}

// open connects in the background, so a caller that gives up does not
// cancel the connection others wait for; it is bounded by connectTimeout.
func (p *Pool) open(s *mcpgw.Server, c *conn) {
	defer close(c.ready)
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	t, a, err := p.transport(ctx, s)
	if err != nil {
		c.err = err
		return
	}
	c.auth = a
	id := s.ID
	client := mcp.NewClient(&mcp.Implementation{Name: "svc", Version: p.opts.Version}, &mcp.ClientOptions{
		Capabilities:           &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { p.toolsChanged(id) },
	})
	if st, ok := t.(*mcp.StreamableClientTransport); ok {
		c.direct = newDirect(st)
	}
	c.session, c.err = client.Connect(ctx, t, nil)
	if c.err != nil {
		c.err = scrubError(a, fmt.Errorf("connecting to MCP server %q: %w", s.ID, c.err))
		return
	}
	if c.direct != nil {
		c.direct.opened(c.session)
	}
}

const connectTimeout = 30 * time.Second

// drop removes c if it is still the server's connection.
func (p *Pool) drop(id string, c *conn) {
	p.mu.Lock()
	if p.conn[id] == c {
		delete(p.conn, id)
	} else {
		c = nil
	}
	p.mu.Unlock()
	if c != nil {
		go c.close()
	}
}

// transport builds the SDK transport of a registration, and the authorizer
// that sets (and remembers) its credential; nil for stdio without env.
func (p *Pool) transport(ctx context.Context, s *mcpgw.Server) (mcp.Transport, *authorizer, error) {
	if s.Transport == mcpgw.TransportStdio {
		return p.stdio(ctx, s)
	}
	a, err := p.authorizer(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	switch s.Transport {
	case mcpgw.TransportStreamable, "":
		hc, err := p.httpClient(a)
		if err != nil {
			return nil, nil, err
		}
		return &mcp.StreamableClientTransport{Endpoint: s.BaseURL, HTTPClient: hc, MaxRetries: 1, MaxEventSize: int(p.opts.MaxResultBytes) + 64<<10}, a, nil
	case mcpgw.TransportSSE:
		hc, err := p.httpClient(a)
		if err != nil {
			return nil, nil, err
		}
		return &mcp.SSEClientTransport{Endpoint: s.BaseURL, HTTPClient: hc, MaxEventSize: int(p.opts.MaxResultBytes) + 64<<10}, a, nil
	case mcpgw.TransportOpenAPI:
		if p.opts.Hosted == nil {
			return nil, nil, errors.New("no host for generated servers")
		}
		srv, err := p.opts.Hosted.Open(ctx, s, a.apply)
		if err != nil {
			return nil, nil, err
		}
		ct, st := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			return nil, nil, err
		}
		return ct, a, nil
	}
	return nil, nil, fmt.Errorf("unknown transport %q", s.Transport)
}

// stdio runs the registration's program with only its own environment;
// the environment's values are the secrets its answers are cleaned of.
func (p *Pool) stdio(ctx context.Context, s *mcpgw.Server) (mcp.Transport, *authorizer, error) {
	var env map[string]string
	if p.opts.Credentials != nil {
		var err error
		if _, env, err = p.opts.Credentials.Credential(ctx, s.ID); err != nil {
			return nil, nil, err
		}
	}
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	a := &authorizer{pool: p, server: s.ID}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
		a.secrets = append(a.secrets, v)
	}
	return &mcp.CommandTransport{Command: cmd}, a, nil
}
