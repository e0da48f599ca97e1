package sse

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// openAIChunk is a typical chat completion chunk as OpenAI streams it.
const openAIChunk = `{"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion.chunk","created":1741570283,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_fc9f1d7035","choices":[{"index":0,"delta":{"content":" word"},"logprobs":null,"finish_reason":null}]}`

// openAIStream returns a stream of n chunks and the closing [DONE].
func openAIStream(n int) []byte {
	var b bytes.Buffer
	for range n {
		b.WriteString("data: " + openAIChunk + "\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// anthropicStream returns a Messages API stream with n text deltas.
func anthropicStream(n int) []byte {
	var b bytes.Buffer
	b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\",\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}\n\n")
	b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for i := range n {
		if i%10 == 0 {
			b.WriteString("event: ping\ndata: {\"type\": \"ping\"}\n\n")
		}
		b.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" word\"}}\n\n")
	}
	b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":15}}\n\n")
	b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return b.Bytes()
}

// BenchmarkReader reads whole streams: one op is one stream of about 200
// events. "reuse" resets one Reader per stream, "new" makes a Reader per
// stream; both report time per event.
func BenchmarkReader(b *testing.B) {
	for _, s := range []struct {
		name   string
		stream []byte
	}{
		{"openai", openAIStream(200)},
		{"anthropic", anthropicStream(200)},
	} {
		events := bytes.Count(s.stream, []byte("\n\n"))
		for _, mode := range []string{"reuse", "new"} {
			b.Run(fmt.Sprintf("%s/%s", s.name, mode), func(b *testing.B) {
				src := bytes.NewReader(s.stream)
				r := NewReader(src, 0)
				b.SetBytes(int64(len(s.stream)))
				b.ReportAllocs()
				for b.Loop() {
					src.Reset(s.stream)
					if mode == "reuse" {
						r.Reset(src)
					} else {
						r = NewReader(src, 0)
					}
					n := 0
					for {
						if _, err := r.Next(); err != nil {
							if err != io.EOF {
								b.Fatal(err)
							}
							break
						}
						n++
					}
					if n != events {
						b.Fatalf("got %d events, want %d", n, events)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
			})
		}
	}
}

// discardFlusher discards writes and has a Flush method, as a client
// connection does.
type discardFlusher struct{}

func (discardFlusher) Write(p []byte) (int, error) { return len(p), nil }
func (discardFlusher) Flush()                      {}

// BenchmarkWriter writes one event per op, flushing each.
func BenchmarkWriter(b *testing.B) {
	data := []byte(openAIChunk)
	b.Run("WriteData", func(b *testing.B) {
		w := NewWriter(discardFlusher{})
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if err := w.WriteData(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("WriteEvent", func(b *testing.B) {
		w := NewWriter(discardFlusher{})
		ev := Event{Event: "content_block_delta", ID: "17", Data: data}
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if err := w.WriteEvent(ev); err != nil {
				b.Fatal(err)
			}
		}
	})
}
