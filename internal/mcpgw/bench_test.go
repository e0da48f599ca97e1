package mcpgw

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/store"
)

// benchServers is one registration.
type benchServers struct{ s *Server }

func (b benchServers) Server(_ context.Context, id string) (*Server, error) {
	if id != b.s.ID {
		return nil, store.ErrNotFound
	}
	return b.s, nil
}
func (b benchServers) Servers(context.Context) ([]*Server, error) { return []*Server{b.s}, nil }

// benchUpstream answers every call at once.
type benchUpstream struct{ tools []*mcp.Tool }

func (b benchUpstream) ListTools(context.Context, *Server) ([]*mcp.Tool, error) { return b.tools, nil }
func (b benchUpstream) CallTool(context.Context, *Server, *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
}

// benchScanner counts the texts it is given, as a scanner would read them.
type benchScanner struct{ n *int }

func (b benchScanner) ScanTool(_ context.Context, s Scan) (Finding, error) {
	*b.n += len(s.Texts)
	return Finding{}, nil
}

// arguments4KB is a tool call's arguments of about 4 KB: a path, a long
// text with escapes, nested options and a list of tags.
func arguments4KB() []byte {
	var tags []string
	for i := range 40 {
		tags = append(tags, fmt.Sprintf("tag-%02d", i))
	}
	args := map[string]any{
		"path":    "/srv/data/reports/2026/q3/summary.md",
		"content": strings.Repeat("Quarterly numbers: \"revenue\" up 4.5%, costs <flat>.\n", 52),
		"options": map[string]any{"overwrite": true, "mode": 420, "ratio": 1.50, "owners": []any{"ana", "bo", map[string]any{"team": "fin"}}},
		"tags":    tags,
	}
	b, _ := json.Marshal(args)
	return b
}

// BenchmarkCallArguments4KB measures svc's own work on one tools/call
// with 4 KB of arguments, the upstream and the scanner free: decoding and
// canonicalising the arguments, the allowed_params check, the texts for
// the scan, the record.
func BenchmarkCallArguments4KB(b *testing.B) {
	args := arguments4KB()
	s := &Server{ID: "fs", GuardrailMode: ModeStrict, AllowedParams: AllowedParams{"write": {
		"path": "/srv/.*", "content": "", "options": "", "tags": ""}}}
	var texts int
	g := &Gateway{Servers: benchServers{s}, Upstream: benchUpstream{[]*mcp.Tool{{Name: "write"}}}, Scanner: benchScanner{&texts}}
	p := &identity.Principal{Kind: identity.VirtualKey, ID: "k1"}
	ctx := context.Background()
	b.SetBytes(int64(len(args)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := g.Call(ctx, Call{Principal: p, ServerID: "fs", Tool: "write", Arguments: args, Surface: "mcp"})
		if err != nil || r.Outcome != OutcomeOK {
			b.Fatalf("call: %v %+v", err, r)
		}
	}
	if texts == 0 {
		b.Fatal("nothing scanned")
	}
}
