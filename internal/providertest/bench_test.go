package providertest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/providertest"
)

// BenchmarkChat measures the fake through a real loopback connection, so the
// load command knows how much of a direct run is the fake itself.
func BenchmarkChat(b *testing.B) {
	s := providertest.NewOpenAI(b, providertest.WithRecording(0))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	for _, tt := range []struct{ name, body string }{
		{"non-stream", chatBody},
		{"stream", streamBody(true)},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				buf := make([]byte, 32<<10)
				for pb.Next() {
					resp, err := client.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(tt.body))
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.CopyBuffer(io.Discard, resp.Body, buf)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Errorf("status %d", resp.StatusCode)
						return
					}
				}
			})
		})
	}
}
