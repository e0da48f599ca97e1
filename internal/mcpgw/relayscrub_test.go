package mcpgw

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/apierr"
)

// TestScrub: a relayed resource, and a server's protocol error, that
// quote the credential svc sent come back without it; clean answers come
// back as they are (the same pointer).
func TestScrub(t *testing.T) {
	const tok = "upstream-secret-7f3a9c2e51"
	sc := apierr.NewScrubber(tok)
	res := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "file:///a", Text: "key=" + tok}}}
	got, err := Scrub(sc, res, nil)
	if err != nil || got == res || strings.Contains(got.Contents[0].Text, tok) || got.Contents[0].URI != "file:///a" {
		t.Errorf("Scrub(resource) = %+v, %v: want a copy without the credential", got, err)
	}
	clean := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "file:///b", Text: "nothing"}}}
	if got, _ := Scrub(sc, clean, nil); got != clean {
		t.Error("a clean answer was copied")
	}
	_, err = Scrub[mcp.GetPromptResult](sc, nil, &jsonrpc.Error{Code: -32602, Message: "bad token " + tok, Data: json.RawMessage(`{"sent":"` + tok + `"}`)})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != -32602 || strings.Contains(we.Message, tok) || strings.Contains(string(we.Data), tok) {
		t.Errorf("protocol error = %v: want its code kept and the credential gone", err)
	}
	if r, err := Scrub[mcp.GetPromptResult](nil, nil, errors.New("x "+tok)); r != nil || err == nil || !strings.Contains(err.Error(), tok) {
		t.Error("without a scrubber the answer must pass as it is")
	}
}
