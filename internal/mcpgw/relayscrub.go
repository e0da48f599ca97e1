package mcpgw

import (
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/svc-gateway/svc/internal/apierr"
)

// Scrub cleans an upstream answer (a tool result, a relayed resources,
// prompts or completion result, and its error) of the exact credentials sc stands for: a result
// that mentions one is rebuilt from its scrubbed JSON; a server's protocol
// error keeps its code with its message and data scrubbed. With a nil sc,
// or nothing to clean, res and err come back as they are.
func Scrub[R any](sc *apierr.Scrubber, res *R, err error) (*R, error) {
	if sc == nil {
		return res, err
	}
	if err != nil {
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			c := *we
			c.Message = sc.Exact(we.Message)
			if d := string(we.Data); d != "" {
				c.Data = json.RawMessage(sc.Exact(d))
			}
			return nil, &c
		}
		return nil, sc.Error(err)
	}
	if res == nil {
		return nil, nil
	}
	raw, jerr := json.Marshal(res)
	if jerr != nil {
		return res, nil
	}
	clean := sc.Exact(string(raw))
	if clean == string(raw) {
		return res, nil
	}
	out := new(R)
	if json.Unmarshal([]byte(clean), out) != nil {
		return nil, apierr.New(apierr.UpstreamError, "tool_server_error", "the MCP server's answer could not be cleaned of svc's credential")
	}
	return out, nil
}
