package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// FuzzRPC posts arbitrary bodies to the MCP endpoint, the aggregate and the
// plain-JSON call: whatever the body, the answer is a 4xx or a 2xx (never
// a 5xx, never a dropped connection), and a JSON answer is valid JSON.
func FuzzRPC(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`,
		`{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`,
		`{"jsonrpc":"2.0","id":1e999,"method":"tools/call","params":{"name":"write"}}`,
		`{"name":"echo","arguments":{"text":"plain"}}`,
		`{"name":"echo","arguments":[1,2]}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":`, `null`, ``, `"str"`, `{"jsonrpc":"2.0","id":{},"method":7}`,
	} {
		f.Add(seed)
	}
	h := newHarness(f, func(s settings) { s.gw.Timeout = 50 * time.Millisecond })
	client := &http.Client{Timeout: 10 * time.Second}
	f.Fuzz(func(t *testing.T, body string) {
		for _, path := range []string{"/fs/mcp/", "/mcp/", "/mcp/v1/fs/tools/call"} {
			req, _ := http.NewRequest(http.MethodPost, h.url+path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer sk-good")
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s %q: %v", path, body, err)
			}
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			if resp.StatusCode >= 500 {
				t.Fatalf("%s %q: %d %s", path, body, resp.StatusCode, b)
			}
			if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && len(bytes.TrimSpace(b)) > 0 && !json.Valid(b) {
				t.Fatalf("%s %q: invalid JSON answer %s", path, body, b)
			}
		}
	})
}
