package mcpgw

import (
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/svc-gateway/svc/internal/apierr"
)

// Scrub cleans an upstream answer (a tool result, a relayed resources,
// prompts or completion result, and its error) of the exact credentials sc
// stands for: a result that mentions one is rebuilt from its scrubbed JSON;
// a server's protocol error keeps its code with its message and data
// scrubbed. With a nil sc, or nothing to clean, res and err come back as
// they are.
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
	out, _, err := ScrubEncoded(sc, res, nil)
	return out, err
}

// ScrubEncoded is Scrub for a result, given its JSON as json.Marshal
// writes it (raw; nil: encoded here); same reports that res came back as
// it is, so that raw is still its JSON.
func ScrubEncoded[R any](sc *apierr.Scrubber, res *R, raw []byte) (out *R, same bool, err error) {
	if sc == nil || res == nil {
		return res, true, nil
	}
	if raw == nil {
		if raw, err = json.Marshal(res); err != nil {
			// Unread is uncleaned: refused, as an answer that cannot be
			// cleaned is below.
			return nil, false, errNotCleaned
		}
	}
	if !sc.Match(raw) {
		return res, true, nil
	}
	out = new(R)
	if json.Unmarshal([]byte(sc.Exact(string(raw))), out) != nil {
		return nil, false, errNotCleaned
	}
	return out, false, nil
}

// errNotCleaned refuses an answer Scrub could not clean of the credential.
var errNotCleaned = apierr.New(apierr.UpstreamError, "tool_server_error", "the MCP server's answer could not be cleaned of svc's credential")
