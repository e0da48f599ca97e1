package mcpgw

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/identity"
)

// jsonUpstream is benchUpstream that also gives the result's JSON.
type jsonUpstream struct {
	benchUpstream
	enc []byte // the JSON it last gave
}

func (u *jsonUpstream) CallToolJSON(ctx context.Context, s *Server, p *mcp.CallToolParams) (*mcp.CallToolResult, []byte, error) {
	r, err := u.CallTool(ctx, s, p)
	if err != nil {
		return nil, nil, err
	}
	u.enc, err = AppendResult(nil, r)
	return r, u.enc, err
}

// putCache is a cache that always misses and records the JSON it was
// last given with a result to store.
type putCache struct {
	puts int
	enc  []byte
}

func (c *putCache) Get(context.Context, CacheKey) (*mcp.CallToolResult, error) { return nil, nil }
func (c *putCache) Hit(context.Context, string, float64)                       {}
func (c *putCache) Put(_ context.Context, _ CacheKey, _ *mcp.CallToolResult, enc []byte, _ time.Duration, _ float64) error {
	c.puts, c.enc = c.puts+1, enc
	return nil
}

// TestCachePutJSON: on a miss of a cacheable tool, the cache is given the
// result's JSON the upstream gave (nil when it gave none), so it does not
// encode the result again.
func TestCachePutJSON(t *testing.T) {
	tools := []*mcp.Tool{{Name: "read", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}}
	withJSON := &jsonUpstream{benchUpstream: benchUpstream{tools}}
	for _, c := range []struct {
		name    string
		up      Upstream
		wantEnc bool
	}{
		{"JSON upstream", withJSON, true},
		{"plain upstream", benchUpstream{tools}, false},
	} {
		cache := &putCache{}
		s := &Server{ID: "fs", GuardrailMode: ModeStrict}
		g := &Gateway{Servers: benchServers{s}, Upstream: c.up, Cache: cache, Options: Options{CacheEnabled: true}}
		p := &identity.Principal{Kind: identity.VirtualKey, ID: "k1"}
		r, err := g.Call(context.Background(), Call{Principal: p, ServerID: "fs", Tool: "read", Arguments: []byte(`{}`), Surface: "mcp"})
		if err != nil || r.Outcome != OutcomeOK {
			t.Fatalf("%s: call: %v %+v", c.name, err, r)
		}
		if cache.puts != 1 {
			t.Errorf("%s: %d Puts, want 1", c.name, cache.puts)
		}
		if c.wantEnc && (cache.enc == nil || !bytes.Equal(cache.enc, withJSON.enc)) || !c.wantEnc && cache.enc != nil {
			t.Errorf("%s: Put given %q, want the upstream's JSON: %v (%q)", c.name, cache.enc, c.wantEnc, withJSON.enc)
		}
	}
}
