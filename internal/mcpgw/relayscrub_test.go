package mcpgw

import (
	"encoding/json"
	"errors"
	"math"
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

// TestScrubUnencodable: an answer Scrub cannot encode to check is refused,
// never passed on unchecked.
func TestScrubUnencodable(t *testing.T) {
	type odd struct{ X float64 }
	got, err := Scrub(apierr.NewScrubber("upstream-secret-7f3a9c2e51"), &odd{X: math.NaN()}, nil)
	var ae *apierr.Error
	if got != nil || !errors.As(err, &ae) || ae.Code != "tool_server_error" {
		t.Errorf("Scrub(unencodable) = %+v, %v: want it refused", got, err)
	}
}

// TestScrubEncoded: the JSON given is what is checked and cleaned; a
// clean result comes back as it is (same), a dirty one rebuilt without
// the credential.
func TestScrubEncoded(t *testing.T) {
	const tok = "upstream-secret-7f3a9c2e51"
	sc := apierr.NewScrubber(tok)
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "key=" + tok}}}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	got, same, err := ScrubEncoded(sc, res, raw)
	if err != nil || same || got == res || strings.Contains(got.Content[0].(*mcp.TextContent).Text, tok) {
		t.Errorf("ScrubEncoded(dirty) = %+v, same %v, %v: want a copy without the credential", got, same, err)
	}
	// The JSON given is the one checked: a clean encoding passes res on.
	clean := []byte(`{"content":[]}`)
	if got, same, err := ScrubEncoded(sc, res, clean); err != nil || !same || got != res {
		t.Errorf("ScrubEncoded(clean JSON) = %p, same %v, %v: want res as it is", got, same, err)
	}
}
