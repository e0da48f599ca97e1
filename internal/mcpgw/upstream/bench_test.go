package upstream

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/mcpgw"
)

// BenchmarkDirectCall measures svc's side of one tools/call on the direct
// path — posting, reading the answer, decoding and encoding its text
// result, checking it for the session's credential (a bearer token, so the
// scrubber's test runs) — against a server in memory that answers at once
// with an event stream or with a JSON body.
func BenchmarkDirectCall(b *testing.B) {
	for _, c := range []struct {
		name string
		json bool
	}{{"sse", false}, {"json", true}} {
		b.Run(c.name, func(b *testing.B) {
			p := New(Options{Client: &http.Client{Transport: cannedServer{json: c.json}},
				MaxResultBytes: 1 << 20, Credentials: oneCredential{echoedToken}})
			b.Cleanup(func() { p.Close() })
			s := &mcpgw.Server{ID: "t", BaseURL: "http://canned.test/mcp", AuthType: mcpgw.AuthBearer, UpdatedAt: time.Now()}
			ctx := context.Background()
			call := func(i int) {
				r, enc, err := p.CallToolJSON(ctx, s, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": strconv.Itoa(i)}})
				if err != nil || enc == nil || r.IsError {
					b.Fatalf("call: %v, JSON %s, %+v", err, enc, r)
				}
			}
			call(0) // opens the session
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				call(i)
			}
		})
	}
}

// cannedServer is a streamable MCP server in memory: it answers initialize
// and tools/call at once (the call with a fixed text result), accepts
// notifications, and refuses the standalone stream (405, which the SDK's
// client allows).
type cannedServer struct{ json bool }

func (f cannedServer) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPost {
		return canned(r, http.StatusMethodNotAllowed, "", ""), nil
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	id := requestID(body)
	var result string
	switch {
	case id == "":
		return canned(r, http.StatusAccepted, "", ""), nil
	case bytes.Contains(body, []byte(`"method":"initialize"`)):
		result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"canned","version":"1"}}`
	default:
		result = `{"content":[{"type":"text","text":"echo: a few words of answer, as a tool would give"}]}`
	}
	msg := `{"jsonrpc":"2.0","id":` + id + `,"result":` + result + `}`
	if f.json {
		return canned(r, http.StatusOK, "application/json", msg), nil
	}
	return canned(r, http.StatusOK, "text/event-stream", "event: message\ndata: "+msg+"\n\n"), nil
}

// requestID is the id member of a request as sent ("" for a notification).
func requestID(body []byte) string {
	_, rest, ok := bytes.Cut(body, []byte(`"id":`))
	if !ok {
		return ""
	}
	if end := bytes.IndexAny(rest, ",}"); end > 0 {
		return string(rest[:end])
	}
	return ""
}

func canned(r *http.Request, status int, ct, body string) *http.Response {
	h := http.Header{"Mcp-Session-Id": {"canned-session"}}
	if ct != "" {
		h.Set("Content-Type", ct)
	}
	return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(bytes.NewReader([]byte(body))),
		ContentLength: int64(len(body)), Request: r, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
}
