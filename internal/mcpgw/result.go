package mcpgw

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/llm"
)

// FirstSDKOnlyProtocol is the first MCP protocol version whose tools/call
// svc leaves to the SDK on both sides (the fast path toward the client,
// the direct path toward the server): its messages change shape.
const FirstSDKOnlyProtocol = "2026-07-28"

// A tool's result, read from its JSON and written back.
//
// The common result — text content, perhaps isError — is decoded in one
// pass over its tokens, without reflection and without the SDK's decoder
// (CallToolResult.UnmarshalJSON, whose segmentio decoder allocates a 32 KiB
// buffer for every result), and written back without json.Marshal.
// Anything else, or anything the fast reader is not sure of (another
// member, another content type, a name in another case, a repeated name,
// invalid UTF-8), is decoded by the SDK as before. What the fast reader
// takes, it decodes exactly as the SDK does, and AppendResult writes it
// exactly as json.Marshal does (the tests compare them).

// DecodeResult decodes a tools/call result as the SDK does; plain reports
// that it is text content and isError only, which AppendResult writes.
func DecodeResult(raw []byte) (r *mcp.CallToolResult, plain bool, err error) {
	if r, ok := fastResult(raw); ok {
		return r, true, nil
	}
	r = new(mcp.CallToolResult)
	if err := json.Unmarshal(raw, r); err != nil {
		return nil, false, err
	}
	return r, false, nil
}

// fastResult is the SDK's decoding of a result that has at most the
// members content (an array of {"type":"text","text":…} objects) and
// isError (true or false), once each, in valid UTF-8; ok false for
// anything else. Like the SDK it gives an empty, non-nil Content when
// there is none.
func fastResult(raw []byte) (r *mcp.CallToolResult, ok bool) {
	r = &mcp.CallToolResult{}
	if !ReadWhole(raw, func(d *jsontext.Decoder) bool {
		return ReadObject(d, func(name []byte) bool {
			switch string(name) {
			case `"content"`:
				r.Content, ok = fastContent(d)
				return ok
			case `"isError"`:
				if k := d.PeekKind(); k != 't' && k != 'f' {
					return false
				}
				tok, err := d.ReadToken()
				if err != nil {
					return false
				}
				r.IsError = tok.Bool()
				return true
			}
			return false
		})
	}) {
		return nil, false
	}
	if r.Content == nil {
		r.Content = []mcp.Content{}
	}
	return r, true
}

// fastContent reads a content array of text blocks only.
func fastContent(d *jsontext.Decoder) ([]mcp.Content, bool) {
	if d.PeekKind() != '[' {
		return nil, false
	}
	if _, err := d.ReadToken(); err != nil {
		return nil, false
	}
	out := make([]mcp.Content, 0, 1)
	for d.PeekKind() == '{' {
		var text string
		var isText bool
		if !ReadObject(d, func(name []byte) bool {
			field := 0 // the name is read before the next call voids it
			switch string(name) {
			case `"type"`:
				field = 1
			case `"text"`:
				field = 2
			}
			if field == 0 || d.PeekKind() != '"' {
				return false
			}
			if field == 1 {
				v, err := d.ReadValue()
				isText = err == nil && string(v) == `"text"`
				return isText
			}
			v, err := d.ReadToken()
			if err != nil {
				return false
			}
			text = v.String()
			return true
		}) || !isText {
			return nil, false
		}
		out = append(out, &mcp.TextContent{Text: text})
	}
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != ']' {
		return nil, false
	}
	return out, true
}

// AppendResult appends a plain result (one DecodeResult gave with plain
// true: text content and isError only) as json.Marshal writes it, byte
// for byte; an error for any other, rather than drop what it cannot write.
func AppendResult(dst []byte, r *mcp.CallToolResult) ([]byte, error) {
	if r.Meta != nil || r.StructuredContent != nil || r.InputRequests != nil || r.RequestState != "" {
		return nil, errors.New("mcpgw: AppendResult: the result has more than content and isError")
	}
	dst = append(dst, `{"content":[`...)
	for i, c := range r.Content {
		t, ok := c.(*mcp.TextContent)
		if !ok || t.Meta != nil || t.Annotations != nil {
			return nil, fmt.Errorf("mcpgw: AppendResult: content %d is not plain text", i)
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"type":"text","text":`...)
		dst = llm.AppendJSONString(dst, t.Text)
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	if r.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	return append(dst, '}'), nil
}
