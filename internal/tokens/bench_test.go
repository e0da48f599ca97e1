package tokens

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/llm"
)

// benchPrompt builds a chat request of about size bytes of message text:
// English prose and Go code in turns, as a conversation resends them.
func benchPrompt(b *testing.B, size int) (*llm.ChatRequest, []byte) {
	b.Helper()
	var texts []string
	for _, name := range []string{"en-prose-1.txt", "code-go-1.txt", "en-prose-2.txt", "json-tools-1.txt"} {
		t, err := os.ReadFile(filepath.Join("testdata", "corpus", name))
		if err != nil {
			b.Fatal(err)
		}
		texts = append(texts, string(t))
	}
	req := &llm.ChatRequest{Model: "gpt-4o"}
	req.Messages = append(req.Messages, llm.Message{Role: "system", Content: llm.TextContent("You are a helpful assistant.")})
	n := 0
	for i := 0; n < size; i++ {
		t := texts[i%len(texts)]
		if rest := size - n; len(t) > rest {
			t = t[:rest]
		}
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		req.Messages = append(req.Messages, llm.Message{Role: role, Content: llm.TextContent(t)})
		n += len(t)
	}
	body, err := json.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	return req, body
}

// BenchmarkChatPrompt measures ChatPrompt on 1 KB and 20 KB prompts for an
// OpenAI model (exact count) and another (conservative count), the first time
// its texts are seen and when they were counted before (a conversation's
// earlier turns), beside the decoding of the same request body (the
// reference: svc does it for every chat request).
func BenchmarkChatPrompt(b *testing.B) {
	for _, size := range []int{1 << 10, 20 << 10} {
		req, body := benchPrompt(b, size)
		name := map[int]string{1 << 10: "1KB", 20 << 10: "20KB"}[size]
		b.Run(name+"/decode-reference", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := llm.DecodeChatRequest(body); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, model := range []string{"gpt-4o", "gpt-4", "claude-sonnet-4"} {
			ChatPrompt(model, req) // build the encoding outside the timing
			for _, cached := range []bool{false, true} {
				b.Run(name+"/"+model+map[bool]string{false: "/first", true: "/cached"}[cached], func(b *testing.B) {
					cacheOff = !cached
					defer func() { cacheOff = false }()
					b.ReportAllocs()
					b.SetBytes(int64(len(body)))
					for b.Loop() {
						ChatPrompt(model, req)
					}
				})
			}
		}
		b.Run(name+"/body-gpt-4o/first", func(b *testing.B) {
			cacheOff = true
			defer func() { cacheOff = false }()
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				Body("gpt-4o", body)
			}
		})
	}
}

// BenchmarkCountParallel measures Count from every core at once on 1 KB of
// English: the encodings are shared.
func BenchmarkCountParallel(b *testing.B) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 23)
	Count("gpt-4o", text)
	cacheOff = true
	defer func() { cacheOff = false }()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			Count("gpt-4o", text)
		}
	})
}
