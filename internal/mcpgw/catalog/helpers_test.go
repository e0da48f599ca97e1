package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/mcpgw"
	"github.com/svc-gateway/svc/internal/store"
)

// registry is an in-memory mcpgw.Servers.
type registry struct {
	mu      sync.Mutex
	servers map[string]*mcpgw.Server
	fail    error
}

func newRegistry() *registry { return &registry{servers: map[string]*mcpgw.Server{}} }

func (r *registry) put(s *mcpgw.Server) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.servers[s.ID] = s
}

func (r *registry) remove(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.servers, id)
}

func (r *registry) Server(_ context.Context, id string) (*mcpgw.Server, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return nil, r.fail
	}
	s, ok := r.servers[id]
	if !ok {
		return nil, store.ErrNotFound
	}
	return s, nil
}

func (r *registry) Servers(context.Context) ([]*mcpgw.Server, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return nil, r.fail
	}
	out := make([]*mcpgw.Server, 0, len(r.servers))
	for _, s := range r.servers {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *mcpgw.Server) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// upstream is the Lister over real MCP servers (the SDK's), one client
// session each over in-memory transports.
type upstream struct {
	mu       sync.Mutex
	servers  map[string]*mcp.Server
	sessions map[string]*mcp.ClientSession
	fail     map[string]error
	gate     chan struct{} // when set, ListTools waits for it to close
	calls    atomic.Int64
	// onListChanged runs when a server sends notifications/tools/list_changed.
	onListChanged func(serverID string)
}

func newUpstream() *upstream {
	return &upstream{servers: map[string]*mcp.Server{}, sessions: map[string]*mcp.ClientSession{}, fail: map[string]error{}}
}

// add starts an MCP server with tools and connects a client session to it.
func (u *upstream) add(t *testing.T, id string, tools ...*mcp.Tool) *mcp.Server {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: id, Version: "v1.0.0"}, nil)
	for _, tool := range tools {
		srv.AddTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	}
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server %s: connect: %v", id, err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "svc-test", Version: "v0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			if f := u.onListChanged; f != nil {
				f(id)
			}
		},
	})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("client of %s: connect: %v", id, err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	u.mu.Lock()
	u.servers[id], u.sessions[id] = srv, cs
	u.mu.Unlock()
	return srv
}

func (u *upstream) setFail(id string, err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.fail[id] = err
}

func (u *upstream) ListTools(ctx context.Context, s *mcpgw.Server) ([]*mcp.Tool, error) {
	u.calls.Add(1)
	u.mu.Lock()
	gate, err, cs := u.gate, u.fail[s.ID], u.sessions[s.ID]
	u.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return nil, errors.New("no session")
	}
	var tools []*mcp.Tool
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		tools = append(tools, tool)
	}
	return tools, nil
}

// testTools is testdata/tools.json.
type testTools struct {
	Servers []struct {
		ID          string `json:"id"`
		Name        string `json:"name"`
		Description string `json:"description"`
		Tools       []struct {
			Name        string            `json:"name"`
			Description string            `json:"description"`
			Params      map[string]string `json:"params"`
		} `json:"tools"`
	} `json:"servers"`
}

// schema is an input schema with the params as string properties.
func schema(params map[string]string) json.RawMessage {
	props := map[string]any{}
	for name, desc := range params {
		props[name] = map[string]any{"type": "string", "description": desc}
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
	return b
}

func tool(name, description string, params map[string]string) *mcp.Tool {
	return &mcp.Tool{Name: name, Description: description, InputSchema: schema(params)}
}

// loadTestdata registers the servers of testdata/tools.json in reg and up.
func loadTestdata(t *testing.T, reg *registry, up *upstream) int {
	t.Helper()
	b, err := os.ReadFile("testdata/tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var tt testTools
	if err := json.Unmarshal(b, &tt); err != nil {
		t.Fatalf("testdata/tools.json: %v", err)
	}
	n := 0
	for _, s := range tt.Servers {
		var tools []*mcp.Tool
		for _, tl := range s.Tools {
			tools = append(tools, tool(tl.Name, tl.Description, tl.Params))
		}
		n += len(tools)
		reg.put(&mcpgw.Server{ID: s.ID, Name: s.Name, Description: s.Description})
		up.add(t, s.ID, tools...)
	}
	return n
}

func newCatalog(t *testing.T, reg *registry, up Lister, o Options) *Catalog {
	t.Helper()
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return New(reg, up, o)
}

// toolNames lists the catalog's tools as server/name.
func toolNames(l Listing) []string {
	var out []string
	for _, s := range l.Servers {
		for _, t := range s.Tools {
			out = append(out, fmt.Sprintf("%s/%s", s.ServerID, t.Name))
		}
	}
	return out
}

// countingEmbedder wraps an embedder, counting the texts it embeds, and
// fails while fail is set.
type countingEmbedder struct {
	inner interface {
		Name() string
		Dim() int
		Embed(context.Context, []string) ([][]float32, error)
	}
	texts atomic.Int64
	fail  atomic.Bool
}

func (e *countingEmbedder) Name() string { return e.inner.Name() }
func (e *countingEmbedder) Dim() int     { return e.inner.Dim() }
func (e *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if e.fail.Load() {
		return nil, errors.New("embedding provider: 503 service unavailable")
	}
	e.texts.Add(int64(len(texts)))
	return e.inner.Embed(ctx, texts)
}
