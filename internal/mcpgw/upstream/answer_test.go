package upstream

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/mcpgw"
)

// answerSamples are answers the fast reader takes, and some it must leave
// to the slow one (results alone: mcpgw's resultSamples).
var answerSamples = []struct {
	in   string
	fast bool // fastMessage takes it
}{
	{`{"jsonrpc":"2.0","id":"svc-1","result":{"content":[{"type":"text","text":"echo: hi"}]}}`, true},
	{` {"result":{},"id":7,"jsonrpc":"2.0"} ` + "\n", true},
	{`{"jsonrpc":"2.0","id":"svc-1","result":{"content":[]},"error":null}`, true},
	{`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"roots/list","params":{}}`, false}, // params: another member
	{`{"jsonrpc":"2.0","ID":"svc-1","result":{}}`, false},                 // another case
	{`{"jsonrpc":"2.0","id":"svc-1","id":"svc-2","result":{}}`, false},    // a repeated name
	{`{"jsonrpc":"2.0","id":"svc-1","error":{"code":-32601,"message":"no"}}`, false},
	{`{"jsonrpc":"2.0","id":"svc-1","method":null}`, false},
	{"{\"jsonrpc\":\"2.0\",\"id\":\"svc-1\",\"method\":\"\xff\"}", false}, // invalid UTF-8
	{`{"jsonrpc":"2.0","id":"svc-1"} {}`, false},                          // trailing data
	{`[]`, false},
	{`{`, false},
}

// TestFastAnswers: what the fast reader takes, it decodes exactly as
// encoding/json does (the result in it: mcpgw's TestDecodeResult).
func TestFastAnswers(t *testing.T) {
	for _, c := range answerSamples {
		if _, taken := fastMessage([]byte(c.in)); taken != c.fast {
			t.Errorf("%s: taken %v, want %v", c.in, taken, c.fast)
		}
		checkAnswer(t, []byte(c.in))
	}
}

// FuzzFastAnswers checks the fast reader against the slow one on any input.
func FuzzFastAnswers(f *testing.F) {
	for _, c := range answerSamples {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkAnswer(t, in) })
}

// checkAnswer compares the fast reader's decoding of in, where it takes it,
// with encoding/json's.
func checkAnswer(t *testing.T, in []byte) {
	t.Helper()
	if m, ok := fastMessage(in); ok {
		var want rpcMessage
		if err := json.Unmarshal(in, &want); err != nil {
			t.Fatalf("%q: fast message %+v, json.Unmarshal: %v", in, m, err)
		}
		if !bytes.Equal(m.ID, want.ID) || !bytes.Equal(m.Result, want.Result) || m.Method != want.Method || m.Error != nil || want.Error != nil {
			t.Fatalf("%q: fast message %+v, want %+v", in, m, want)
		}
	}
}

// TestCallBody: a tools/call with canonical arguments is written as
// json.Marshal writes it; other arguments are marshalled.
func TestCallBody(t *testing.T) {
	for _, args := range []any{json.RawMessage(`{"a":[1,"\u003cb\u003e"],"c":{}}`), map[string]any{"x": 1}, nil} {
		p := &mcp.CallToolParams{Name: "to<o>l \"x\"", Arguments: args}
		got, err := callBody("svc-12", p)
		a := args
		if a == nil {
			a = map[string]any{}
		}
		want, _ := json.Marshal(rpcOut{JSONRPC: "2.0", ID: "svc-12", Method: "tools/call", Params: struct {
			Name      string `json:"name"`
			Arguments any    `json:"arguments"`
		}{p.Name, a}})
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("arguments %v: %s (%v), want %s", args, got, err, want)
		}
	}
	if _, err := callBody("svc-1", &mcp.CallToolParams{Name: "t", Arguments: json.RawMessage(`{"a":`)}); err == nil {
		t.Error("arguments that are not JSON: no error")
	}
}

// BenchmarkAnswer decodes one SSE event's message and its text result, and
// encodes the result: the fast reader and encoder against encoding/json,
// the SDK's decoder and json.Marshal (what the direct path did before).
func BenchmarkAnswer(b *testing.B) {
	data := []byte(`{"jsonrpc":"2.0","id":"svc-12345","result":{"content":[{"type":"text","text":"echo:run-7-12345 with a few more words of answer"}]}}`)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m, err := decodeMessage(data)
			if err != nil || !sameID(m.ID, "svc-12345") {
				b.Fatal(err)
			}
			r, plain, err := mcpgw.DecodeResult(m.Result)
			if err != nil || !plain {
				b.Fatal(err)
			}
			if _, err := mcpgw.AppendResult(nil, r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m rpcMessage
			if err := json.Unmarshal(data, &m); err != nil {
				b.Fatal(err)
			}
			var id string
			if json.Unmarshal(m.ID, &id) != nil || id != "svc-12345" {
				b.Fatal("id")
			}
			var r mcp.CallToolResult
			if err := json.Unmarshal(m.Result, &r); err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(&r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestJSONAnswer: a JSON answer is read to the end of its body and decoded
// as an event's message is; an answer to another request, or anything but
// one message, is refused.
func TestJSONAnswer(t *testing.T) {
	for _, c := range []struct {
		body string
		ok   bool
	}{
		{`{"jsonrpc":"2.0","id":"svc-1","result":{"content":[]}}` + "\n", true},
		{`{"jsonrpc":"2.0","id":"svc-1","error":{"code":-32601,"message":"no"}}`, true},
		{`{"jsonrpc":"2.0","id":"svc-2","result":{}}`, false},
		{`{"jsonrpc":"2.0","id":"svc-1","result":{}} {}`, false},
		{`[{"jsonrpc":"2.0","id":"svc-1","result":{}}]`, false},
		{`{"jsonrpc":"2.0","id":"svc-1"`, false},
	} {
		body := &endReader{r: strings.NewReader(c.body)}
		m, err := readJSONAnswer(body, "svc-1")
		if (err == nil) != c.ok || (c.ok && (m == nil || !body.ended)) {
			t.Errorf("%s: %+v, %v, body read to its end %v; want ok %v, read to its end", c.body, m, err, body.ended, c.ok)
		}
	}
}

// endReader records that its reader reached its end.
type endReader struct {
	r     io.Reader
	ended bool
}

func (e *endReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	e.ended = e.ended || err == io.EOF
	return n, err
}
