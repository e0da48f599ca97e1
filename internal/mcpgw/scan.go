package mcpgw

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/apierr"
)

// maxScanTexts bounds the strings gathered from one call for a scan.
const maxScanTexts = 4096

// scan checks texts under the server's guardrail mode: a violation under
// strict refuses (403 policy_violation naming the violation types); under
// log it is recorded on out and the call goes on. A scanner failure
// refuses unless ComplianceFailOpen.
func (g *Gateway) scan(ctx context.Context, c *Call, s *Server, phase string, texts []string, out *Result) error {
	if g.Scanner == nil || len(texts) == 0 {
		return nil
	}
	f, err := g.Scanner.ScanTool(ctx, Scan{Principal: c.Principal, ServerID: s.ID, Tool: c.Tool, Phase: phase, Texts: texts})
	if err != nil {
		if g.Options.ComplianceFailOpen {
			g.logger().Warn("mcp: compliance scan failed; letting the call through (COMPLIANCE_FAIL_OPEN)", "server", s.ID, "err", err)
			return nil
		}
		return apierr.Wrap(apierr.Unavailable, "compliance_unavailable", "the compliance scan failed", err)
	}
	if len(f.Violations) == 0 {
		return nil
	}
	out.Violations = appendUnique(out.Violations, f.Violations...)
	if s.GuardrailMode == ModeLog {
		out.Flagged = true
		return nil
	}
	e := apierr.Newf(apierr.Forbidden, "policy_violation", "the tool call's %s violate policy: %s", phase, strings.Join(f.Violations, ", "))
	e.Extra = map[string]any{"violations": f.Violations, "phase": phase}
	return e
}

func appendUnique(l []string, vs ...string) []string {
	for _, v := range vs {
		if !slices.Contains(l, v) {
			l = append(l, v)
		}
	}
	return l
}

// argumentTexts gathers the string values (and object keys) of canonical
// arguments, bounded.
func argumentTexts(canon []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(canon))
	var texts []string
	for len(texts) < maxScanTexts {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if s, ok := tok.(string); ok && s != "" {
			texts = append(texts, s)
		}
	}
	return texts
}

// resultTexts gathers a result's text content and the strings of its
// structured content.
func resultTexts(r *mcp.CallToolResult) []string {
	var texts []string
	for _, c := range r.Content {
		switch t := c.(type) {
		case *mcp.TextContent:
			texts = append(texts, t.Text)
		case *mcp.EmbeddedResource:
			if t.Resource != nil && t.Resource.Text != "" {
				texts = append(texts, t.Resource.Text)
			}
		}
	}
	if r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			texts = append(texts, argumentTexts(b)...)
		}
	}
	if len(texts) > maxScanTexts {
		texts = texts[:maxScanTexts]
	}
	return texts
}

// rawArguments passes canonical arguments to the SDK without decoding them
// again.
func rawArguments(canon []byte) json.RawMessage { return json.RawMessage(canon) }
