package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

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

// BenchmarkPresetOverhead measures what a five-policy preset adds to a chat
// request with a 4 KB prompt: requests alternate between a key without a
// preset and a key with one (the prompt and the fake's answer are checked,
// nothing is found), one at a time, and the benchmark reports each key's
// p50 and p99 and the p99 difference (the bar: at most +2 ms).
//
//	go test -run '^$' -bench PresetOverhead -benchtime 2000x ./internal/e2e/
func BenchmarkPresetOverhead(b *testing.B) {
	fake := providertest.NewOpenAI(b, providertest.WithRecording(0))
	g := start(b, fake, nil)
	var ids []string
	for i, content := range []string{
		"Block any prompt or answer that contains a US Social Security number.",
		"Redact e-mail addresses and phone numbers from prompts.",
		"Flag answers that mention competitor products such as Acme or Globex.",
		"Do not discuss medical diagnoses.",
		"Block prompts and answers that contain API keys, passwords or other credentials.",
	} {
		var out struct{ ID string }
		if code := g.policyCall("POST", "/api/policies", map[string]any{"name": fmt.Sprintf("p%d", i), "policy_type": "compliance", "content": content}, &out); code != 201 {
			b.Fatalf("policy %d: %d", i, code)
		}
		ids = append(ids, out.ID)
	}
	var preset struct{ ID string }
	if code := g.policyCall("POST", "/api/presets", map[string]any{"name": "five", "policy_ids": ids}, &preset); code != 201 {
		b.Fatalf("preset: %d", code)
	}
	plain, _ := g.newKey(nil)
	guarded, _ := g.newKey(map[string]any{"policy_set": preset.ID})
	para := "The quarterly planning meeting covered the roadmap for the data platform, the hiring plan for the second half, and the budget for cloud infrastructure. Teams agreed to review the migration timeline next week and to share a written summary with the steering group. "
	prompt := strings.Repeat(para, 4096/len(para)+1)[:4096]
	body, _ := json.Marshal(map[string]any{"model": "gpt-4o-mini", "messages": []map[string]string{{"role": "user", "content": prompt}}})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	call := func(key string) time.Duration {
		req, _ := http.NewRequest("POST", g.proxy+"/v1/chat/completions", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
		return time.Since(start)
	}
	for i := 0; i < 50; i++ { // warm up both paths (preset cache, pools)
		call(plain)
		call(guarded)
	}
	var without, with []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		without = append(without, call(plain))
		with = append(with, call(guarded))
	}
	b.StopTimer()
	pct := func(d []time.Duration, p float64) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[int(float64(len(s)-1)*p)].Microseconds())
	}
	b.ReportMetric(pct(without, 0.5), "p50-none-µs")
	b.ReportMetric(pct(with, 0.5), "p50-preset-µs")
	b.ReportMetric(pct(without, 0.99), "p99-none-µs")
	b.ReportMetric(pct(with, 0.99), "p99-preset-µs")
	b.ReportMetric(pct(with, 0.99)-pct(without, 0.99), "p99-added-µs")
}
