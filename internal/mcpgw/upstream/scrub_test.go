package upstream

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/mcpgw"
)

const echoedToken = "upstream-secret-7f3a9c2e51"

type oneCredential struct{ token string }

func (c oneCredential) Credential(context.Context, string) (string, map[string]string, error) {
	return c.token, nil, nil
}

// echoServer is an MCP server that repeats the Authorization header it got
// in a tool's text, its structured content and a tool error — as a careless
// or hostile server might — and has a tool (hello) whose text is clean.
func echoServer(t *testing.T) string {
	srv := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	type in struct{}
	type out struct {
		Seen string `json:"seen"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami"}, func(ctx context.Context, req *mcp.CallToolRequest, _ in) (*mcp.CallToolResult, out, error) {
		h := req.Extra.Header.Get("Authorization")
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "you sent " + h},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://auth", Text: h}}}}, out{Seen: h}, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "fail"}, func(ctx context.Context, req *mcp.CallToolRequest, _ in) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("refused credential " + req.Extra.Header.Get("Authorization"))
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "hello"}, func(ctx context.Context, req *mcp.CallToolRequest, _ in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(h)
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() }) // the session's GET stream hangs
	return hs.URL
}

// TestResultsCleanedOfTheCredential: the exact token svc sent a server
// never comes back to the caller through a tool's result or error.
func TestResultsCleanedOfTheCredential(t *testing.T) {
	p := New(Options{Client: http.DefaultClient, MaxResultBytes: 1 << 20, Credentials: oneCredential{echoedToken}})
	t.Cleanup(func() { p.Close() })
	s := &mcpgw.Server{ID: "echo", BaseURL: echoServer(t), AuthType: mcpgw.AuthBearer, UpdatedAt: time.Now()}
	ctx := context.Background()
	r, err := p.CallTool(ctx, s, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	text := r.Content[0].(*mcp.TextContent).Text
	if strings.Contains(text, echoedToken) || !strings.Contains(text, "you sent Bearer") {
		t.Errorf("text %q: want the call's answer without the credential", text)
	}
	if res := r.Content[1].(*mcp.EmbeddedResource).Resource; strings.Contains(res.Text, echoedToken) {
		t.Errorf("embedded resource %q: want it without the credential", res.Text)
	}
	if seen, _ := r.StructuredContent.(map[string]any)["seen"].(string); strings.Contains(seen, echoedToken) || seen == "" {
		t.Errorf("structured content %v: want it without the credential", r.StructuredContent)
	}
	r, err = p.CallTool(ctx, s, &mcp.CallToolParams{Name: "fail", Arguments: map[string]any{}})
	var msg string
	if err != nil {
		msg = err.Error()
	} else if r.IsError {
		msg = r.Content[0].(*mcp.TextContent).Text
	}
	if msg == "" || strings.Contains(msg, echoedToken) {
		t.Errorf("tool error %q: want an error without the credential", msg)
	}
	// The tool error is text only, which the direct path encodes itself:
	// cleaned, it comes without that encoding, which held the credential.
	r, enc, err := p.CallToolJSON(ctx, s, &mcp.CallToolParams{Name: "fail", Arguments: map[string]any{}})
	if err != nil || enc != nil || !r.IsError || strings.Contains(r.Content[0].(*mcp.TextContent).Text, echoedToken) {
		t.Errorf("CallToolJSON of a tool error holding the credential: %+v, JSON %s, %v; want it cleaned, no JSON", r, enc, err)
	}
	// A text result without it keeps its encoding.
	if r, enc, err = p.CallToolJSON(ctx, s, &mcp.CallToolParams{Name: "hello", Arguments: map[string]any{}}); err != nil || string(enc) != `{"content":[{"type":"text","text":"hello"}]}` {
		t.Errorf("CallToolJSON of a clean text result: %+v, JSON %s, %v; want its JSON", r, enc, err)
	}
}
