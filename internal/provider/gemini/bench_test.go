package gemini_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/gemini"
)

// typicalStream is a 100-event Gemini stream: text events, the last with
// finishReason STOP, each with usageMetadata as Gemini sends it.
func typicalStream() []byte {
	words := strings.Fields("the quick brown fox jumps over the lazy dog while the gateway relays every token")
	var b strings.Builder
	for i := range 100 {
		finish := ""
		if i == 99 {
			finish = `,"finishReason":"STOP"`
		}
		fmt.Fprintf(&b, `data: {"candidates": [{"content": {"parts": [{"text": " %s"}],"role": "model"}%s,"index": 0}],"usageMetadata": {"promptTokenCount": 1843,"candidatesTokenCount": %d,"totalTokenCount": %d,"promptTokensDetails": [{"modality": "TEXT","tokenCount": 1843}]},"modelVersion": "gemini-2.5-flash","responseId": "Xk2Jaf3oBoqVvdIPm7GK4Ak"}`+"\r\n\r\n",
			words[i%len(words)], finish, i+1, 1844+i)
	}
	return []byte(b.String())
}

// BenchmarkStreamTranslate translates a 100-event stream to OpenAI chunks.
func BenchmarkStreamTranslate(b *testing.B) {
	body := typicalStream()
	a := gemini.New()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		st := a.DecodeChatStream(io.NopCloser(bytes.NewReader(body)), &provider.StreamInfo{})
		n := 0
		for {
			_, err := st.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 101 {
			b.Fatalf("got %d chunks, want 101", n)
		}
	}
}
