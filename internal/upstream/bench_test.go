package upstream

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkRoundTrip measures one small POST and its answer over a pooled
// loopback connection, per transport (the server shares the process, so
// this is the client's cost plus an in-process server's, not svc's).
func BenchmarkRoundTrip(b *testing.B) {
	for _, transport := range transports {
		b.Run(transport, func(b *testing.B) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"id":"chatcmpl-1","choices":[{"message":{"content":"hi"}}]}`)
			}))
			defer srv.Close()
			c := New(Options{Transport: transport})
			body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest("POST", srv.URL+"/v1/chat/completions", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer sk-bench")
				resp, err := c.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.ReadBody(resp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
