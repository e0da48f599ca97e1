package e2e

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/svc-gateway/svc/internal/providertest"
)

// BenchmarkProxyChat measures one chat request through svc over loopback
// (client, svc and the fake upstream in one process: use it to profile svc's
// share, and cmd/svcbench for the gateway-minus-direct figures).
func BenchmarkProxyChat(b *testing.B) {
	for _, stream := range []bool{false, true} {
		name := "plain"
		body := []byte(`{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Say hello in five words."}]}`)
		if stream {
			name = "stream"
			body = []byte(`{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Say hello in five words."}]}`)
		}
		b.Run(name, func(b *testing.B) {
			fake := providertest.NewOpenAI(b, providertest.WithRecording(0))
			g := start(b, fake, nil)
			key, _ := g.newKey(nil)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				buf := make([]byte, 32<<10)
				for pb.Next() {
					req, _ := http.NewRequest("POST", g.proxy+"/v1/chat/completions", bytes.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+key)
					resp, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					io.CopyBuffer(io.Discard, resp.Body, buf)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Fatalf("status %d", resp.StatusCode)
					}
				}
			})
		})
	}
}

// BenchmarkProxyChatSerial is one request at a time (the c=1 case).
func BenchmarkProxyChatSerial(b *testing.B) {
	fake := providertest.NewOpenAI(b, providertest.WithRecording(0))
	g := start(b, fake, nil)
	key, _ := g.newKey(nil)
	body := []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello in five words."}]}`)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	buf := make([]byte, 32<<10)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req, _ := http.NewRequest("POST", g.proxy+"/v1/chat/completions", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.CopyBuffer(io.Discard, resp.Body, buf)
		resp.Body.Close()
	}
}
