package upstream

import (
	"bytes"
	"encoding/json"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/svc-gateway/svc/internal/mcpgw"
)

// Decoding a server's answer on the direct path.
//
// The common message — a JSON-RPC response, a notification — is decoded
// here in one pass over its tokens, without reflection; its result by
// mcpgw.DecodeResult. Anything else, or anything this reader is not sure
// of (another member, a name in another case, a repeated name, invalid
// UTF-8, an error member), is decoded by encoding/json as before. Where the
// fast reader accepts a message, it decodes it to exactly what
// encoding/json would (the tests compare them).

// decodeMessage decodes one JSON-RPC message of a server's answer, as
// json.Unmarshal into rpcMessage does.
func decodeMessage(data []byte) (*rpcMessage, error) {
	if m, ok := fastMessage(data); ok {
		return m, nil
	}
	var m rpcMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// fastMessage is decodeMessage for a message whose members are all named
// exactly jsonrpc, id, method, result or error (error null), once each,
// in valid UTF-8; ok false for anything else. The id and the result are
// copies: jsontext promises a read value only until the pooled decoder's
// next read, and it reads a bytes.Buffer in place only as a detail of its
// implementation.
func fastMessage(data []byte) (m *rpcMessage, ok bool) {
	m = new(rpcMessage)
	if !mcpgw.ReadWhole(data, func(d *jsontext.Decoder) bool {
		return mcpgw.ReadObject(d, func(name []byte) bool {
			switch string(name) { // as sent: a name with escapes is not matched
			case `"jsonrpc"`: // not a field of rpcMessage: any value is ignored
				return d.SkipValue() == nil
			case `"id"`:
				v, err := d.ReadValue()
				m.ID = bytes.Clone(v)
				return err == nil
			case `"method"`:
				if d.PeekKind() != '"' {
					return false
				}
				tok, err := d.ReadToken()
				if err != nil {
					return false
				}
				m.Method = tok.String()
				return true
			case `"result"`:
				v, err := d.ReadValue()
				m.Result = bytes.Clone(v)
				return err == nil
			case `"error"`:
				if d.PeekKind() != 'n' {
					return false
				}
				_, err := d.ReadToken()
				return err == nil
			}
			return false
		})
	}) {
		return nil, false
	}
	return m, true
}
