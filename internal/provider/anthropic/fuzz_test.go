package anthropic_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/anthropic"
)

// FuzzDecodeChatStream feeds any bytes to the stream decoder and to the
// native relay: neither panics; every chunk the decoder produces is valid
// JSON; every error is an *apierr.Error; both end within a bounded number of
// calls and stay ended.
func FuzzDecodeChatStream(f *testing.F) {
	for _, glob := range []string{"*/stream.sse", "*/native.sse"} {
		files, _ := filepath.Glob(filepath.Join("testdata", glob))
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b, false)
		}
	}
	for _, s := range []string{
		"",
		"data: {}\n\n",
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		"data: {\"type\":\"content_block_delta\",\"index\":9,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}\n\n",
		"data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":5,\"name\":null}}\n\n",
		"data: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":[1]}}\n\n",
		"data: {\"type\":\"message_start\",\"message\":{\"id\":\"\\u0000\",\"model\":{},\"usage\":{\"input_tokens\":-1}}}\n\n",
		"data: {\"type\":\"error\",\"error\":null}\n\n",
		"data: [DONE]\n\n",
	} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, in []byte, hide bool) {
		info := &provider.StreamInfo{HideUsage: hide}
		st := anthropic.New().DecodeChatStream(io.NopCloser(bytes.NewReader(in)), info)
		end := drain(t, st.Next, len(in)+2, true)
		if _, err := st.Next(); !errors.Is(err, end) && err != end {
			t.Fatalf("Next after the end: got %v, want %v", err, end)
		}
		_ = st.Close()

		ns := anthropic.NativeStream(io.NopCloser(bytes.NewReader(in)), &provider.StreamInfo{})
		drain(t, ns.Next, len(in)+2, false)
		_ = ns.Close()
	})
}

func drain(t *testing.T, next func() (ev sseEvent, err error), limit int, chunks bool) error {
	t.Helper()
	for range limit {
		ev, err := next()
		if err != nil {
			var e *apierr.Error
			if !errors.Is(err, io.EOF) && !errors.As(err, &e) {
				t.Fatalf("got error %T %v, want io.EOF or an *apierr.Error", err, err)
			}
			return err
		}
		if chunks && !json.Valid(ev.Data) {
			t.Fatalf("chunk is not valid JSON: %q", ev.Data)
		}
	}
	t.Fatalf("the stream did not end within %d calls", limit)
	return nil
}

// FuzzFastTextDelta checks the stream's fast path against the decoder: what
// it accepts is a text delta whose text, decoded, is the decoder's.
func FuzzFastTextDelta(f *testing.F) {
	for _, s := range []string{
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
		`{"type":"content_block_delta","index":12,"delta":{"type":"text_delta","text":"a \"q\" \\ \u00e9"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"},"x":{"text":"b"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a","text":"b"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		raw, ok := anthropic.FastTextDelta(data)
		if !ok {
			return
		}
		var fast string
		if err := json.Unmarshal(raw, &fast); err != nil {
			t.Fatalf("%q: fast path text %q is not a JSON string: %v", data, raw, err)
		}
		var ev struct {
			Type  string `json:"type"`
			Delta struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"delta"`
		}
		if err := json.Unmarshal(data, &ev); err != nil {
			t.Fatalf("%q: the fast path accepted what the decoder refuses: %v", data, err)
		}
		if ev.Type != "content_block_delta" || ev.Delta.Type != "text_delta" || ev.Delta.Text != fast {
			t.Fatalf("%q: fast path read %q, the decoder %+v", data, fast, ev)
		}
	})
}
