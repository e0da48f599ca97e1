package bedrock_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/bedrock"
)

// TestStreamIncremental checks that each chunk is returned as soon as its
// message has arrived: the decoder never waits for more of the body.
func TestStreamIncremental(t *testing.T) {
	pr, pw := io.Pipe()
	st := bedrock.New().DecodeChatStream(pr, &provider.StreamInfo{})
	defer st.Close()
	enc := eventstream.NewEncoder()
	msgs := []streamMessage{
		{Event: "messageStart", Payload: json.RawMessage(`{"role":"assistant"}`)},
		{Event: "contentBlockDelta", Payload: json.RawMessage(`{"contentBlockIndex":0,"delta":{"text":"Hi"}}`)},
		{Event: "messageStop", Payload: json.RawMessage(`{"stopReason":"end_turn"}`)},
	}
	for i, m := range msgs {
		var buf bytes.Buffer
		encodeMessage(t, enc, &buf, m)
		go func() { _, _ = pw.Write(buf.Bytes()) }()
		done := make(chan error, 1)
		go func() { _, err := st.Next(); done <- err }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("message %d: Next did not return once the message had arrived", i)
		}
	}
	_ = pw.Close()
}

// TestStreamBounds checks that a message whose prelude announces more than
// the event stream format allows is refused before anything is read.
func TestStreamBounds(t *testing.T) {
	for _, pre := range [][]byte{
		{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0},
		{0, 0, 0, 8, 0, 0, 0, 0},
		{0, 0, 0, 32, 0, 0, 0, 20},
	} {
		st := bedrock.New().DecodeChatStream(io.NopCloser(io.MultiReader(bytes.NewReader(pre), endless{})), &provider.StreamInfo{})
		_, err := st.Next()
		var e *apierr.Error
		if !errors.As(err, &e) || e.Code != "upstream_bad_response" {
			t.Errorf("prelude % x: got %v, want upstream_bad_response", pre, err)
		}
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// FuzzStreamDecode feeds arbitrary bytes to the stream decoder: it never
// panics, ends with io.EOF or an *apierr.Error, and every chunk it returns is
// valid JSON.
func FuzzStreamDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*", "stream.json"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		full := encodeStream(f, b)
		f.Add(full)
		f.Add(full[:len(full)/3])
	}
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, hide := range []bool{false, true} {
			st := bedrock.New().DecodeChatStream(io.NopCloser(bytes.NewReader(data)), &provider.StreamInfo{HideUsage: hide})
			for range 10000 {
				ev, err := st.Next()
				if err != nil {
					var e *apierr.Error
					if !errors.Is(err, io.EOF) && !errors.As(err, &e) {
						t.Fatalf("got error %T %v, want io.EOF or an *apierr.Error", err, err)
					}
					break
				}
				if !json.Valid(ev.Data) {
					t.Fatalf("chunk %q is not valid JSON", ev.Data)
				}
			}
			_ = st.Close()
		}
	})
}

// streamChunks is the benchmark stream's length in chunks: a role chunk, 100
// text deltas, a finish chunk and a usage chunk.
const streamChunks = 103

func typicalStream(b testing.TB) []byte {
	enc := eventstream.NewEncoder()
	var buf bytes.Buffer
	encodeMessage(b, enc, &buf, streamMessage{Event: "messageStart", Payload: json.RawMessage(`{"p":"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL","role":"assistant"}`)})
	words := []string{"the", "quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog", "while", "the", "gateway", "relays", "every", "token"}
	for i := range 100 {
		encodeMessage(b, enc, &buf, streamMessage{Event: "contentBlockDelta",
			Payload: json.RawMessage(fmt.Sprintf(`{"contentBlockIndex":0,"delta":{"text":" %s"},"p":"abcdefghijklmnopq"}`, words[i%len(words)]))})
	}
	encodeMessage(b, enc, &buf, streamMessage{Event: "contentBlockStop", Payload: json.RawMessage(`{"contentBlockIndex":0,"p":"abcdefghijklmnopqrstuvwxyzAB"}`)})
	encodeMessage(b, enc, &buf, streamMessage{Event: "messageStop", Payload: json.RawMessage(`{"p":"abcdefghijklm","stopReason":"end_turn"}`)})
	encodeMessage(b, enc, &buf, streamMessage{Event: "metadata", Payload: json.RawMessage(`{"metrics":{"latencyMs":1804},"p":"abcdefghijklmnopqrstuvwxyzABCDEF","usage":{"inputTokens":1843,"outputTokens":100,"totalTokens":1943}}`)})
	return buf.Bytes()
}

// BenchmarkStreamTranslate translates a ConverseStream of 100 text deltas
// into OpenAI chunks, as the proxy does for a client that asked for usage.
func BenchmarkStreamTranslate(b *testing.B) {
	a := bedrock.New()
	stream := typicalStream(b)
	r := bytes.NewReader(stream)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(stream)
		info := provider.StreamInfo{Model: "anthropic.claude-3-5-sonnet-20240620-v1:0"}
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
		if n != streamChunks || info.Usage.TotalTokens != 1943 {
			b.Fatalf("got %d chunks and usage %+v, want %d and 1943 tokens", n, info.Usage, streamChunks)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*streamChunks), "ns/chunk")
}

// TestStreamReadErrors checks how a stream that cannot be read ends: a body
// that fails, a corrupt message, a body cut mid-message.
func TestStreamReadErrors(t *testing.T) {
	var frame bytes.Buffer
	encodeMessage(t, eventstream.NewEncoder(), &frame, streamMessage{Event: "messageStart", Payload: json.RawMessage(`{"role":"assistant"}`)})
	corrupt := bytes.Clone(frame.Bytes())
	corrupt[len(corrupt)-1] ^= 0xff // the message CRC
	tests := []struct {
		name string
		body io.Reader
		code string
	}{
		{"body fails", io.MultiReader(bytes.NewReader(frame.Bytes()[:20]), failing{}), "upstream_stream_failed"},
		{"corrupt CRC", bytes.NewReader(corrupt), "upstream_bad_response"},
		{"cut mid-message", bytes.NewReader(frame.Bytes()[:20]), "upstream_stream_truncated"},
		{"empty body", bytes.NewReader(nil), "upstream_stream_truncated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := bedrock.New().DecodeChatStream(io.NopCloser(tc.body), &provider.StreamInfo{})
			_, err := st.Next()
			var e *apierr.Error
			if !errors.As(err, &e) || e.Code != tc.code {
				t.Errorf("got %v, want code %s", err, tc.code)
			}
			if _, again := st.Next(); again != err {
				t.Errorf("Next after the error: got %v, want the same error", again)
			}
		})
	}
}

type failing struct{}

func (failing) Read([]byte) (int, error) { return 0, errors.New("connection reset by peer") }
