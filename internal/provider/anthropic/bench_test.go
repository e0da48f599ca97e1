package anthropic_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/llm/sse"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/anthropic"
)

type sseEvent = sse.Event

// benchDeltas is the number of text deltas in the benchmark's stream.
const benchDeltas = 100

// typicalStream is a Messages stream with benchDeltas text deltas and a
// ping every ten, as Anthropic sends it.
func typicalStream() []byte {
	var b strings.Builder
	b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01XFDUDYJgAACzvnptvVoYEL\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5-20250929\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":1843,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":1792,\"output_tokens\":1}}}\n\n")
	b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	words := strings.Fields("the quick brown fox jumps over the lazy dog while the gateway relays every token")
	for i := range benchDeltas {
		if i%10 == 0 {
			b.WriteString("event: ping\ndata: {\"type\": \"ping\"}\n\n")
		}
		fmt.Fprintf(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" %s\"}}\n\n", words[i%len(words)])
	}
	b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":100}}\n\n")
	b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return []byte(b.String())
}

// BenchmarkStreamTranslate translates a 100-delta stream to OpenAI chunks,
// as the proxy does for a client that did not ask for usage; ns/chunk is per
// chunk produced (role, 100 contents, finish).
func BenchmarkStreamTranslate(b *testing.B) {
	a := anthropic.New()
	stream := typicalStream()
	r := bytes.NewReader(stream)
	const chunks = benchDeltas + 2
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
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
		if n != chunks || info.Usage.TotalTokens != 1843+1792+100 {
			b.Fatalf("got %d chunks and usage %+v, want %d", n, info.Usage, chunks)
		}
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chunks), "ns/chunk")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N*chunks), "allocs/chunk")
}
