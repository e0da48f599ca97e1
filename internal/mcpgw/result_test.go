package mcpgw

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// resultSamples are results DecodeResult reads itself (plain) and some it
// leaves to the SDK.
var resultSamples = []struct {
	in    string
	plain bool
}{
	{`{"content":[{"type":"text","text":"echo: hi"}]}`, true},
	{`{"content":[{"type":"text","text":"a\u0000<b>&\u2028 \"q\" \\ é 😀"},{"text":"","type":"text"}],"isError":true}`, true},
	{` {"isError":false} `, true},
	{`{"content":[]}`, true},
	{`{"content":[{"type":"text"}]}`, true},
	{`{"content":null}`, false},
	{`{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}]}`, false},
	{`{"content":[{"type":"text","text":"x","annotations":{"priority":1}}]}`, false},
	{`{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1}}`, false},
	{`{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}],"structuredContent":{"a":1}}`, false},
	{`{"content":[{"type":"text","text":"x"}],"_meta":{"k":"v"}}`, false},
	{`{"content":[{"type":"text","text":"x"}],"resultType":"complete"}`, false},
	{`{"Content":[{"type":"text","text":"x"}]}`, false},
	{`{"content":[{"type":"text","text":"x"}],"content":[]}`, false},
	{`{"content":[{"type":"text","text":"\ud800"}]}`, false},
	{"{\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}", false},
	{`{"content":[{"type":"t\u0065xt","text":"x"}]}`, false},
	{`{"content":[null]}`, false},
	{`{"isError":null}`, false},
	{`{"content":[]} {}`, false},
}

// TestDecodeResult: what DecodeResult reads itself it decodes exactly as
// the SDK does, and AppendResult writes it exactly as json.Marshal does.
func TestDecodeResult(t *testing.T) {
	for _, c := range resultSamples {
		_, plain, _ := DecodeResult([]byte(c.in))
		if plain != c.plain {
			t.Errorf("%s: plain %v, want %v", c.in, plain, c.plain)
		}
		sameResultAsSDK(t, []byte(c.in))
	}
}

func FuzzDecodeResult(f *testing.F) {
	for _, c := range resultSamples {
		f.Add([]byte(c.in))
	}
	f.Fuzz(sameResultAsSDK)
}

// sameResultAsSDK compares DecodeResult and AppendResult with the SDK's
// decoding and json.Marshal.
func sameResultAsSDK(t *testing.T, in []byte) {
	r, plain, err := DecodeResult(in)
	want := new(mcp.CallToolResult)
	werr := json.Unmarshal(in, want)
	if (err == nil) != (werr == nil) {
		t.Fatalf("%q: error %v, the SDK's %v", in, err, werr)
	}
	if err != nil {
		return
	}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("%q: %#v, the SDK's %#v", in, r, want)
	}
	if !plain {
		return
	}
	enc, err := AppendResult(nil, r)
	wantEnc, werr := json.Marshal(want)
	if err != nil || werr != nil || !bytes.Equal(enc, wantEnc) {
		t.Fatalf("%q: written %s (%v), json.Marshal %s (%v)", in, enc, err, wantEnc, werr)
	}
}

// TestAppendResultRefusesMore: a result with anything beside plain text
// content and isError is refused, not written without it.
func TestAppendResultRefusesMore(t *testing.T) {
	text := []mcp.Content{&mcp.TextContent{Text: "ok"}}
	for name, r := range map[string]*mcp.CallToolResult{
		"meta":       {Content: text, Meta: mcp.Meta{"k": "v"}},
		"structured": {Content: text, StructuredContent: map[string]any{"n": 1}},
		"state":      {Content: text, RequestState: "s"},
		"image":      {Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1}, MIMEType: "image/png"}}},
	} {
		if enc, err := AppendResult(nil, r); err == nil {
			t.Errorf("%s: AppendResult wrote %s, want an error", name, enc)
		}
	}
	if enc, err := AppendResult(nil, &mcp.CallToolResult{Content: text}); err != nil || string(enc) != `{"content":[{"type":"text","text":"ok"}]}` {
		t.Errorf("plain: %s, %v", enc, err)
	}
}
