package upstream

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/apierr"
)

// scrubError cleans err of every credential a's session sent (the server
// may echo it in an error), keeping errors.Is and errors.As.
func scrubError(a *authorizer, err error) error {
	sc := a.scrubber()
	if sc == nil || err == nil {
		return err
	}
	return sc.Error(err)
}

// scrubResult returns r with the exact credentials the session sent
// replaced in its text and structured content; r itself when none is
// there (the usual case: no copy).
func scrubResult(sc *apierr.Scrubber, r *mcp.CallToolResult) *mcp.CallToolResult {
	if sc == nil || r == nil {
		return r
	}
	var out *mcp.CallToolResult
	for i, c := range r.Content {
		t, ok := c.(*mcp.TextContent)
		if !ok {
			continue
		}
		if clean := sc.Exact(t.Text); clean != t.Text {
			if out == nil {
				out = copyResult(r)
			}
			tc := *t
			tc.Text = clean
			out.Content[i] = &tc
		}
	}
	if r.StructuredContent != nil {
		if raw, err := json.Marshal(r.StructuredContent); err == nil {
			if clean := sc.Exact(string(raw)); clean != string(raw) {
				if out == nil {
					out = copyResult(r)
				}
				var v any
				if json.Unmarshal([]byte(clean), &v) == nil {
					out.StructuredContent = v
				} else {
					out.StructuredContent = nil
				}
			}
		}
	}
	if out == nil {
		return r
	}
	return out
}

func copyResult(r *mcp.CallToolResult) *mcp.CallToolResult {
	c := *r
	c.Content = append([]mcp.Content(nil), r.Content...)
	return &c
}
