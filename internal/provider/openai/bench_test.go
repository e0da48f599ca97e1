package openai_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/openai"
)

// streamChunks is the length of the benchmarks' stream: a role chunk, 97
// content chunks, a finish chunk and a usage-only chunk, then [DONE].
const streamChunks = 100

// typicalStream returns a 100-chunk OpenAI stream. With usageNull every
// chunk carries "usage":null, as OpenAI sends when include_usage is set,
// which svc always sets.
func typicalStream(usageNull bool) []byte {
	const head = `data: {"id":"chatcmpl-C1fPq7nYtD0xWbA3kZr8sLm2VuE4h","object":"chat.completion.chunk","created":1754489201,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_34a54ae93c","choices":[`
	tail := "]}\n\n"
	if usageNull {
		tail = `],"usage":null}` + "\n\n"
	}
	var b strings.Builder
	b.WriteString(head + `{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}` + tail)
	words := strings.Fields("the quick brown fox jumps over the lazy dog while the gateway relays every token")
	for i := range streamChunks - 3 {
		fmt.Fprintf(&b, `%s{"index":0,"delta":{"content":" %s"},"logprobs":null,"finish_reason":null}%s`, head, words[i%len(words)], tail)
	}
	b.WriteString(head + `{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}` + tail)
	b.WriteString(head + `],"usage":{"prompt_tokens":1843,"completion_tokens":97,"total_tokens":1940,"prompt_tokens_details":{"cached_tokens":1792,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

// BenchmarkStreamRelay relays a typical stream through DecodeChatStream, as
// the proxy does for a client that did not ask for usage (HideUsage).
func BenchmarkStreamRelay(b *testing.B) {
	for _, bc := range []struct {
		name      string
		usageNull bool
	}{
		{"usage_null_in_chunks", true}, // OpenAI with include_usage
		{"no_usage_in_chunks", false},  // providers that send usage only at the end
	} {
		b.Run(bc.name, func(b *testing.B) {
			a := openai.New()
			stream := typicalStream(bc.usageNull)
			r := bytes.NewReader(stream)
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			for b.Loop() {
				r.Reset(stream)
				info := provider.StreamInfo{HideUsage: true}
				st := a.DecodeChatStream(io.NopCloser(r), &info)
				n := 0
				for {
					_, err := st.Next()
					if err != nil {
						if !errors.Is(err, io.EOF) {
							b.Fatal(err)
						}
						break
					}
					n++
				}
				_ = st.Close()
				if n != streamChunks-1 || info.Usage.TotalTokens != 1940 {
					b.Fatalf("got %d events and usage %+v, want %d and 1940 tokens", n, info.Usage, streamChunks-1)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*streamChunks), "ns/chunk")
		})
	}
}

// BenchmarkPatchBody patches a typical request: the fast path (a stream that
// did not ask for usage, the model unchanged) and, to compare, the merge.
func BenchmarkPatchBody(b *testing.B) {
	system := strings.Repeat("You are a careful assistant for the support team. ", 20)
	fast := []byte(`{"model":"gpt-4o","stream":true,"temperature":0.2,"messages":[{"role":"system","content":"` + system +
		`"},{"role":"user","content":"My invoice INV-20931 shows a charge twice; can you explain why and how to get a refund?"}]}`)
	merge := []byte(`{"model":"openai/gpt-4o","stream":true,"stream_options":{"include_obfuscation":false},"temperature":0.2,"messages":[{"role":"system","content":"` + system +
		`"},{"role":"user","content":"My invoice INV-20931 shows a charge twice; can you explain why and how to get a refund?"}]}`)
	for _, bc := range []struct {
		name     string
		raw      []byte
		setModel bool
	}{
		{"fast_path", fast, false},
		{"merge", merge, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.raw)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := openai.PatchBody(bc.raw, bc.setModel, "gpt-4o", true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
