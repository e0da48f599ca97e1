package cohere_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/cohere"
)

// streamDeltas is the number of content-delta events of the benchmark's
// stream, which also has message-start, content-start, content-end and
// message-end, as Cohere sends them (event: and data: lines).
const streamDeltas = 97

func typicalStream() []byte {
	var b strings.Builder
	write := func(v map[string]any) {
		d, _ := json.Marshal(v)
		b.WriteString("event: " + v["type"].(string) + "\ndata: ")
		b.Write(d)
		b.WriteString("\n\n")
	}
	write(map[string]any{"id": "29f14a5a-11de-4cae-9800-25e4747408ea", "type": "message-start", "delta": map[string]any{"message": map[string]any{"role": "assistant", "content": []any{}, "tool_plan": "", "tool_calls": []any{}, "citations": []any{}}}})
	write(map[string]any{"type": "content-start", "index": 0, "delta": map[string]any{"message": map[string]any{"content": map[string]any{"type": "text", "text": ""}}}})
	words := strings.Fields("the quick brown fox jumps over the lazy dog while the gateway relays every token")
	for i := range streamDeltas {
		write(map[string]any{"type": "content-delta", "index": 0, "delta": map[string]any{"message": map[string]any{"content": map[string]any{"text": " " + words[i%len(words)]}}}})
	}
	write(map[string]any{"type": "content-end", "index": 0})
	write(map[string]any{"type": "message-end", "delta": map[string]any{"finish_reason": "COMPLETE", "usage": map[string]any{
		"billed_units": map[string]any{"input_tokens": 51, "output_tokens": 97}, "tokens": map[string]any{"input_tokens": 1843, "output_tokens": 97}}}})
	return []byte(b.String())
}

// BenchmarkStreamTranslate translates a typical Cohere stream into OpenAI
// chunks, as the proxy does for a client that did not ask for usage.
func BenchmarkStreamTranslate(b *testing.B) {
	a := cohere.New()
	stream := typicalStream()
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
		if n != streamDeltas+2 || info.Usage.TotalTokens != 1940 {
			b.Fatalf("got %d chunks and usage %+v, want %d and 1940 tokens", n, info.Usage, streamDeltas+2)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(streamDeltas+2)), "ns/chunk")
}
